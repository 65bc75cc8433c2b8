/*
 * dialect.c - response bodies shaped as OpenAI and Anthropic shape them, so
 * a real SDK parses them and raises the error class it raises against the
 * real provider.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_int.h"

/* Default error fields per status: OpenAI type and code, Anthropic type. */
typedef struct err_default {
  int status;
  const char *oa_type;
  const char *oa_code;
  const char *an_type;
  const char *message;
} err_default;

static const err_default ERR_DEFAULTS[] = {
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

static const err_default *err_default_for(int status) {
  for (size_t i = 0; i < sizeof ERR_DEFAULTS / sizeof ERR_DEFAULTS[0]; i++)
    if (ERR_DEFAULTS[i].status == status) return &ERR_DEFAULTS[i];
  return NULL;
}

/* The response header that carries the request id in each dialect. */
const char *sim__request_id_header(sim_dialect d) {
  return d == SIM_DIALECT_ANTHROPIC ? "request-id" : "x-request-id";
}

/* The dialect's name as the trace and scenarios spell it. */
const char *sim__dialect_name(sim_dialect d) {
  switch (d) {
  case SIM_DIALECT_OPENAI: return "openai";
  case SIM_DIALECT_ANTHROPIC: return "anthropic";
  case SIM_DIALECT_EFFECT: return "effect";
  }
  return "unknown";
}

static char *print_free(cJSON *o) {
  if (o == NULL) return NULL;
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

/* A complete (non-streaming) answer body. Owned by the caller. */
char *sim__chat_body(sim_dialect d, const char *id, const char *model,
                     const char *text, int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  if (d == SIM_DIALECT_ANTHROPIC) {
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "type", "message");
    cJSON_AddStringToObject(o, "role", "assistant");
    cJSON_AddStringToObject(o, "model", model);
    cJSON *content = cJSON_AddArrayToObject(o, "content");
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", text);
    cJSON_AddItemToArray(content, block);
    cJSON_AddStringToObject(o, "stop_reason", "end_turn");
    cJSON_AddNullToObject(o, "stop_sequence");
    cJSON *usage = cJSON_AddObjectToObject(o, "usage");
    cJSON_AddNumberToObject(usage, "input_tokens", tokens_in);
    cJSON_AddNumberToObject(usage, "output_tokens", tokens_out);
  } else {
    cJSON_AddStringToObject(o, "id", id);
    cJSON_AddStringToObject(o, "object", "chat.completion");
    cJSON_AddNumberToObject(o, "created", (double)time(NULL));
    cJSON_AddStringToObject(o, "model", model);
    cJSON *choices = cJSON_AddArrayToObject(o, "choices");
    cJSON *choice = cJSON_CreateObject();
    cJSON_AddNumberToObject(choice, "index", 0);
    cJSON *msg = cJSON_AddObjectToObject(choice, "message");
    cJSON_AddStringToObject(msg, "role", "assistant");
    cJSON_AddStringToObject(msg, "content", text);
    cJSON_AddNullToObject(msg, "refusal");
    cJSON_AddNullToObject(choice, "logprobs");
    cJSON_AddStringToObject(choice, "finish_reason", "stop");
    cJSON_AddItemToArray(choices, choice);
    cJSON *usage = cJSON_AddObjectToObject(o, "usage");
    cJSON_AddNumberToObject(usage, "prompt_tokens", tokens_in);
    cJSON_AddNumberToObject(usage, "completion_tokens", tokens_out);
    cJSON_AddNumberToObject(usage, "total_tokens", tokens_in + tokens_out);
    cJSON_AddNullToObject(o, "system_fingerprint");
  }
  return print_free(o);
}

/* The error object of an error body or an in-stream error event. */
static cJSON *error_object(sim_dialect d, int status, const char *code,
                           const char *type, const char *message) {
  const err_default *def = err_default_for(status);
  const char *msg = message ? message : def ? def->message : "Error.";
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  if (d == SIM_DIALECT_ANTHROPIC) {
    const char *t = type ? type : def ? def->an_type
                                      : status >= 500 ? "api_error" : "invalid_request_error";
    cJSON_AddStringToObject(o, "type", t);
    cJSON_AddStringToObject(o, "message", msg);
  } else {
    const char *t = type;
    if (t == NULL && code != NULL && strcmp(code, "insufficient_quota") == 0)
      t = "insufficient_quota";
    if (t == NULL)
      t = def ? def->oa_type : status >= 500 ? "server_error" : "invalid_request_error";
    const char *c = code ? code : def ? def->oa_code : NULL;
    cJSON_AddStringToObject(o, "message", msg);
    cJSON_AddStringToObject(o, "type", t);
    cJSON_AddNullToObject(o, "param");
    if (c) cJSON_AddStringToObject(o, "code", c);
    else cJSON_AddNullToObject(o, "code");
  }
  return o;
}

/* An error body: {"error":{...}} (OpenAI) or {"type":"error","error":{...}}. */
char *sim__error_body(sim_dialect d, int status, const char *code,
                      const char *type, const char *message) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  if (d == SIM_DIALECT_ANTHROPIC) cJSON_AddStringToObject(o, "type", "error");
  cJSON_AddItemToObject(o, "error", error_object(d, status, code, type, message));
  return print_free(o);
}

/* "event: NAME\ndata: JSON\n\n" (name NULL: data line only). */
static char *frame(const char *event, cJSON *data) {
  char *json = print_free(data);
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

static char *concat2(char *a, char *b) {
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

static cJSON *oa_chunk(const char *id, const char *model, cJSON *delta,
                       const char *finish) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "chat.completion.chunk");
  cJSON_AddNumberToObject(o, "created", (double)time(NULL));
  cJSON_AddStringToObject(o, "model", model);
  cJSON_AddNullToObject(o, "system_fingerprint");
  cJSON *choices = cJSON_AddArrayToObject(o, "choices");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddNumberToObject(c, "index", 0);
  cJSON_AddItemToObject(c, "delta", delta);
  cJSON_AddNullToObject(c, "logprobs");
  if (finish) cJSON_AddStringToObject(c, "finish_reason", finish);
  else cJSON_AddNullToObject(c, "finish_reason");
  cJSON_AddItemToArray(choices, c);
  return o;
}

static int build_openai(const sim_step *s, const char *id, const char *model,
                        char **texts, int ntexts, sim_sse *out) {
  cJSON *delta = cJSON_CreateObject();
  cJSON_AddStringToObject(delta, "role", "assistant");
  cJSON_AddStringToObject(delta, "content", "");
  out->pre = frame(NULL, oa_chunk(id, model, delta, NULL));
  for (int i = 0; i < ntexts; i++) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "content", texts[i]);
    out->chunk[i] = frame(NULL, oa_chunk(id, model, d, NULL));
    if (out->chunk[i] == NULL) return SIM_ENOMEM;
  }
  out->tail = frame(NULL, oa_chunk(id, model, cJSON_CreateObject(), "stop"));
  out->marker = strdup("data: [DONE]\n\n");
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error",
                        error_object(SIM_DIALECT_OPENAI, s->status ? s->status : 500,
                                     s->code, s->type, s->message));
  out->error = frame(NULL, err);
  return SIM_OK;
}

static int build_anthropic(const sim_step *s, const char *id, const char *model,
                           int tokens_in, int tokens_out, char **texts,
                           int ntexts, sim_sse *out) {
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

  cJSON *bstart = cJSON_CreateObject();
  cJSON_AddStringToObject(bstart, "type", "content_block_start");
  cJSON_AddNumberToObject(bstart, "index", 0);
  cJSON *block = cJSON_AddObjectToObject(bstart, "content_block");
  cJSON_AddStringToObject(block, "type", "text");
  cJSON_AddStringToObject(block, "text", "");

  cJSON *ping = cJSON_CreateObject();
  cJSON_AddStringToObject(ping, "type", "ping");

  out->pre = concat2(concat2(frame("message_start", start),
                             frame("content_block_start", bstart)),
                     frame("ping", ping));
  for (int i = 0; i < ntexts; i++) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "type", "content_block_delta");
    cJSON_AddNumberToObject(d, "index", 0);
    cJSON *delta = cJSON_AddObjectToObject(d, "delta");
    cJSON_AddStringToObject(delta, "type", "text_delta");
    cJSON_AddStringToObject(delta, "text", texts[i]);
    out->chunk[i] = frame("content_block_delta", d);
    if (out->chunk[i] == NULL) return SIM_ENOMEM;
  }
  cJSON *bstop = cJSON_CreateObject();
  cJSON_AddStringToObject(bstop, "type", "content_block_stop");
  cJSON_AddNumberToObject(bstop, "index", 0);
  cJSON *mdelta = cJSON_CreateObject();
  cJSON_AddStringToObject(mdelta, "type", "message_delta");
  cJSON *dd = cJSON_AddObjectToObject(mdelta, "delta");
  cJSON_AddStringToObject(dd, "stop_reason", "end_turn");
  cJSON_AddNullToObject(dd, "stop_sequence");
  cJSON *u = cJSON_AddObjectToObject(mdelta, "usage");
  cJSON_AddNumberToObject(u, "output_tokens", tokens_out);
  out->tail = concat2(frame("content_block_stop", bstop), frame("message_delta", mdelta));
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "type", "message_stop");
  out->marker = frame("message_stop", stop);
  cJSON *err = cJSON_CreateObject();
  cJSON_AddStringToObject(err, "type", "error");
  cJSON_AddItemToObject(err, "error",
                        error_object(SIM_DIALECT_ANTHROPIC, s->status ? s->status : 529,
                                     s->code, s->type, s->message));
  out->error = frame("error", err);
  return SIM_OK;
}

/*
 * Builds every frame of a stream answering with texts[0..ntexts). The frames
 * are owned by out; release them with sim__sse_clear.
 */
int sim__sse_build(sim_dialect d, const sim_step *s, const char *id,
                   const char *model, int tokens_in, char **texts, int ntexts,
                   sim_sse *out) {
  memset(out, 0, sizeof *out);
  out->chunk = calloc(ntexts > 0 ? (size_t)ntexts : 1, sizeof(char *));
  if (out->chunk == NULL) return SIM_ENOMEM;
  out->nchunks = ntexts;
  int tokens_out = 0;
  for (int i = 0; i < ntexts; i++) tokens_out += sim__estimate_tokens(strlen(texts[i]));
  if (s->usage_out >= 0) tokens_out = s->usage_out;
  int rc = d == SIM_DIALECT_ANTHROPIC
               ? build_anthropic(s, id, model, tokens_in, tokens_out, texts, ntexts, out)
               : build_openai(s, id, model, texts, ntexts, out);
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
