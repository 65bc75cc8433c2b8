/*
 * dialect_parts.c - the pieces every API's body writer builds from: default
 * error fields per status, error messages, SSE framing on the JSON writer
 * (sim/json_write.c), tool arguments as JSON, argument splitting and
 * delta-seconds. The API files (dialect_openai.c, dialect_anthropic.c,
 * dialect_responses.c, dialect_gemini.c) and the dispatchers in dialect.c
 * call these; nothing here calls back into them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/dialect_int.h"

#define MAX_SSE_FRAMES 100000 /* chunks of one stream, tool deltas included */

static const sim__err_default ERR_DEFAULTS[] = {
    {400, "invalid_request_error", NULL, "invalid_request_error", "Invalid request."},
    {401, "invalid_request_error", "invalid_api_key", "authentication_error",
     "Incorrect API key provided."},
    {402, "insufficient_quota", "insufficient_balance", "billing_error",
     "Insufficient balance. Add credits to continue."},
    {403, "invalid_request_error", "permission_denied", "permission_error",
     "You do not have access to this resource."},
    {404, "invalid_request_error", "model_not_found", "not_found_error",
     "The model does not exist or you do not have access to it."},
    {408, "server_error", "timeout", "timeout_error", "Request timed out."},
    {409, "server_error", "conflict", "api_error", "Conflict. Please retry."},
    {413, "invalid_request_error", "request_too_large", "request_too_large",
     "Request exceeds the maximum allowed size."},
    {422, "invalid_request_error", "unprocessable_entity", "invalid_request_error",
     "The request could not be processed."},
    {429, "requests", "rate_limit_exceeded", "rate_limit_error",
     "Rate limit reached. Please try again later."},
    {500, "server_error", NULL, "api_error", "The server had an error while processing your request."},
    {502, "server_error", "bad_gateway", "api_error", "Bad gateway."},
    {503, "server_error", "service_unavailable", "api_error",
     "The engine is currently overloaded, please try again later."},
    {504, "server_error", "timeout", "timeout_error", "Gateway timeout."},
    {529, "server_error", "overloaded", "overloaded_error", "Overloaded"},
};

/* The defaults for status, or NULL; see dialect_int.h. */
const sim__err_default *sim__err_default_for(int status) {
  for (size_t i = 0; i < sizeof ERR_DEFAULTS / sizeof ERR_DEFAULTS[0]; i++)
    if (ERR_DEFAULTS[i].status == status) return &ERR_DEFAULTS[i];
  return NULL;
}

/* The step's message, else the status's default; never NULL. */
const char *sim__err_message(int status, const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  return message ? message : def ? def->message : "Error.";
}

/* Formats seconds as delta-seconds: "2" for whole numbers, else "1.5". */
void sim__format_seconds(double seconds, char out[32]) {
  if (seconds == floor(seconds) && fabs(seconds) < 1e15)
    snprintf(out, 32, "%lld", (long long)seconds);
  else
    snprintf(out, 32, "%g", seconds);
}
/* "event: NAME\n" and "data: {"; see dialect_int.h. The '{' is raw: the
   writer's comma rule then sees an object just opened, even after an
   earlier frame in the same writer. */
void sim__sse_open(sim_jw *w, const char *event) {
  if (event != NULL) {
    sim__jw_raw(w, "event: ", 7);
    sim__jw_raw(w, event, strlen(event));
    sim__jw_raw(w, "\n", 1);
  }
  sim__jw_raw(w, "data: {", 7);
}

/* "}\n\n": the end of the frame sim__sse_open began. */
void sim__sse_close(sim_jw *w) { sim__jw_raw(w, "}\n\n", 3); }

/* Frees what sim__split_args returned. */
void sim__free_strv(char **v, int n) {
  for (int i = 0; v != NULL && i < n; i++) free(v[i]);
  free(v);
}

/* Splits a tool call's argument text into the pieces a stream carries
   (8 bytes each, so a scenario can cut a stream inside them). *n pieces;
   the array and strings are owned by the caller. */
int sim__split_args(const char *args, char ***out, int *n) {
  size_t len = args ? strlen(args) : 0;
  size_t k = len ? (len + 7) / 8 : 1;
  char **v = calloc(k, sizeof *v);
  if (v == NULL) return SIM_ENOMEM;
  for (size_t i = 0; i < k; i++) {
    v[i] = len ? strndup(args + i * 8, 8) : strdup("");
    if (v[i] == NULL) {
      for (size_t m = 0; m < i; m++) free(v[m]);
      free(v);
      return SIM_ENOMEM;
    }
  }
  *out = v;
  *n = (int)k;
  return SIM_OK;
}

/* Appends a frame (taken) to the stream's chunks; NULL frame = out of
   memory. Returns SIM_OK, SIM_ENOMEM or SIM_EINVAL past the maximum. */
int sim__sse_push(sim_sse *out, char *frame) {
  if (frame == NULL) return SIM_ENOMEM;
  if (out->nchunks >= MAX_SSE_FRAMES) {
    free(frame);
    return SIM_EINVAL;
  }
  if (out->nchunks == out->cap) {
    int cap = out->cap ? out->cap * 2 : 16;
    char **v = realloc(out->chunk, (size_t)cap * sizeof *v);
    if (v == NULL) {
      free(frame);
      return SIM_ENOMEM;
    }
    out->chunk = v;
    out->cap = cap;
  }
  out->chunk[out->nchunks++] = frame;
  return SIM_OK;
}

/* Appends a binary frame (taken) and its length; see sim_int.h. */
int sim__sse_push_bin(sim_sse *out, char *frame, size_t len) {
  int rc = sim__sse_push(out, frame);
  if (rc != SIM_OK) return rc;
  if (out->lens_cap < out->cap) {
    size_t *v = realloc(out->lens, (size_t)out->cap * sizeof *v);
    if (v == NULL) return SIM_ENOMEM; /* the frame is the stream's: cleared with it */
    out->lens = v;
    out->lens_cap = out->cap;
  }
  out->lens[out->nchunks - 1] = len;
  return SIM_OK;
}

/* key: the arguments as cJSON prints them parsed, or {} when they are not
   JSON; see dialect_int.h. Tool calls are rare: a tree is parsed, but it is
   written by the writer, not printed and copied. */
void sim__put_args(sim_jw *w, const char *key, const sim_tool_call *tc) {
  cJSON *j = tc->arguments ? cJSON_Parse(tc->arguments) : NULL;
  sim__jw_key(w, key);
  if (j == NULL) { /* not JSON: an empty object (the raw text is the stream's) */
    sim__jw_raw(w, "{}", 2);
    return;
  }
  sim__jw_cjson(w, j);
  cJSON_Delete(j);
}
