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

static cJSON *usage(int tokens_in, int tokens_out) {
  cJSON *u = cJSON_CreateObject();
  cJSON_AddNumberToObject(u, "promptTokenCount", tokens_in);
  cJSON_AddNumberToObject(u, "candidatesTokenCount", tokens_out);
  cJSON_AddNumberToObject(u, "totalTokenCount", tokens_in + tokens_out);
  return u;
}

static cJSON *call_part(const sim_tool_call *tc) {
  cJSON *p = cJSON_CreateObject();
  cJSON *fc = cJSON_AddObjectToObject(p, "functionCall");
  cJSON_AddStringToObject(fc, "id", tc->id);
  cJSON_AddStringToObject(fc, "name", tc->name);
  cJSON_AddItemToObject(fc, "args", sim__tool_args_json(tc));
  return p;
}

/* A response with one candidate; parts may be empty; finish NULL while a
   stream goes on; tokens_out < 0 = no usage. */
static cJSON *response(cJSON *parts, const char *finish, const char *model, int tokens_in,
                       int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  cJSON *cands = cJSON_AddArrayToObject(o, "candidates");
  cJSON *c = cJSON_CreateObject();
  cJSON *content = cJSON_AddObjectToObject(c, "content");
  cJSON_AddItemToObject(content, "parts", parts);
  cJSON_AddStringToObject(content, "role", "model");
  if (finish) cJSON_AddStringToObject(c, "finishReason", finish);
  cJSON_AddNumberToObject(c, "index", 0);
  cJSON_AddItemToArray(cands, c);
  if (tokens_out >= 0) cJSON_AddItemToObject(o, "usageMetadata", usage(tokens_in, tokens_out));
  cJSON_AddStringToObject(o, "modelVersion", model);
  return o;
}

/* generateContent's answer: text part, then one functionCall part per call. */
char *sim__gemini_body(const sim_step *s, const char *model, const char *text,
                       int tokens_in, int tokens_out) {
  cJSON *parts = cJSON_CreateArray();
  if (parts == NULL) return NULL;
  int ntools = s ? s->ntool_calls : 0;
  if (text != NULL || ntools == 0) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "text", text ? text : "");
    cJSON_AddItemToArray(parts, p);
  }
  for (int i = 0; i < ntools; i++) cJSON_AddItemToArray(parts, call_part(&s->tool_calls[i]));
  return sim__print_free(response(parts, finish_reason(s), model, tokens_in, tokens_out));
}

static cJSON *error_object(int status, const char *code, const char *message, double retry_s) {
  cJSON *e = cJSON_CreateObject();
  if (e == NULL) return NULL;
  cJSON_AddNumberToObject(e, "code", status);
  cJSON_AddStringToObject(e, "message", sim__err_message(status, message));
  cJSON_AddStringToObject(e, "status", code ? code : rpc_status(status));
  if (retry_s >= 0) {
    cJSON *details = cJSON_AddArrayToObject(e, "details");
    cJSON *ri = cJSON_CreateObject();
    cJSON_AddStringToObject(ri, "@type", "type.googleapis.com/google.rpc.RetryInfo");
    char d[40], secs[32];
    sim__format_seconds(retry_s, secs);
    snprintf(d, sizeof d, "%ss", secs);
    cJSON_AddStringToObject(ri, "retryDelay", d);
    cJSON_AddItemToArray(details, ri);
  }
  return e;
}

/* {"error":{"code":429,"message":...,"status":"RESOURCE_EXHAUSTED",
   "details":[RetryInfo]}}; code overrides the status name. */
char *sim__gemini_error_body(int status, const char *code, const char *message,
                             double retry_s) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddItemToObject(o, "error", error_object(status, code, message, retry_s));
  return sim__print_free(o);
}

/* Server-sent GenerateContentResponse chunks: one per text piece, one per
   function call (Gemini sends a call whole), and the finishing chunk with
   finishReason and usage as the end marker (no_end: a stream that stops
   without one). */
int sim__gemini_sse(const sim_step *s, const char *model, int tokens_in,
                    int tokens_out, char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    cJSON *parts = cJSON_CreateArray();
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "text", texts[i]);
    cJSON_AddItemToArray(parts, p);
    rc = sim__sse_push(out, sim__frame(NULL, response(parts, NULL, model, tokens_in, -1)));
  }
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++) {
    cJSON *parts = cJSON_CreateArray();
    cJSON_AddItemToArray(parts, call_part(&s->tool_calls[t]));
    rc = sim__sse_push(out, sim__frame(NULL, response(parts, NULL, model, tokens_in, -1)));
  }
  if (rc != SIM_OK) return rc;
  out->tail = strdup("");
  cJSON *last = cJSON_CreateArray();
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "text", "");
  cJSON_AddItemToArray(last, p);
  out->marker = sim__frame(NULL, response(last, finish_reason(s), model, tokens_in, tokens_out));
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", error_object(s->status ? s->status : 500, s->code,
                                                   s->message, -1));
  out->error = sim__frame(NULL, err);
  return SIM_OK;
}
