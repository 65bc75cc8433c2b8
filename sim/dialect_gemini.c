/*
 * dialect_gemini.c - Google's Gemini API (generateContent and
 * streamGenerateContent?alt=sse): candidates with text and functionCall
 * parts, Google-shaped errors ({"error":{code, message, status, details}})
 * with RetryInfo when the step advises a wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dialect_int.h"

/* google.rpc.Code names by HTTP status. */
static const char *rpc_status(int status) {
  switch (status) {
  case 400: return "INVALID_ARGUMENT";
  case 401: return "UNAUTHENTICATED";
  case 403: return "PERMISSION_DENIED";
  case 404: return "NOT_FOUND";
  case 409: return "ABORTED";
  case 429: return "RESOURCE_EXHAUSTED";
  case 499: return "CANCELLED";
  case 501: return "UNIMPLEMENTED";
  case 503: return "UNAVAILABLE";
  case 504: return "DEADLINE_EXCEEDED";
  default: return status >= 500 ? "INTERNAL" : "FAILED_PRECONDITION";
  }
}

static const char *finish_reason(const sim_step *s) {
  if (s != NULL && s->finish == SIM_FINISH_LENGTH) return "MAX_TOKENS";
  if (s != NULL && s->finish == SIM_FINISH_FILTER) return "SAFETY";
  return "STOP";
}

/* A functionCall part: the call whole, its args as JSON. */
static void put_call_part(sim_jw *w, const sim_tool_call *tc) {
  sim__jw_open(w, '{');
  sim__jw_key(w, "functionCall");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "id", tc->id);
  sim__jw_kstr(w, "name", tc->name);
  sim__put_args(w, "args", tc);
  sim__jw_close(w, '}');
  sim__jw_close(w, '}');
}

static void put_text_part(sim_jw *w, const char *text) {
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "text", text);
  sim__jw_close(w, '}');
}

/* Opens a response with one candidate, in an object w has open, up to the
   inside of its parts list; response_close ends it. */
static void response_open(sim_jw *w) {
  sim__jw_key(w, "candidates");
  sim__jw_open(w, '[');
  sim__jw_open(w, '{');
  sim__jw_key(w, "content");
  sim__jw_open(w, '{');
  sim__jw_key(w, "parts");
  sim__jw_open(w, '[');
}

/* Ends what response_open began: finish NULL while a stream goes on;
   tokens_out < 0 = no usage. */
static void response_close(sim_jw *w, const char *finish, const char *model, int tokens_in,
                           int tokens_out) {
  sim__jw_close(w, ']');
  sim__jw_kstr(w, "role", "model");
  sim__jw_close(w, '}');
  if (finish) sim__jw_kstr(w, "finishReason", finish);
  sim__jw_knum(w, "index", 0);
  sim__jw_close(w, '}');
  sim__jw_close(w, ']');
  if (tokens_out >= 0) {
    sim__jw_key(w, "usageMetadata");
    sim__jw_open(w, '{');
    sim__jw_knum(w, "promptTokenCount", tokens_in);
    sim__jw_knum(w, "candidatesTokenCount", tokens_out);
    sim__jw_knum(w, "totalTokenCount", (double)tokens_in + tokens_out);
    sim__jw_close(w, '}');
  }
  sim__jw_kstr(w, "modelVersion", model);
}

/* generateContent's answer: text part, then one functionCall part per call. */
char *sim__gemini_body(const sim_step *s, const char *model, const char *text,
                       int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  int ntools = s ? s->ntool_calls : 0;
  sim__jw_open(&w, '{');
  response_open(&w);
  if (text != NULL || ntools == 0) put_text_part(&w, text ? text : "");
  for (int i = 0; i < ntools; i++) put_call_part(&w, &s->tool_calls[i]);
  response_close(&w, finish_reason(s), model, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* "error":{code, message, status, details?}, in an object w has open. */
static void error_field(sim_jw *w, int status, const char *code, const char *message,
                        double retry_s) {
  sim__jw_key(w, "error");
  sim__jw_open(w, '{');
  sim__jw_knum(w, "code", status);
  sim__jw_kstr(w, "message", sim__err_message(status, message));
  sim__jw_kstr(w, "status", code ? code : rpc_status(status));
  if (retry_s >= 0) {
    char d[40], secs[32];
    sim__format_seconds(retry_s, secs);
    snprintf(d, sizeof d, "%ss", secs);
    sim__jw_key(w, "details");
    sim__jw_open(w, '[');
    sim__jw_open(w, '{');
    sim__jw_kstr(w, "@type", "type.googleapis.com/google.rpc.RetryInfo");
    sim__jw_kstr(w, "retryDelay", d);
    sim__jw_close(w, '}');
    sim__jw_close(w, ']');
  }
  sim__jw_close(w, '}');
}

/* {"error":{"code":429,"message":...,"status":"RESOURCE_EXHAUSTED",
   "details":[RetryInfo]}}; code overrides the status name. */
char *sim__gemini_error_body(int status, const char *code, const char *message,
                             double retry_s) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  error_field(&w, status, code, message, retry_s);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* One stream chunk: a text part (tc NULL) or a whole function call; finish
   and tokens_out as response_close takes them. */
static char *chunk(const char *model, int tokens_in, int tokens_out, const char *finish,
                   const char *text, const sim_tool_call *tc) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, NULL);
  response_open(&w);
  if (tc) put_call_part(&w, tc);
  else put_text_part(&w, text);
  response_close(&w, finish, model, tokens_in, tokens_out);
  sim__sse_close(&w);
  return sim__jw_take(&w);
}

/* Server-sent GenerateContentResponse chunks: one per text piece, one per
   function call (Gemini sends a call whole), and the finishing chunk with
   finishReason and usage as the end marker (no_end: a stream that stops
   without one). */
int sim__gemini_sse(const sim_step *s, const char *model, int tokens_in,
                    int tokens_out, char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++)
    rc = sim__sse_push(out, chunk(model, tokens_in, -1, NULL, texts[i], NULL));
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++)
    rc = sim__sse_push(out, chunk(model, tokens_in, -1, NULL, NULL, &s->tool_calls[t]));
  if (rc != SIM_OK) return rc;
  out->tail = strdup("");
  out->marker = chunk(model, tokens_in, tokens_out, finish_reason(s), "", NULL);
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, NULL);
  error_field(&w, s->status ? s->status : 500, s->code, s->message, -1);
  sim__sse_close(&w);
  out->error = sim__jw_take(&w);
  return SIM_OK;
}
