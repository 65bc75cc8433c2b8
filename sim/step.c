/*
 * step.c - the sim_step value: one decision of a provider for one attempt.
 *
 * Steps are built by the Lua engine (sim/lua_steps.c) and carried out by the
 * server. This file only knows their memory: defaults, release, names.
 */
#include <stdlib.h>

#include "sim/sim_int.h"

static const char *const step_kind_names[] = {
  [SIM_STEP_CHAT] = "chat",         [SIM_STEP_STREAM] = "stream",
  [SIM_STEP_FAIL] = "fail",         [SIM_STEP_HANG] = "hang",
  [SIM_STEP_DELAY] = "delay",       [SIM_STEP_DROP] = "drop",
  [SIM_STEP_RESET] = "reset",       [SIM_STEP_TRUNCATE] = "truncate",
  [SIM_STEP_GARBAGE] = "garbage",   [SIM_STEP_EFFECT] = "effect",
  [SIM_STEP_H2] = "h2",             [SIM_STEP_UPSTREAM] = "upstream",
};

/*
 * A step of `kind` with every field at its default: usage -1 (estimate),
 * drop/stall/error_after -1 (never), stall -1 (forever), apply 1, cut_at
 * -1 (upstream: the whole answer). Returns
 * NULL when out of memory. Owned by the caller (release with sim__step_free).
 */
sim_step *sim__step_new(sim_step_kind kind) {
  sim_step *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->kind = kind;
  s->usage_in = -1;
  s->usage_out = -1;
  s->drop_after = -1;
  s->stall_after = -1;
  s->stall = -1;
  s->error_after = -1;
  s->apply = 1;
  s->cut_at = -1;
  return s;
}

/* Releases a step, its strings, its headers and its wrapped steps. */
void sim__step_free(sim_step *s) {
  while (s != NULL) {
    sim_step *next = s->next;
    if (s->content_blob != NULL) sim__blob_unref(s->content_blob);
    else if (!s->content_inline) free(s->content);
    free(s->model);
    if (s->chunks_blob != NULL) sim__blob_unref(s->chunks_blob);
    else
      for (int i = 0; i < s->nchunks; i++) free(s->chunks[i]);
    free(s->chunks);
    free(s->code);
    free(s->type);
    if (s->message_blob != NULL) sim__blob_unref(s->message_blob);
    else free(s->message);
    free(s->retry_after_raw);
    for (int i = 0; i < s->nheaders; i++) {
      free(s->headers[i].name);
      free(s->headers[i].value);
    }
    free(s->headers);
    for (int i = 0; i < s->ntool_calls; i++) {
      free(s->tool_calls[i].id);
      free(s->tool_calls[i].name);
      free(s->tool_calls[i].arguments);
    }
    free(s->tool_calls);
    if (s->body_blob != NULL) sim__blob_unref(s->body_blob);
    else free(s->body);
    free(s);
    s = next; /* wrapped steps form a chain: free it without recursion */
  }
}

/* The kind's name as scenarios spell it; "?" for a value out of range. */
const char *sim__step_kind_name(sim_step_kind kind) {
  if ((unsigned)kind >= sizeof step_kind_names / sizeof step_kind_names[0])
    return "?";
  return step_kind_names[kind];
}

/* sim__dialect_name lives in dialect.c, with the other dialect tables. */
