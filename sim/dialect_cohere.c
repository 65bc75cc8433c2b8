/*
 * dialect_cohere.c - Cohere's v2 Chat API (POST /v2/chat): the message with
 * text content or tool calls and finish_reason (COMPLETE, MAX_TOKENS,
 * TOOL_CALL), errors as {"id", "message"}, and the typed SSE stream
 * (message-start, content-start/delta/end, tool-call-start/delta/end,
 * message-end with finish_reason and usage; an error ends the stream as a
 * message-end with finish_reason ERROR and its error).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dialect_int.h"

static const char *finish_reason(const sim_step *s) {
  if (s != NULL && s->finish == SIM_FINISH_LENGTH) return "MAX_TOKENS";
  if (s != NULL && s->finish == SIM_FINISH_FILTER) return "ERROR";
  if (s != NULL && s->ntool_calls > 0) return "TOOL_CALL";
  return "COMPLETE";
}

/* "usage":{billed_units, tokens}, in an object w has open. */
static void usage(sim_jw *w, int tokens_in, int tokens_out) {
  static const char *const keys[] = {"billed_units", "tokens"};
  sim__jw_key(w, "usage");
  sim__jw_open(w, '{');
  for (int k = 0; k < 2; k++) {
    sim__jw_key(w, keys[k]);
    sim__jw_open(w, '{');
    sim__jw_knum(w, "input_tokens", tokens_in);
    sim__jw_knum(w, "output_tokens", tokens_out);
    sim__jw_close(w, '}');
  }
  sim__jw_close(w, '}');
}

/* A tool call {id, type, function:{name, arguments}}; args NULL writes the
   arguments as given (a string, as Cohere sends them), else args. */
static void tool_call(sim_jw *w, const sim_tool_call *tc, const char *args) {
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "id", tc->id);
  sim__jw_kstr(w, "type", "function");
  sim__jw_key(w, "function");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "name", tc->name);
  sim__jw_kstr(w, "arguments", args ? args : tc->arguments ? tc->arguments : "");
  sim__jw_close(w, '}');
  sim__jw_close(w, '}');
}

/* The answer whole: {id, finish_reason, message:{role, content | tool_plan
   and tool_calls}, usage}. Owned by the caller. */
char *sim__cohere_body(const sim_step *s, const char *id, const char *text, int tokens_in,
                       int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  int ntools = s ? s->ntool_calls : 0;
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "id", id);
  sim__jw_kstr(&w, "finish_reason", finish_reason(s));
  sim__jw_key(&w, "message");
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "role", "assistant");
  if (ntools > 0) {
    if (text != NULL) sim__jw_kstr(&w, "tool_plan", text);
    sim__jw_key(&w, "tool_calls");
    sim__jw_open(&w, '[');
    for (int i = 0; i < ntools; i++) tool_call(&w, &s->tool_calls[i], NULL);
    sim__jw_close(&w, ']');
  } else {
    sim__jw_key(&w, "content");
    sim__jw_open(&w, '[');
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "type", "text");
    sim__jw_kstr(&w, "text", text ? text : "");
    sim__jw_close(&w, '}');
    sim__jw_close(&w, ']');
  }
  sim__jw_close(&w, '}');
  usage(&w, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* {"id":"...","message":"..."}: the body of Cohere's errors (id NULL:
   {"message":"..."} alone). */
char *sim__cohere_error_body(int status, const char *id, const char *message) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  if (id != NULL) sim__jw_kstr(&w, "id", id);
  sim__jw_kstr(&w, "message", sim__err_message(status, message));
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* Opens one typed event: "event: TYPE\ndata: {"type":"TYPE". */
static void event_open(sim_jw *w, const char *type) {
  sim__sse_open(w, type);
  sim__jw_kstr(w, "type", type);
}

/* {"type":..., "index":i} and nothing else: the *-end events. */
static void event_end(sim_jw *w, const char *type, int index) {
  event_open(w, type);
  sim__jw_knum(w, "index", index);
  sim__sse_close(w);
}

/* "delta":{"message":{KEY: ... — the caller writes KEY's value, then
   delta_close. */
static void delta_open(sim_jw *w, const char *key) {
  sim__jw_key(w, "delta");
  sim__jw_open(w, '{');
  sim__jw_key(w, "message");
  sim__jw_open(w, '{');
  sim__jw_key(w, key);
}

static void delta_close(sim_jw *w) {
  sim__jw_close(w, '}');
  sim__jw_close(w, '}');
}

static void content_delta(sim_jw *w, const char *piece) {
  event_open(w, "content-delta");
  sim__jw_knum(w, "index", 0);
  delta_open(w, "content");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "text", piece);
  sim__jw_close(w, '}');
  delta_close(w);
  sim__sse_close(w);
}

/* A piece of the tool plan: the text of an answer that calls tools. */
static void plan_delta(sim_jw *w, const char *piece) {
  event_open(w, "tool-plan-delta");
  delta_open(w, "tool_plan");
  sim__jw_str(w, piece);
  delta_close(w);
  sim__sse_close(w);
}

/* The message-end event: finish_reason, then error (NULL: none), usage. */
static void message_end(sim_jw *w, const char *finish, const char *error, int tokens_in,
                        int tokens_out) {
  event_open(w, "message-end");
  sim__jw_key(w, "delta");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "finish_reason", finish);
  if (error != NULL) sim__jw_kstr(w, "error", error);
  usage(w, tokens_in, tokens_out);
  sim__jw_close(w, '}');
  sim__sse_close(w);
}

/* The typed stream. message-start and content-start (when there is text
   and no tool call, or nothing at all) lead; one content-delta per text
   piece (tool-plan-delta when the answer calls tools: its text is the
   plan, as the whole message's tool_plan); each tool call
   a tool-call-start then its arguments in 8-byte tool-call-deltas; a
   block's -end event rides at the head of the next block's first chunk (a
   stream cut inside a block never closes it); message-end is the marker. */
int sim__cohere_sse(const sim_step *s, const char *id, int tokens_in, int tokens_out,
                    char **texts, int ntexts, sim_sse *out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  event_open(&w, "message-start");
  sim__jw_kstr(&w, "id", id);
  delta_open(&w, "role");
  sim__jw_str(&w, "assistant");
  delta_close(&w);
  sim__sse_close(&w);
  int text_block = s->ntool_calls == 0;
  if (text_block) {
    event_open(&w, "content-start");
    sim__jw_knum(&w, "index", 0);
    delta_open(&w, "content");
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "type", "text");
    sim__jw_kstr(&w, "text", "");
    sim__jw_close(&w, '}');
    delta_close(&w);
    sim__sse_close(&w);
  }
  out->pre = sim__jw_take(&w);
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    sim__jw_init(&w, SIM__BODY_MAX);
    if (text_block) content_delta(&w, texts[i]);
    else plan_delta(&w, texts[i]);
    rc = sim__sse_push(out, sim__jw_take(&w));
  }
  const char *carry = text_block ? "content-end" : NULL; /* the block the next chunk ends */
  int carry_index = 0;
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++) {
      sim__jw_init(&w, SIM__BODY_MAX);
      if (i == 0) {
        if (carry != NULL) event_end(&w, carry, carry_index);
        event_open(&w, "tool-call-start");
        sim__jw_knum(&w, "index", t);
        delta_open(&w, "tool_calls");
        tool_call(&w, tc, "");
        delta_close(&w);
        sim__sse_close(&w);
      }
      event_open(&w, "tool-call-delta");
      sim__jw_knum(&w, "index", t);
      delta_open(&w, "tool_calls");
      sim__jw_open(&w, '{');
      sim__jw_key(&w, "function");
      sim__jw_open(&w, '{');
      sim__jw_kstr(&w, "arguments", pieces[i]);
      sim__jw_close(&w, '}');
      sim__jw_close(&w, '}');
      delta_close(&w);
      sim__sse_close(&w);
      rc = sim__sse_push(out, sim__jw_take(&w));
    }
    sim__free_strv(pieces, np);
    carry = "tool-call-end";
    carry_index = t;
  }
  if (rc != SIM_OK) return rc;
  sim__jw_init(&w, SIM__BODY_MAX);
  if (carry != NULL) event_end(&w, carry, carry_index);
  out->tail = sim__jw_take(&w);
  sim__jw_init(&w, SIM__BODY_MAX);
  message_end(&w, finish_reason(s), NULL, tokens_in, tokens_out);
  out->marker = sim__jw_take(&w);
  sim__jw_init(&w, SIM__BODY_MAX);
  message_end(&w, "ERROR", sim__err_message(s->status ? s->status : 500, s->message),
              tokens_in, tokens_out);
  out->error = sim__jw_take(&w);
  return SIM_OK;
}
