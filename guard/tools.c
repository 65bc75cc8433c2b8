/*
 * tools.c - running the tool calls of an answered turn: each checked
 * (whole, offered, arguments one JSON object) and executed once through the
 * effect endpoint named after the tool, keyed by its call id.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* Why a tool call must not run, or NULL when it may. */
static const char *refusal(const guard_chat_request *req, const guard_tool_call *t) {
  if (t->partial) return "from a failed attempt";
  if (t->too_long) return "arguments too long";
  int offered = 0;
  for (int i = 0; i < req->ntools; i++)
    if (strcmp(req->tools[i], t->name) == 0) offered = 1;
  if (!offered) return "tool not offered";
  cJSON *j = cJSON_Parse(t->arguments);
  int ok = cJSON_IsObject(j);
  cJSON_Delete(j);
  return ok ? NULL : "arguments not a JSON object";
}

/* Runs a turn's tool calls; see guard.h. */
int guard_run_tools(guard *g, const guard_chat_request *req, const guard_result *turn,
                    int *ran, int *refused, char *why, size_t whylen) {
  *ran = 0;
  *refused = 0;
  if (why && whylen) why[0] = '\0';
  if (g == NULL || req == NULL || turn == NULL) return GUARD_EINVAL;
  int trust = (g->pol.flags & GUARD_TRUST_TOOLS) != 0;
  for (int i = 0; i < turn->ntool_calls; i++) {
    const guard_tool_call *t = &turn->tool_calls[i];
    const char *no = trust ? NULL : refusal(req, t);
    if (t->name[0] == '\0') no = "no name";
    if (no != NULL) {
      if (why && whylen && (*refused)++ == 0)
        snprintf(why, whylen, "%s %s: %s", t->name, t->id, no);
      continue;
    }
    guard_result *r = NULL;
    /* Keyed by the call id, so a repeat is replayed; a trusting client
       keys nothing of its own (guard_effect's flags decide). */
    int rc = guard_effect(g, t->name, t->arguments[0] ? t->arguments : "{}",
                          trust ? NULL : t->id, &r);
    guard_result_free(r);
    if (rc == GUARD_ENOMEM) return rc;
    (*ran)++;
  }
  return GUARD_OK;
}
