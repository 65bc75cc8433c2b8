/*
 * dialect.c - what every API's body writer shares (default error fields,
 * SSE framing) and the dispatchers the player calls: one answer, one error,
 * one stream, each handed to the file of the API that was hit
 * (dialect_openai.c, dialect_anthropic.c, dialect_responses.c,
 * dialect_gemini.c).
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

/* The response header that carries the request id in each dialect. */
const char *sim__request_id_header(sim_dialect d) {
  return d == SIM_DIALECT_ANTHROPIC ? "request-id" : "x-request-id";
}

/* The API's name as the trace and req.dialect spell it. */
const char *sim__dialect_name(sim_dialect d) {
  switch (d) {
  case SIM_DIALECT_OPENAI: return "openai-chat";
  case SIM_DIALECT_ANTHROPIC: return "anthropic";
  case SIM_DIALECT_EFFECT: return "effect";
  case SIM_DIALECT_RESPONSES: return "openai-responses";
  case SIM_DIALECT_COMPLETIONS: return "openai-completions";
  case SIM_DIALECT_EMBEDDINGS: return "embeddings";
  case SIM_DIALECT_MODELS: return "models";
  case SIM_DIALECT_GEMINI: return "gemini";
  }
  return "unknown";
}

/* 1 when the API answers with an SSE stream when asked to. */
int sim__dialect_streams(sim_dialect d) {
  return d != SIM_DIALECT_EMBEDDINGS && d != SIM_DIALECT_MODELS && d != SIM_DIALECT_EFFECT;
}

/* Prints and deletes o; see dialect_int.h. */
char *sim__print_free(cJSON *o) {
  if (o == NULL) return NULL;
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* One SSE frame; see dialect_int.h. */
char *sim__frame(const char *event, cJSON *data) {
  char *json = sim__print_free(data);
  if (json == NULL) return NULL;
  size_t len = strlen(json) + (event ? strlen(event) : 0) + 32;
  char *f = malloc(len);
  if (f != NULL) {
    if (event) snprintf(f, len, "event: %s\ndata: %s\n\n", event, json);
    else snprintf(f, len, "data: %s\n\n", json);
  }
  free(json);
  return f;
}

/* a then b; see dialect_int.h. */
char *sim__concat2(char *a, char *b) {
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return NULL;
  }
  size_t la = strlen(a), lb = strlen(b);
  char *r = malloc(la + lb + 1);
  if (r != NULL) {
    memcpy(r, a, la);
    memcpy(r + la, b, lb + 1);
  }
  free(a);
  free(b);
  return r;
}

/* The arguments as JSON, or {} when they are not valid JSON. */
cJSON *sim__tool_args_json(const sim_tool_call *tc) {
  cJSON *j = tc->arguments ? cJSON_Parse(tc->arguments) : NULL;
  if (j == NULL) j = cJSON_CreateObject();
  return j;
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

/* Frees what sim__split_args returned. */
void sim__free_strv(char **v, int n) {
  for (int i = 0; v != NULL && i < n; i++) free(v[i]);
  free(v);
}

/* A complete (non-streaming) answer body in the API's shape; s may be NULL
   (plain text). Owned by the caller. */
char *sim__answer_body(sim_dialect d, const sim_step *s, const char *id, const char *model,
                       const char *text, int tokens_in, int tokens_out) {
  switch (d) {
  case SIM_DIALECT_ANTHROPIC: return sim__anthropic_body(s, id, model, text, tokens_in, tokens_out);
  case SIM_DIALECT_RESPONSES: return sim__responses_body(s, id, model, text, tokens_in, tokens_out);
  case SIM_DIALECT_COMPLETIONS:
    return sim__completions_body(s, id, model, text, tokens_in, tokens_out);
  case SIM_DIALECT_EMBEDDINGS: return sim__embeddings_body(model, text, 1, tokens_in);
  case SIM_DIALECT_MODELS: return sim__models_body(model);
  case SIM_DIALECT_GEMINI: return sim__gemini_body(s, model, text, tokens_in, tokens_out);
  default: return sim__openai_chat_body(s, id, model, text, tokens_in, tokens_out);
  }
}

/* The chat completions (or Anthropic) body of plain text; kept for callers
   that have no step. Owned by the caller. */
char *sim__chat_body(sim_dialect d, const char *id, const char *model,
                     const char *text, int tokens_in, int tokens_out) {
  return sim__answer_body(d, NULL, id, model, text, tokens_in, tokens_out);
}

/* An error body in the API's shape; retry_s >= 0 adds Google's RetryInfo
   (Gemini only). Owned by the caller. */
char *sim__error_body_retry(sim_dialect d, int status, const char *code, const char *type,
                            const char *message, double retry_s) {
  if (d == SIM_DIALECT_ANTHROPIC) return sim__anthropic_error_body(status, type, message);
  if (d == SIM_DIALECT_GEMINI) return sim__gemini_error_body(status, code, message, retry_s);
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddItemToObject(o, "error", sim__openai_error_object(status, code, type, message));
  return sim__print_free(o);
}

/* An error body: {"error":{...}} (OpenAI) or {"type":"error","error":{...}}. */
char *sim__error_body(sim_dialect d, int status, const char *code,
                      const char *type, const char *message) {
  return sim__error_body_retry(d, status, code, type, message, -1);
}

/*
 * Builds every frame of a stream answering with texts[0..ntexts) and the
 * step's tool calls. The frames are owned by out; release them with
 * sim__sse_clear.
 */
int sim__sse_build(sim_dialect d, const sim_step *s, const char *id,
                   const char *model, int tokens_in, char **texts, int ntexts,
                   sim_sse *out) {
  memset(out, 0, sizeof *out);
  int tokens_out = 0;
  for (int i = 0; i < ntexts; i++) tokens_out += sim__estimate_tokens(strlen(texts[i]));
  for (int i = 0; i < s->ntool_calls; i++)
    tokens_out += sim__estimate_tokens(
        strlen(s->tool_calls[i].arguments ? s->tool_calls[i].arguments : "") +
        strlen(s->tool_calls[i].name));
  if (s->usage_out >= 0) tokens_out = s->usage_out;
  int rc;
  switch (d) {
  case SIM_DIALECT_ANTHROPIC:
    rc = sim__anthropic_sse(s, id, model, tokens_in, tokens_out, texts, ntexts, out);
    break;
  case SIM_DIALECT_RESPONSES:
    rc = sim__responses_sse(s, id, model, tokens_in, tokens_out, texts, ntexts, out);
    break;
  case SIM_DIALECT_COMPLETIONS:
    rc = sim__completions_sse(s, id, model, texts, ntexts, out);
    break;
  case SIM_DIALECT_GEMINI:
    rc = sim__gemini_sse(s, model, tokens_in, tokens_out, texts, ntexts, out);
    break;
  default:
    rc = sim__openai_chat_sse(s, id, model, texts, ntexts, out);
    break;
  }
  out->ntexts = ntexts;
  if (rc == SIM_OK && (out->pre == NULL || out->tail == NULL || out->marker == NULL ||
                       out->error == NULL))
    rc = SIM_ENOMEM;
  if (rc != SIM_OK) sim__sse_clear(out);
  return rc;
}

/* Releases the frames of a stream; safe on a zeroed struct. */
void sim__sse_clear(sim_sse *sse) {
  free(sse->pre);
  for (int i = 0; sse->chunk != NULL && i < sse->nchunks; i++) free(sse->chunk[i]);
  free(sse->chunk);
  free(sse->tail);
  free(sse->marker);
  free(sse->error);
  memset(sse, 0, sizeof *sse);
}

/*
 * Splits text into pieces that each start at a word ("Hello", " world").
 * The array and its strings are owned by the caller.
 */
int sim__split_words(const char *text, char ***out, int *n) {
  size_t len = strlen(text);
  char **v = calloc(len + 1, sizeof(char *));
  if (v == NULL) return SIM_ENOMEM;
  int k = 0;
  size_t i = 0;
  while (i < len) {
    size_t j = i;
    while (j < len && text[j] == ' ') j++; /* leading spaces join the word */
    while (j < len && text[j] != ' ') j++;
    v[k] = strndup(text + i, j - i);
    if (v[k] == NULL) {
      for (int m = 0; m < k; m++) free(v[m]);
      free(v);
      return SIM_ENOMEM;
    }
    k++;
    i = j;
  }
  *out = v;
  *n = k;
  return SIM_OK;
}

/* Tokens billed for len bytes of text when a step gives no usage: a token
   is about four characters, rounded up. The one rule for every estimate the
   server makes (request prompts, answers, streams). */
int sim__estimate_tokens(size_t len) {
  size_t t = (len + 3) / 4;
  return t > 1000000000 ? 1000000000 : (int)t;
}

/* Formats seconds as delta-seconds: "2" for whole numbers, else "1.5". */
void sim__format_seconds(double seconds, char out[32]) {
  if (seconds == floor(seconds) && fabs(seconds) < 1e15)
    snprintf(out, 32, "%lld", (long long)seconds);
  else
    snprintf(out, 32, "%g", seconds);
}
