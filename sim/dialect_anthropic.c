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

/* {"type":"message", content: text and tool_use blocks, stop_reason, usage}. */
char *sim__anthropic_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "type", "message");
  cJSON_AddStringToObject(o, "role", "assistant");
  cJSON_AddStringToObject(o, "model", model);
  cJSON *content = cJSON_AddArrayToObject(o, "content");
  if (text != NULL) {
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", text);
    cJSON_AddItemToArray(content, block);
  }
  for (int i = 0; s != NULL && i < s->ntool_calls; i++) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", "tool_use");
    cJSON_AddStringToObject(b, "id", s->tool_calls[i].id);
    cJSON_AddStringToObject(b, "name", s->tool_calls[i].name);
    cJSON_AddItemToObject(b, "input", sim__tool_args_json(&s->tool_calls[i]));
    cJSON_AddItemToArray(content, b);
  }
  cJSON_AddStringToObject(o, "stop_reason", stop_reason(s));
  cJSON_AddNullToObject(o, "stop_sequence");
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "input_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "output_tokens", tokens_out);
  return sim__print_free(o);
}

static cJSON *error_object(int status, const char *type, const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  const char *t = type ? type : def ? def->an_type
                                    : status >= 500 ? "api_error" : "invalid_request_error";
  cJSON_AddStringToObject(o, "type", t);
  cJSON_AddStringToObject(o, "message", sim__err_message(status, message));
  return o;
}

/* {"type":"error","error":{"type":..., "message":...}}. */
char *sim__anthropic_error_body(int status, const char *type, const char *message) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "type", "error");
  cJSON_AddItemToObject(o, "error", error_object(status, type, message));
  return sim__print_free(o);
}

static char *block_start(int index, cJSON *block) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "content_block_start");
  cJSON_AddNumberToObject(o, "index", index);
  cJSON_AddItemToObject(o, "content_block", block);
  return sim__frame("content_block_start", o);
}

static char *block_stop(int index) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "content_block_stop");
  cJSON_AddNumberToObject(o, "index", index);
  return sim__frame("content_block_stop", o);
}

static char *block_delta(int index, const char *dtype, const char *field, const char *v) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "type", "content_block_delta");
  cJSON_AddNumberToObject(d, "index", index);
  cJSON *delta = cJSON_AddObjectToObject(d, "delta");
  cJSON_AddStringToObject(delta, "type", dtype);
  cJSON_AddStringToObject(delta, field, v);
  return sim__frame("content_block_delta", d);
}

/* The message stream. A text block (when there is text, or nothing else),
   then one tool_use block per call whose input streams as input_json_delta;
   each block's stop rides at the head of the next block's first chunk, so
   a stream cut inside a block never closes it. */
int sim__anthropic_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out) {
  cJSON *start = cJSON_CreateObject();
  cJSON_AddStringToObject(start, "type", "message_start");
  cJSON *msg = cJSON_AddObjectToObject(start, "message");
  cJSON_AddStringToObject(msg, "id", id);
  cJSON_AddStringToObject(msg, "type", "message");
  cJSON_AddStringToObject(msg, "role", "assistant");
  cJSON_AddStringToObject(msg, "model", model);
  cJSON_AddArrayToObject(msg, "content");
  cJSON_AddNullToObject(msg, "stop_reason");
  cJSON_AddNullToObject(msg, "stop_sequence");
  cJSON *usage = cJSON_AddObjectToObject(msg, "usage");
  cJSON_AddNumberToObject(usage, "input_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "output_tokens", 1);
  cJSON *ping = cJSON_CreateObject();
  cJSON_AddStringToObject(ping, "type", "ping");

  int text_block = ntexts > 0 || s->ntool_calls == 0;
  out->pre = sim__frame("message_start", start);
  if (text_block) {
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", "");
    out->pre = sim__concat2(out->pre, block_start(0, block));
  }
  out->pre = sim__concat2(out->pre, sim__frame("ping", ping));
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++)
    rc = sim__sse_push(out, block_delta(0, "text_delta", "text", texts[i]));
  int index = text_block ? 1 : 0;
  char *carry = text_block ? block_stop(0) : strdup("");
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", "tool_use");
    cJSON_AddStringToObject(b, "id", tc->id);
    cJSON_AddStringToObject(b, "name", tc->name);
    cJSON_AddObjectToObject(b, "input");
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++) {
      char *f = block_delta(index, "input_json_delta", "partial_json", pieces[i]);
      if (i == 0) {
        f = sim__concat2(sim__concat2(carry, block_start(index, b)), f);
        b = NULL;
        carry = NULL;
      }
      rc = sim__sse_push(out, f);
    }
    cJSON_Delete(b);
    sim__free_strv(pieces, np);
    if (rc == SIM_OK) carry = block_stop(index);
  }
  if (rc != SIM_OK) {
    free(carry);
    return rc;
  }
  cJSON *mdelta = cJSON_CreateObject();
  cJSON_AddStringToObject(mdelta, "type", "message_delta");
  cJSON *dd = cJSON_AddObjectToObject(mdelta, "delta");
  cJSON_AddStringToObject(dd, "stop_reason", stop_reason(s));
  cJSON_AddNullToObject(dd, "stop_sequence");
  cJSON *u = cJSON_AddObjectToObject(mdelta, "usage");
  cJSON_AddNumberToObject(u, "output_tokens", tokens_out);
  out->tail = sim__concat2(carry, sim__frame("message_delta", mdelta));
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "type", "message_stop");
  out->marker = sim__frame("message_stop", stop);
  cJSON *err = cJSON_CreateObject();
  cJSON_AddStringToObject(err, "type", "error");
  cJSON_AddItemToObject(err, "error", error_object(s->status ? s->status : 529, s->type,
                                                   s->message));
  out->error = sim__frame("error", err);
  return SIM_OK;
}
