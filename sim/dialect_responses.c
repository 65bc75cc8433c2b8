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

/* The output_text part of a message: {"type":"output_text","text":...}. */
static void put_text_part(sim_jw *w, const char *text) {
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "type", "output_text");
  sim__jw_kstr(w, "text", text);
  sim__jw_key(w, "annotations");
  sim__jw_open(w, '[');
  sim__jw_close(w, ']');
  sim__jw_key(w, "logprobs");
  sim__jw_open(w, '[');
  sim__jw_close(w, ']');
  sim__jw_close(w, '}');
}

/* The message output item; done: completed, with its text part. */
static void put_message_item(sim_jw *w, const char *id, const char *text, int done) {
  char mid[96];
  item_id(mid, sizeof mid, "msg", id, 0);
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "id", mid);
  sim__jw_kstr(w, "type", "message");
  sim__jw_kstr(w, "status", done ? "completed" : "in_progress");
  sim__jw_kstr(w, "role", "assistant");
  sim__jw_key(w, "content");
  sim__jw_open(w, '[');
  if (done) put_text_part(w, text ? text : "");
  sim__jw_close(w, ']');
  sim__jw_close(w, '}');
}

/* Tool call i's function_call item; its arguments only once done. */
static void put_call_item(sim_jw *w, const char *id, int i, const sim_tool_call *tc, int done) {
  char fid[96];
  item_id(fid, sizeof fid, "fc", id, i);
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "id", fid);
  sim__jw_kstr(w, "type", "function_call");
  sim__jw_kstr(w, "status", done ? "completed" : "in_progress");
  sim__jw_kstr(w, "call_id", tc->id);
  sim__jw_kstr(w, "name", tc->name);
  sim__jw_kstr(w, "arguments", done && tc->arguments ? tc->arguments : "");
  sim__jw_close(w, '}');
}

/* What a response object says (put_response). */
typedef struct resp_view {
  const char *status;   /* "completed", "in_progress", "incomplete" or "failed" */
  const char *reason;   /* incomplete_details.reason; NULL = null */
  int full;             /* 1: output is the answer (s, text); 0: [] */
  const sim_step *s;    /* its tool calls (may be NULL) */
  const char *text;     /* its text; NULL = none unless no tool call either */
  int usage;            /* 1: usage of tokens_in and tokens_out; 0: null */
  int tokens_in, tokens_out;
  const char *err_code; /* error {code, message}; NULL = null */
  const char *err_message;
} resp_view;

/* The response object as w's next value. */
static void put_response(sim_jw *w, const char *id, const char *model, const resp_view *v) {
  char rid[64];
  snprintf(rid, sizeof rid, "resp_%s", id);
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "id", rid);
  sim__jw_kstr(w, "object", "response");
  sim__jw_knum(w, "created_at", (double)time(NULL));
  sim__jw_kstr(w, "status", v->status);
  if (v->err_code) {
    sim__jw_key(w, "error");
    sim__jw_open(w, '{');
    sim__jw_kstr(w, "code", v->err_code);
    sim__jw_kstr(w, "message", v->err_message);
    sim__jw_close(w, '}');
  } else {
    sim__jw_knull(w, "error");
  }
  if (v->reason) {
    sim__jw_key(w, "incomplete_details");
    sim__jw_open(w, '{');
    sim__jw_kstr(w, "reason", v->reason);
    sim__jw_close(w, '}');
  } else {
    sim__jw_knull(w, "incomplete_details");
  }
  sim__jw_knull(w, "instructions");
  sim__jw_knull(w, "max_output_tokens");
  sim__jw_kstr(w, "model", model);
  sim__jw_key(w, "output");
  sim__jw_open(w, '[');
  int ntools = v->full && v->s ? v->s->ntool_calls : 0;
  if (v->full && (v->text != NULL || ntools == 0)) put_message_item(w, id, v->text, 1);
  for (int i = 0; i < ntools; i++) put_call_item(w, id, i, &v->s->tool_calls[i], 1);
  sim__jw_close(w, ']');
  sim__jw_kbool(w, "parallel_tool_calls", 1);
  sim__jw_knull(w, "previous_response_id");
  sim__jw_kstr(w, "service_tier", "default");
  sim__jw_kbool(w, "store", 1);
  sim__jw_knum(w, "temperature", 1);
  sim__jw_kstr(w, "tool_choice", "auto");
  sim__jw_key(w, "tools");
  sim__jw_open(w, '[');
  sim__jw_close(w, ']');
  sim__jw_knum(w, "top_p", 1);
  sim__jw_kstr(w, "truncation", "disabled");
  if (v->usage) {
    sim__jw_key(w, "usage");
    sim__jw_open(w, '{');
    sim__jw_knum(w, "input_tokens", v->tokens_in);
    sim__jw_key(w, "input_tokens_details");
    sim__jw_open(w, '{');
    sim__jw_knum(w, "cached_tokens", 0);
    sim__jw_close(w, '}');
    sim__jw_knum(w, "output_tokens", v->tokens_out);
    sim__jw_key(w, "output_tokens_details");
    sim__jw_open(w, '{');
    sim__jw_knum(w, "reasoning_tokens", 0);
    sim__jw_close(w, '}');
    sim__jw_knum(w, "total_tokens", (double)v->tokens_in + v->tokens_out);
    sim__jw_close(w, '}');
  } else {
    sim__jw_knull(w, "usage");
  }
  sim__jw_knull(w, "user");
  sim__jw_key(w, "metadata");
  sim__jw_open(w, '{');
  sim__jw_close(w, '}');
  sim__jw_close(w, '}');
}

/* The response of a finished (or incomplete) answer: s, text. */
static resp_view finished(const sim_step *s, const char *text, int tokens_in, int tokens_out) {
  const char *reason = incomplete_reason(s);
  resp_view v = {.status = reason ? "incomplete" : "completed", .reason = reason, .full = 1,
                 .s = s, .text = text, .usage = 1, .tokens_in = tokens_in,
                 .tokens_out = tokens_out};
  return v;
}

/* The response object of a finished (or incomplete) answer. */
char *sim__responses_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  resp_view v = finished(s, text, tokens_in, tokens_out);
  put_response(&w, id, model, &v);
  return sim__jw_take(&w);
}

/* What a response of step s is once sent whole (the body, or the stream
   through its last event): "incomplete" when it stops short for a reason
   (max_output_tokens, content_filter), else "completed". */
sim_end_state sim__responses_done(const sim_step *s) {
  return incomplete_reason(s) ? SIM_STATE_INCOMPLETE : SIM_STATE_COMPLETE;
}

/* Numbers events in the order they are written, which is the wire order. */
typedef struct seqb {
  int seq;
} seqb;

/* An event's frame ends with its type and the next sequence number. */
static void ev_close(sim_jw *w, seqb *b, const char *type) {
  sim__jw_kstr(w, "type", type);
  sim__jw_knum(w, "sequence_number", b->seq++);
  sim__sse_close(w);
}

/* {"response":{...}} events: created, in_progress, completed, failed. */
static void ev_response(sim_jw *w, seqb *b, const char *type, const char *id,
                        const char *model, const resp_view *v) {
  sim__sse_open(w, type);
  sim__jw_key(w, "response");
  put_response(w, id, model, v);
  ev_close(w, b, type);
}

/* The response while it streams: in progress, nothing out yet. */
static const resp_view IN_PROGRESS = {.status = "in_progress"};

/* output_item.added and .done of output index: the message item (tc
   NULL) or tool call t's item. */
static void ev_item(sim_jw *w, seqb *b, const char *type, int index, const char *id,
                    const char *text, int t, const sim_tool_call *tc, int done) {
  sim__sse_open(w, type);
  sim__jw_knum(w, "output_index", index);
  sim__jw_key(w, "item");
  if (tc == NULL) put_message_item(w, id, text, done);
  else put_call_item(w, id, t, tc, done);
  ev_close(w, b, type);
}

/* Opens an event about the text part of message mid. */
static void part_open(sim_jw *w, const char *type, const char *mid) {
  sim__sse_open(w, type);
  sim__jw_kstr(w, "item_id", mid);
  sim__jw_knum(w, "output_index", 0);
  sim__jw_knum(w, "content_index", 0);
}

/* content_part.added and .done: the event carries the part. */
static void ev_part(sim_jw *w, seqb *b, const char *type, const char *mid, const char *text) {
  part_open(w, type, mid);
  sim__jw_key(w, "part");
  put_text_part(w, text);
  ev_close(w, b, type);
}

/* output_text.delta and .done: field ("delta" or "text") and its logprobs. */
static void ev_text(sim_jw *w, seqb *b, const char *type, const char *mid, const char *field,
                    const char *text) {
  part_open(w, type, mid);
  sim__jw_kstr(w, field, text);
  sim__jw_key(w, "logprobs");
  sim__jw_open(w, '[');
  sim__jw_close(w, ']');
  ev_close(w, b, type);
}

/* function_call_arguments.delta and .done: field ("delta" or "arguments"). */
static void ev_args(sim_jw *w, seqb *b, const char *type, const char *fid, int index,
                   const char *field, const char *v) {
  sim__sse_open(w, type);
  sim__jw_kstr(w, "item_id", fid);
  sim__jw_knum(w, "output_index", index);
  sim__jw_kstr(w, field, v);
  ev_close(w, b, type);
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
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, "error");
  sim__jw_kstr(&w, "code", code);
  sim__jw_kstr(&w, "message", msg);
  sim__jw_knull(&w, "param");
  ev_close(&w, &b, "error");
  resp_view v = {.status = "failed", .err_code = code, .err_message = msg};
  ev_response(&w, &b, "response.failed", id, model, &v);
  return sim__jw_take(&w);
}

/* The event stream; see the file comment. Each item's closing events ride
   at the head of the next item's first chunk (or the tail), so a stream cut
   inside an item never closes it: they are written into the writer `carry`,
   which the next item's first chunk goes on in. */
int sim__responses_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out) {
  seqb b = {0};
  int err_seq = -1;
  int text_item = ntexts > 0 || s->ntool_calls == 0;
  char mid[96];
  item_id(mid, sizeof mid, "msg", id, 0);
  sim_jw w, carry;
  sim__jw_init(&w, SIM__BODY_MAX);
  ev_response(&w, &b, "response.created", id, model, &IN_PROGRESS);
  ev_response(&w, &b, "response.in_progress", id, model, &IN_PROGRESS);
  if (text_item) {
    ev_item(&w, &b, "response.output_item.added", 0, id, NULL, 0, NULL, 0);
    ev_part(&w, &b, "response.content_part.added", mid, "");
  }
  out->pre = sim__jw_take(&w);
  int rc = SIM_OK, pushed = 0;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++, pushed++) {
    if (pushed == s->error_after) err_seq = b.seq;
    sim__jw_init(&w, SIM__BODY_MAX);
    ev_text(&w, &b, "response.output_text.delta", mid, "delta", texts[i]);
    rc = sim__sse_push(out, sim__jw_take(&w));
  }
  if (rc != SIM_OK) return rc;
  char *text = join_texts(texts, ntexts);
  if (text == NULL) return SIM_ENOMEM;
  sim__jw_init(&carry, SIM__BODY_MAX);
  int carry_seq = b.seq; /* the first number of the carried events */
  if (text_item) {
    ev_text(&carry, &b, "response.output_text.done", mid, "text", text);
    ev_part(&carry, &b, "response.content_part.done", mid, text);
    ev_item(&carry, &b, "response.output_item.done", 0, id, text, 0, NULL, 1);
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
      if (i == 0) {
        w = carry; /* the chunk goes on after the carried events */
        sim__jw_init(&carry, SIM__BODY_MAX);
        ev_item(&w, &b, "response.output_item.added", index, id, NULL, t, tc, 0);
      } else {
        sim__jw_init(&w, SIM__BODY_MAX);
      }
      ev_args(&w, &b, "response.function_call_arguments.delta", fid, index, "delta", pieces[i]);
      rc = sim__sse_push(out, sim__jw_take(&w));
    }
    sim__free_strv(pieces, np);
    if (rc != SIM_OK) break;
    carry_seq = b.seq;
    ev_args(&carry, &b, "response.function_call_arguments.done", fid, index, "arguments",
            tc->arguments ? tc->arguments : "");
    ev_item(&carry, &b, "response.output_item.done", index, id, NULL, t, tc, 1);
  }
  if (rc != SIM_OK) {
    sim__jw_free(&carry);
    free(text);
    return rc;
  }
  if (err_seq < 0) err_seq = carry_seq; /* after every chunk: the tail was not sent */
  out->tail = sim__jw_take(&carry);
  resp_view v = finished(s, ntexts ? text : NULL, tokens_in, tokens_out);
  sim__jw_init(&w, SIM__BODY_MAX);
  ev_response(&w, &b, v.reason ? "response.incomplete" : "response.completed", id, model, &v);
  out->marker = sim__jw_take(&w);
  out->done = sim__responses_done(s); /* the marker above: completed or incomplete */
  out->error = error_frames(s, id, model, err_seq);
  free(text);
  return SIM_OK;
}
