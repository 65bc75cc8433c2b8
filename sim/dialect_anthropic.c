/*
 * dialect_anthropic.c - Anthropic messages: the message body with text and
 * tool_use blocks, the error body, and the event stream (message_start,
 * content blocks with text_delta and input_json_delta, message_delta,
 * message_stop).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dialect_int.h"

static const char *stop_reason(const sim_step *s) {
  if (s == NULL) return "end_turn";
  if (s->finish == SIM_FINISH_LENGTH) return "max_tokens";
  if (s->finish == SIM_FINISH_FILTER) return "refusal";
  return s->ntool_calls > 0 ? "tool_use" : "end_turn";
}

/* The fields id to model of a message, in an object w has open. */
static void message_head(sim_jw *w, const char *id, const char *model) {
  sim__jw_kstr(w, "id", id);
  sim__jw_kstr(w, "type", "message");
  sim__jw_kstr(w, "role", "assistant");
  sim__jw_kstr(w, "model", model);
}

/* {"type":"message", content: text and tool_use blocks, stop_reason, usage}. */
char *sim__anthropic_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  message_head(&w, id, model);
  sim__jw_key(&w, "content");
  sim__jw_open(&w, '[');
  if (text != NULL) {
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "type", "text");
    sim__jw_kstr(&w, "text", text);
    sim__jw_close(&w, '}');
  }
  for (int i = 0; s != NULL && i < s->ntool_calls; i++) {
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "type", "tool_use");
    sim__jw_kstr(&w, "id", s->tool_calls[i].id);
    sim__jw_kstr(&w, "name", s->tool_calls[i].name);
    sim__put_args(&w, "input", &s->tool_calls[i]);
    sim__jw_close(&w, '}');
  }
  sim__jw_close(&w, ']');
  sim__jw_kstr(&w, "stop_reason", stop_reason(s));
  sim__jw_knull(&w, "stop_sequence");
  sim__jw_key(&w, "usage");
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "input_tokens", tokens_in);
  sim__jw_knum(&w, "output_tokens", tokens_out);
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* "type":"error","error":{"type":..., "message":...}, the fields of the
   error body and of the stream's error event, in an object w has open. */
static void error_fields(sim_jw *w, int status, const char *type, const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  const char *t = type ? type : def ? def->an_type
                                    : status >= 500 ? "api_error" : "invalid_request_error";
  sim__jw_kstr(w, "type", "error");
  sim__jw_key(w, "error");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "type", t);
  sim__jw_kstr(w, "message", sim__err_message(status, message));
  sim__jw_close(w, '}');
}

/* {"type":"error","error":{"type":..., "message":...}}. */
char *sim__anthropic_error_body(int status, const char *type, const char *message) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  error_fields(&w, status, type, message);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* Opens event NAME in w: every event's data says its name as "type". */
static void event_open(sim_jw *w, const char *name) {
  sim__sse_open(w, name);
  sim__jw_kstr(w, "type", name);
}

/* An event with no field but its type (ping, message_stop). */
static void event_bare(sim_jw *w, const char *name) {
  event_open(w, name);
  sim__sse_close(w);
}

static void block_stop(sim_jw *w, int index) {
  event_open(w, "content_block_stop");
  sim__jw_knum(w, "index", index);
  sim__sse_close(w);
}

/* content_block_start of the text block, or (tc not NULL) a tool_use
   block whose input streams after it. */
static void block_start(sim_jw *w, int index, const sim_tool_call *tc) {
  event_open(w, "content_block_start");
  sim__jw_knum(w, "index", index);
  sim__jw_key(w, "content_block");
  sim__jw_open(w, '{');
  if (tc == NULL) {
    sim__jw_kstr(w, "type", "text");
    sim__jw_kstr(w, "text", "");
  } else {
    sim__jw_kstr(w, "type", "tool_use");
    sim__jw_kstr(w, "id", tc->id);
    sim__jw_kstr(w, "name", tc->name);
    sim__jw_key(w, "input");
    sim__jw_open(w, '{');
    sim__jw_close(w, '}');
  }
  sim__jw_close(w, '}');
  sim__sse_close(w);
}

static void block_delta(sim_jw *w, int index, const char *dtype, const char *field,
                        const char *v) {
  event_open(w, "content_block_delta");
  sim__jw_knum(w, "index", index);
  sim__jw_key(w, "delta");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "type", dtype);
  sim__jw_kstr(w, field, v);
  sim__jw_close(w, '}');
  sim__sse_close(w);
}

/* The message stream. A text block (when there is text, or nothing else),
   then one tool_use block per call whose input streams as input_json_delta;
   each block's stop rides at the head of the next block's first chunk, so
   a stream cut inside a block never closes it. Each chunk is one writer's
   frames, written field by field. */
int sim__anthropic_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  event_open(&w, "message_start");
  sim__jw_key(&w, "message");
  sim__jw_open(&w, '{');
  message_head(&w, id, model);
  sim__jw_key(&w, "content");
  sim__jw_open(&w, '[');
  sim__jw_close(&w, ']');
  sim__jw_knull(&w, "stop_reason");
  sim__jw_knull(&w, "stop_sequence");
  sim__jw_key(&w, "usage");
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "input_tokens", tokens_in);
  sim__jw_knum(&w, "output_tokens", 1);
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  sim__sse_close(&w);
  int text_block = ntexts > 0 || s->ntool_calls == 0;
  if (text_block) block_start(&w, 0, NULL);
  event_bare(&w, "ping");
  out->pre = sim__jw_take(&w);
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    sim__jw_init(&w, SIM__BODY_MAX);
    block_delta(&w, 0, "text_delta", "text", texts[i]);
    rc = sim__sse_push(out, sim__jw_take(&w));
  }
  int index = text_block ? 1 : 0;
  int carry = text_block ? 0 : -1; /* the block whose stop the next chunk carries */
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++) {
      sim__jw_init(&w, SIM__BODY_MAX);
      if (i == 0) {
        if (carry >= 0) block_stop(&w, carry);
        block_start(&w, index, tc);
      }
      block_delta(&w, index, "input_json_delta", "partial_json", pieces[i]);
      rc = sim__sse_push(out, sim__jw_take(&w));
    }
    sim__free_strv(pieces, np);
    carry = index;
  }
  if (rc != SIM_OK) return rc;
  sim__jw_init(&w, SIM__BODY_MAX);
  if (carry >= 0) block_stop(&w, carry);
  event_open(&w, "message_delta");
  sim__jw_key(&w, "delta");
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "stop_reason", stop_reason(s));
  sim__jw_knull(&w, "stop_sequence");
  sim__jw_close(&w, '}');
  sim__jw_key(&w, "usage");
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "output_tokens", tokens_out);
  sim__jw_close(&w, '}');
  sim__sse_close(&w);
  out->tail = sim__jw_take(&w);
  sim__jw_init(&w, SIM__BODY_MAX);
  event_bare(&w, "message_stop");
  out->marker = sim__jw_take(&w);
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, "error");
  error_fields(&w, s->status ? s->status : 529, s->type, s->message);
  sim__sse_close(&w);
  out->error = sim__jw_take(&w);
  return SIM_OK;
}
