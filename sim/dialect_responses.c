/*
 * dialect_responses.c - the OpenAI Responses API (POST /v1/responses): the
 * response object with message and function_call output items, and its
 * event stream, every event numbered by sequence_number, ending in
 * response.completed, response.incomplete or (error_after) an error event
 * and response.failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/dialect_int.h"

static const char *incomplete_reason(const sim_step *s) {
  if (s == NULL) return NULL;
  if (s->finish == SIM_FINISH_LENGTH) return "max_output_tokens";
  if (s->finish == SIM_FINISH_FILTER) return "content_filter";
  return NULL;
}

static void item_id(char *out, size_t cap, const char *kind, const char *id, int i) {
  snprintf(out, cap, "%s_%s_%d", kind, id, i);
}

static cJSON *message_item(const char *id, const char *text, int done) {
  char mid[96];
  item_id(mid, sizeof mid, "msg", id, 0);
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "id", mid);
  cJSON_AddStringToObject(m, "type", "message");
  cJSON_AddStringToObject(m, "status", done ? "completed" : "in_progress");
  cJSON_AddStringToObject(m, "role", "assistant");
  cJSON *content = cJSON_AddArrayToObject(m, "content");
  if (done) {
    cJSON *part = cJSON_CreateObject();
    cJSON_AddStringToObject(part, "type", "output_text");
    cJSON_AddStringToObject(part, "text", text ? text : "");
    cJSON_AddArrayToObject(part, "annotations");
    cJSON_AddArrayToObject(part, "logprobs");
    cJSON_AddItemToArray(content, part);
  }
  return m;
}

static cJSON *call_item(const char *id, int i, const sim_tool_call *tc, int done) {
  char fid[96];
  item_id(fid, sizeof fid, "fc", id, i);
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "id", fid);
  cJSON_AddStringToObject(f, "type", "function_call");
  cJSON_AddStringToObject(f, "status", done ? "completed" : "in_progress");
  cJSON_AddStringToObject(f, "call_id", tc->id);
  cJSON_AddStringToObject(f, "name", tc->name);
  cJSON_AddStringToObject(f, "arguments", done && tc->arguments ? tc->arguments : "");
  return f;
}

/* The response object; status "completed", "in_progress", "incomplete" or
   "failed"; output NULL = empty; usage only once it is known. */
static cJSON *response_obj(const char *id, const char *model, const char *status,
                           const char *reason, cJSON *output, int tokens_in,
                           int tokens_out, int with_usage, cJSON *error) {
  cJSON *r = cJSON_CreateObject();
  char rid[64];
  snprintf(rid, sizeof rid, "resp_%s", id);
  cJSON_AddStringToObject(r, "id", rid);
  cJSON_AddStringToObject(r, "object", "response");
  cJSON_AddNumberToObject(r, "created_at", (double)time(NULL));
  cJSON_AddStringToObject(r, "status", status);
  if (error) cJSON_AddItemToObject(r, "error", error);
  else cJSON_AddNullToObject(r, "error");
  if (reason) {
    cJSON *d = cJSON_AddObjectToObject(r, "incomplete_details");
    cJSON_AddStringToObject(d, "reason", reason);
  } else {
    cJSON_AddNullToObject(r, "incomplete_details");
  }
  cJSON_AddNullToObject(r, "instructions");
  cJSON_AddNullToObject(r, "max_output_tokens");
  cJSON_AddStringToObject(r, "model", model);
  cJSON_AddItemToObject(r, "output", output ? output : cJSON_CreateArray());
  cJSON_AddBoolToObject(r, "parallel_tool_calls", 1);
  cJSON_AddNullToObject(r, "previous_response_id");
  cJSON_AddStringToObject(r, "service_tier", "default");
  cJSON_AddBoolToObject(r, "store", 1);
  cJSON_AddNumberToObject(r, "temperature", 1);
  cJSON_AddStringToObject(r, "tool_choice", "auto");
  cJSON_AddArrayToObject(r, "tools");
  cJSON_AddNumberToObject(r, "top_p", 1);
  cJSON_AddStringToObject(r, "truncation", "disabled");
  if (with_usage) {
    cJSON *u = cJSON_AddObjectToObject(r, "usage");
    cJSON_AddNumberToObject(u, "input_tokens", tokens_in);
    cJSON_AddItemToObject(u, "input_tokens_details", cJSON_CreateObject());
    cJSON_AddNumberToObject(cJSON_GetObjectItem(u, "input_tokens_details"), "cached_tokens", 0);
    cJSON_AddNumberToObject(u, "output_tokens", tokens_out);
    cJSON_AddItemToObject(u, "output_tokens_details", cJSON_CreateObject());
    cJSON_AddNumberToObject(cJSON_GetObjectItem(u, "output_tokens_details"), "reasoning_tokens",
                            0);
    cJSON_AddNumberToObject(u, "total_tokens", tokens_in + tokens_out);
  } else {
    cJSON_AddNullToObject(r, "usage");
  }
  cJSON_AddNullToObject(r, "user");
  cJSON_AddObjectToObject(r, "metadata");
  return r;
}

static cJSON *full_output(const sim_step *s, const char *id, const char *text) {
  cJSON *out = cJSON_CreateArray();
  int ntools = s ? s->ntool_calls : 0;
  if (text != NULL || ntools == 0) cJSON_AddItemToArray(out, message_item(id, text, 1));
  for (int i = 0; i < ntools; i++) cJSON_AddItemToArray(out, call_item(id, i, &s->tool_calls[i], 1));
  return out;
}

/* The response object of a finished (or incomplete) answer. */
char *sim__responses_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  const char *reason = incomplete_reason(s);
  return sim__print_free(response_obj(id, model, reason ? "incomplete" : "completed", reason,
                                      full_output(s, id, text), tokens_in, tokens_out, 1,
                                      NULL));
}

/* Numbers events in the order they are built, which is the wire order. */
typedef struct seqb {
  int seq;
} seqb;

static char *ev(seqb *b, const char *type, cJSON *data) {
  cJSON_AddStringToObject(data, "type", type);
  cJSON_AddNumberToObject(data, "sequence_number", b->seq++);
  return sim__frame(type, data);
}

static char *ev_response(seqb *b, const char *type, cJSON *resp) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddItemToObject(d, "response", resp);
  return ev(b, type, d);
}

static char *ev_item(seqb *b, const char *type, int index, cJSON *item) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "output_index", index);
  cJSON_AddItemToObject(d, "item", item);
  return ev(b, type, d);
}

static cJSON *text_part(const char *text) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "type", "output_text");
  cJSON_AddStringToObject(p, "text", text);
  cJSON_AddArrayToObject(p, "annotations");
  cJSON_AddArrayToObject(p, "logprobs");
  return p;
}

static cJSON *part_ev(const char *mid, const char *text, int with_part) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "item_id", mid);
  cJSON_AddNumberToObject(d, "output_index", 0);
  cJSON_AddNumberToObject(d, "content_index", 0);
  if (with_part) cJSON_AddItemToObject(d, "part", text_part(text));
  return d;
}

static char *join_texts(char **texts, int ntexts) {
  size_t len = 0;
  for (int i = 0; i < ntexts; i++) len += strlen(texts[i]);
  char *t = malloc(len + 1);
  if (t == NULL) return NULL;
  t[0] = '\0';
  for (int i = 0; i < ntexts; i++) strcat(t, texts[i]);
  return t;
}

/* The error ending: an `error` event, then response.failed. */
static char *error_frames(const sim_step *s, const char *id, const char *model, int seq) {
  seqb b = {seq};
  int status = s->status ? s->status : 500;
  const sim__err_default *def = sim__err_default_for(status);
  const char *code = s->code ? s->code : def && def->oa_code ? def->oa_code : "server_error";
  const char *msg = sim__err_message(status, s->message);
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", msg);
  cJSON_AddNullToObject(e, "param");
  char *f = ev(&b, "error", e);
  cJSON *err = cJSON_CreateObject();
  cJSON_AddStringToObject(err, "code", code);
  cJSON_AddStringToObject(err, "message", msg);
  return sim__concat2(f, ev_response(&b, "response.failed",
                                     response_obj(id, model, "failed", NULL, NULL, 0, 0, 0,
                                                  err)));
}

/* The event stream; see the file comment. Each item's closing events ride
   at the head of the next item's first chunk (or the tail), so a stream cut
   inside an item never closes it. */
int sim__responses_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out) {
  seqb b = {0};
  int err_seq = -1;
  int text_item = ntexts > 0 || s->ntool_calls == 0;
  char mid[96];
  item_id(mid, sizeof mid, "msg", id, 0);
  out->pre = sim__concat2(
      ev_response(&b, "response.created",
                  response_obj(id, model, "in_progress", NULL, NULL, 0, 0, 0, NULL)),
      ev_response(&b, "response.in_progress",
                  response_obj(id, model, "in_progress", NULL, NULL, 0, 0, 0, NULL)));
  if (text_item) {
    out->pre = sim__concat2(out->pre, ev_item(&b, "response.output_item.added", 0,
                                              message_item(id, NULL, 0)));
    out->pre = sim__concat2(out->pre, ev(&b, "response.content_part.added",
                                         part_ev(mid, "", 1)));
  }
  int rc = SIM_OK, pushed = 0;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++, pushed++) {
    if (pushed == s->error_after) err_seq = b.seq;
    cJSON *d = part_ev(mid, NULL, 0);
    cJSON_AddStringToObject(d, "delta", texts[i]);
    cJSON_AddArrayToObject(d, "logprobs");
    rc = sim__sse_push(out, ev(&b, "response.output_text.delta", d));
  }
  char *text = join_texts(texts, ntexts);
  if (text == NULL) return SIM_ENOMEM;
  char *carry = strdup("");
  int carry_seq = b.seq; /* the first number of the carried events */
  if (text_item) {
    cJSON *done = part_ev(mid, NULL, 0);
    cJSON_AddStringToObject(done, "text", text);
    cJSON_AddArrayToObject(done, "logprobs");
    carry = sim__concat2(carry, ev(&b, "response.output_text.done", done));
    carry = sim__concat2(carry, ev(&b, "response.content_part.done", part_ev(mid, text, 1)));
    carry = sim__concat2(carry, ev_item(&b, "response.output_item.done", 0,
                                        message_item(id, text, 1)));
  }
  int index = text_item ? 1 : 0;
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    char fid[96];
    item_id(fid, sizeof fid, "fc", id, t);
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++, pushed++) {
      if (pushed == s->error_after) err_seq = i == 0 ? carry_seq : b.seq;
      char *f = NULL;
      if (i == 0) {
        f = sim__concat2(carry, ev_item(&b, "response.output_item.added", index,
                                        call_item(id, t, tc, 0)));
        carry = NULL;
      } else {
        f = strdup("");
      }
      cJSON *d = cJSON_CreateObject();
      cJSON_AddStringToObject(d, "item_id", fid);
      cJSON_AddNumberToObject(d, "output_index", index);
      cJSON_AddStringToObject(d, "delta", pieces[i]);
      f = sim__concat2(f, ev(&b, "response.function_call_arguments.delta", d));
      rc = sim__sse_push(out, f);
    }
    sim__free_strv(pieces, np);
    if (rc != SIM_OK) break;
    carry_seq = b.seq;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "item_id", fid);
    cJSON_AddNumberToObject(d, "output_index", index);
    cJSON_AddStringToObject(d, "arguments", tc->arguments ? tc->arguments : "");
    carry = sim__concat2(ev(&b, "response.function_call_arguments.done", d),
                         ev_item(&b, "response.output_item.done", index,
                                 call_item(id, t, tc, 1)));
  }
  if (rc != SIM_OK) {
    free(carry);
    free(text);
    return rc;
  }
  if (err_seq < 0) err_seq = carry_seq; /* after every chunk: the tail was not sent */
  out->tail = carry;
  const char *reason = incomplete_reason(s);
  out->marker = ev_response(&b, reason ? "response.incomplete" : "response.completed",
                            response_obj(id, model, reason ? "incomplete" : "completed", reason,
                                         full_output(s, id, ntexts ? text : NULL), tokens_in,
                                         tokens_out, 1, NULL));
  out->error = error_frames(s, id, model, err_seq);
  free(text);
  return SIM_OK;
}
