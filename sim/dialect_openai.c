/*
 * dialect_openai.c - OpenAI's older APIs: chat completions (also served
 * for Azure and OpenAI-compatible prefixes), legacy completions, embeddings
 * and the model list, with the error object they all share.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/dialect_int.h"

static const char *finish_reason(const sim_step *s) {
  if (s == NULL) return "stop";
  if (s->finish == SIM_FINISH_LENGTH) return "length";
  if (s->finish == SIM_FINISH_FILTER) return "content_filter";
  return s->ntool_calls > 0 ? "tool_calls" : "stop";
}

/* OpenAI's error object {message, type, param, code}. Owned by the caller. */
cJSON *sim__openai_error_object(int status, const char *code, const char *type,
                                const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  const char *t = type;
  if (t == NULL && code != NULL && strcmp(code, "insufficient_quota") == 0)
    t = "insufficient_quota";
  if (t == NULL) t = def ? def->oa_type : status >= 500 ? "server_error" : "invalid_request_error";
  const char *c = code ? code : def ? def->oa_code : NULL;
  cJSON_AddStringToObject(o, "message", sim__err_message(status, message));
  cJSON_AddStringToObject(o, "type", t);
  cJSON_AddNullToObject(o, "param");
  if (c) cJSON_AddStringToObject(o, "code", c);
  else cJSON_AddNullToObject(o, "code");
  return o;
}

static void add_usage(cJSON *o, int tokens_in, int tokens_out) {
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "prompt_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "completion_tokens", tokens_out);
  cJSON_AddNumberToObject(usage, "total_tokens", tokens_in + tokens_out);
}

/*
 * chat.completion: text and tool calls in one message. Written field by
 * field (sim/json_write.c), not as a tree printed (issue 13: the answer of
 * nearly every request): the same bytes cJSON would print.
 */
char *sim__openai_chat_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  int ntools = s ? s->ntool_calls : 0;
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "id", id);
  sim__jw_kstr(&w, "object", "chat.completion");
  sim__jw_knum(&w, "created", (double)time(NULL));
  sim__jw_kstr(&w, "model", model);
  sim__jw_key(&w, "choices");
  sim__jw_open(&w, '[');
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "index", 0);
  sim__jw_key(&w, "message");
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "role", "assistant");
  if (text != NULL) sim__jw_kstr(&w, "content", text);
  else sim__jw_knull(&w, "content");
  sim__jw_knull(&w, "refusal");
  if (ntools > 0) {
    sim__jw_key(&w, "tool_calls");
    sim__jw_open(&w, '[');
    for (int i = 0; i < ntools; i++) {
      const sim_tool_call *tc = &s->tool_calls[i];
      sim__jw_open(&w, '{');
      sim__jw_kstr(&w, "id", tc->id);
      sim__jw_kstr(&w, "type", "function");
      sim__jw_key(&w, "function");
      sim__jw_open(&w, '{');
      sim__jw_kstr(&w, "name", tc->name);
      sim__jw_kstr(&w, "arguments", tc->arguments ? tc->arguments : "");
      sim__jw_close(&w, '}');
      sim__jw_close(&w, '}');
    }
    sim__jw_close(&w, ']');
  }
  sim__jw_close(&w, '}');
  sim__jw_knull(&w, "logprobs");
  sim__jw_kstr(&w, "finish_reason", finish_reason(s));
  sim__jw_close(&w, '}');
  sim__jw_close(&w, ']');
  sim__jw_key(&w, "usage");
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "prompt_tokens", tokens_in);
  sim__jw_knum(&w, "completion_tokens", tokens_out);
  sim__jw_knum(&w, "total_tokens", (double)tokens_in + tokens_out);
  sim__jw_close(&w, '}');
  sim__jw_knull(&w, "system_fingerprint");
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

static cJSON *chat_chunk(const char *id, const char *model, cJSON *delta, const char *finish) {
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

/* A delta carrying one tool call's start (id, name) or an argument piece. */
static cJSON *tool_delta(int index, const sim_tool_call *tc, const char *piece, int first) {
  cJSON *d = cJSON_CreateObject();
  cJSON *tcs = cJSON_AddArrayToObject(d, "tool_calls");
  cJSON *t = cJSON_CreateObject();
  cJSON_AddNumberToObject(t, "index", index);
  if (first) {
    cJSON_AddStringToObject(t, "id", tc->id);
    cJSON_AddStringToObject(t, "type", "function");
  }
  cJSON *fn = cJSON_AddObjectToObject(t, "function");
  if (first) cJSON_AddStringToObject(fn, "name", tc->name);
  cJSON_AddStringToObject(fn, "arguments", piece);
  cJSON_AddItemToArray(tcs, t);
  return d;
}

/* chat.completion.chunk frames: role, text deltas, tool-call deltas (the
   first carries id and name), the finish chunk, [DONE]. */
int sim__openai_chat_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out) {
  cJSON *delta = cJSON_CreateObject();
  cJSON_AddStringToObject(delta, "role", "assistant");
  cJSON_AddStringToObject(delta, "content", "");
  out->pre = sim__frame(NULL, chat_chunk(id, model, delta, NULL));
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "content", texts[i]);
    rc = sim__sse_push(out, sim__frame(NULL, chat_chunk(id, model, d, NULL)));
  }
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++) {
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(s->tool_calls[t].arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++)
      rc = sim__sse_push(out, sim__frame(NULL, chat_chunk(id, model,
                                                          tool_delta(t, &s->tool_calls[t],
                                                                     pieces[i], i == 0),
                                                          NULL)));
    sim__free_strv(pieces, np);
  }
  if (rc != SIM_OK) return rc;
  out->tail = sim__frame(NULL, chat_chunk(id, model, cJSON_CreateObject(), finish_reason(s)));
  out->marker = strdup("data: [DONE]\n\n");
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", sim__openai_error_object(s->status ? s->status : 500,
                                                               s->code, s->type, s->message));
  out->error = sim__frame(NULL, err);
  return SIM_OK;
}

/* text_completion (legacy POST /v1/completions). */
char *sim__completions_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "text_completion");
  cJSON_AddNumberToObject(o, "created", (double)time(NULL));
  cJSON_AddStringToObject(o, "model", model);
  cJSON *choices = cJSON_AddArrayToObject(o, "choices");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "text", text ? text : "");
  cJSON_AddNumberToObject(c, "index", 0);
  cJSON_AddNullToObject(c, "logprobs");
  cJSON_AddStringToObject(c, "finish_reason",
                          s && s->finish == SIM_FINISH_LENGTH ? "length"
                          : s && s->finish == SIM_FINISH_FILTER ? "content_filter"
                                                                : "stop");
  cJSON_AddItemToArray(choices, c);
  add_usage(o, tokens_in, tokens_out);
  return sim__print_free(o);
}

static cJSON *completion_chunk(const char *id, const char *model, const char *text,
                               const char *finish) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "text_completion");
  cJSON_AddNumberToObject(o, "created", (double)time(NULL));
  cJSON_AddStringToObject(o, "model", model);
  cJSON *choices = cJSON_AddArrayToObject(o, "choices");
  cJSON *c = cJSON_CreateObject();
  cJSON_AddStringToObject(c, "text", text);
  cJSON_AddNumberToObject(c, "index", 0);
  cJSON_AddNullToObject(c, "logprobs");
  if (finish) cJSON_AddStringToObject(c, "finish_reason", finish);
  else cJSON_AddNullToObject(c, "finish_reason");
  cJSON_AddItemToArray(choices, c);
  return o;
}

/* Legacy completion chunks: one per text piece, a finish chunk, [DONE]. */
int sim__completions_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++)
    rc = sim__sse_push(out, sim__frame(NULL, completion_chunk(id, model, texts[i], NULL)));
  if (rc != SIM_OK) return rc;
  const char *fin = s->finish == SIM_FINISH_LENGTH   ? "length"
                    : s->finish == SIM_FINISH_FILTER ? "content_filter"
                                                     : "stop";
  out->tail = sim__frame(NULL, completion_chunk(id, model, "", fin));
  out->marker = strdup("data: [DONE]\n\n");
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", sim__openai_error_object(s->status ? s->status : 500,
                                                               s->code, s->type, s->message));
  out->error = sim__frame(NULL, err);
  return SIM_OK;
}

/* A deterministic unit vector derived from text, so equal inputs embed
   equally and different ones differ. */
static cJSON *vector_of(const char *text) {
  enum { DIM = 8 };
  double v[DIM];
  uint64_t h = 1469598103934665603ULL;
  double norm = 0;
  for (int i = 0; i < DIM; i++) {
    for (const char *p = text; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h ^= (uint64_t)i * 0x9e3779b97f4a7c15ULL;
    v[i] = (double)(h % 2001) / 1000.0 - 1.0;
    norm += v[i] * v[i];
  }
  norm = norm > 0 ? sqrt(norm) : 1;
  cJSON *a = cJSON_CreateArray();
  for (int i = 0; i < DIM; i++)
    cJSON_AddItemToArray(a, cJSON_CreateNumber(round(v[i] / norm * 1e6) / 1e6));
  return a;
}

/* The embeddings list: ninputs vectors derived from text and their index. */
char *sim__embeddings_body(const char *model, const char *text, int ninputs, int tokens_in) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(o, "data");
  for (int i = 0; i < (ninputs > 0 ? ninputs : 1); i++) {
    char seed[32];
    snprintf(seed, sizeof seed, "%d:", i);
    char *t = malloc(strlen(seed) + strlen(text ? text : "") + 1);
    if (t == NULL) {
      cJSON_Delete(o);
      return NULL;
    }
    strcpy(t, seed);
    strcat(t, text ? text : "");
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "object", "embedding");
    cJSON_AddNumberToObject(e, "index", i);
    cJSON_AddItemToObject(e, "embedding", vector_of(t));
    cJSON_AddItemToArray(data, e);
    free(t);
  }
  cJSON_AddStringToObject(o, "model", model);
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "prompt_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "total_tokens", tokens_in);
  return sim__print_free(o);
}

/* GET /v1/models: the one model the step names (or the default). */
char *sim__models_body(const char *model) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  cJSON_AddStringToObject(o, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(o, "data");
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "id", model);
  cJSON_AddStringToObject(m, "object", "model");
  cJSON_AddNumberToObject(m, "created", 1700000000);
  cJSON_AddStringToObject(m, "owned_by", "fusebox");
  cJSON_AddItemToArray(data, m);
  return sim__print_free(o);
}
