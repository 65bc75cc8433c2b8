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

/* OpenAI's error object; see dialect_int.h. */
void sim__openai_error_write(sim_jw *w, int status, const char *code, const char *type,
                             const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  const char *t = type;
  if (t == NULL && code != NULL && strcmp(code, "insufficient_quota") == 0)
    t = "insufficient_quota";
  if (t == NULL) t = def ? def->oa_type : status >= 500 ? "server_error" : "invalid_request_error";
  const char *c = code ? code : def ? def->oa_code : NULL;
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "message", sim__err_message(status, message));
  sim__jw_kstr(w, "type", t);
  sim__jw_knull(w, "param");
  if (c) sim__jw_kstr(w, "code", c);
  else sim__jw_knull(w, "code");
  sim__jw_close(w, '}');
}

/* {"error":{...}}; see dialect_int.h. */
char *sim__openai_error_body(int status, const char *code, const char *type,
                             const char *message) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_key(&w, "error");
  sim__openai_error_write(&w, status, code, type, message);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* The error frame of a stream that fails (chat and legacy completions):
   data: {"error":{...}}, 500 unless the step says. */
static char *error_frame(const sim_step *s) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, NULL);
  sim__jw_key(&w, "error");
  sim__openai_error_write(&w, s->status ? s->status : 500, s->code, s->type, s->message);
  sim__sse_close(&w);
  return sim__jw_take(&w);
}

static void put_usage(sim_jw *w, int tokens_in, int tokens_out) {
  SIM__JW_LIT_INT(w, ",\"usage\":{\"prompt_tokens\":", tokens_in);
  SIM__JW_LIT_INT(w, ",\"completion_tokens\":", tokens_out);
  SIM__JW_LIT_INT(w, ",\"total_tokens\":", (long long)tokens_in + tokens_out);
  sim__jw_close(w, '}');
}

/*
 * chat.completion: text and tool calls in one message. A template: the
 * fixed parts are literal runs, the few variable fields written between
 * them (sim/json_write.c), not a tree printed (issue 13: the answer of
 * nearly every request): the same bytes cJSON would print.
 */
char *sim__openai_chat_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  int ntools = s ? s->ntool_calls : 0;
  SIM__JW_LIT_STR(&w, "{\"id\":", id);
  SIM__JW_LIT_INT(&w, ",\"object\":\"chat.completion\",\"created\":", (long long)time(NULL));
  SIM__JW_LIT_STR(&w, ",\"model\":", model);
  if (text != NULL)
    SIM__JW_LIT_STR(&w, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":", text);
  else
    SIM__JW_LIT(&w, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null");
  SIM__JW_LIT(&w, ",\"refusal\":null");
  if (ntools > 0) {
    SIM__JW_LIT(&w, ",\"tool_calls\":[");
    for (int i = 0; i < ntools; i++) {
      const sim_tool_call *tc = &s->tool_calls[i];
      if (i > 0) SIM__JW_LIT(&w, ",");
      SIM__JW_LIT(&w, "{\"id\":");
      sim__jw_str(&w, tc->id);
      SIM__JW_LIT(&w, ",\"type\":\"function\",\"function\":{\"name\":");
      sim__jw_str(&w, tc->name);
      SIM__JW_LIT(&w, ",\"arguments\":");
      sim__jw_str(&w, tc->arguments ? tc->arguments : "");
      SIM__JW_LIT(&w, "}}");
    }
    sim__jw_close(&w, ']');
  }
  SIM__JW_LIT_STR(&w, "},\"logprobs\":null,\"finish_reason\":", finish_reason(s));
  SIM__JW_LIT(&w, "}]");
  put_usage(&w, tokens_in, tokens_out);
  SIM__JW_LIT(&w, ",\"system_fingerprint\":null}");
  return sim__jw_take(&w);
}

/* Opens a chat.completion.chunk frame in w up to the inside of its delta,
   whose fields the caller writes before chunk_close. */
static void chunk_open(sim_jw *w, const char *id, const char *model) {
  sim__jw_init(w, SIM__BODY_MAX);
  sim__sse_open(w, NULL);
  sim__jw_kstr(w, "id", id);
  sim__jw_kstr(w, "object", "chat.completion.chunk");
  sim__jw_knum(w, "created", (double)time(NULL));
  sim__jw_kstr(w, "model", model);
  sim__jw_knull(w, "system_fingerprint");
  sim__jw_key(w, "choices");
  sim__jw_open(w, '[');
  sim__jw_open(w, '{');
  sim__jw_knum(w, "index", 0);
  sim__jw_key(w, "delta");
  sim__jw_open(w, '{');
}

/* Closes the delta and the chunk chunk_open began, with its finish reason
   (NULL: null). The frame, owned by the caller; NULL when out of memory. */
static char *chunk_close(sim_jw *w, const char *finish) {
  sim__jw_close(w, '}');
  sim__jw_knull(w, "logprobs");
  if (finish) sim__jw_kstr(w, "finish_reason", finish);
  else sim__jw_knull(w, "finish_reason");
  sim__jw_close(w, '}');
  sim__jw_close(w, ']');
  sim__sse_close(w);
  return sim__jw_take(w);
}

/* A chunk whose delta carries one tool call's start (id, name) or an
   argument piece. */
static char *tool_chunk(const char *id, const char *model, int index, const sim_tool_call *tc,
                        const char *piece, int first) {
  sim_jw w;
  chunk_open(&w, id, model);
  sim__jw_key(&w, "tool_calls");
  sim__jw_open(&w, '[');
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "index", index);
  if (first) {
    sim__jw_kstr(&w, "id", tc->id);
    sim__jw_kstr(&w, "type", "function");
  }
  sim__jw_key(&w, "function");
  sim__jw_open(&w, '{');
  if (first) sim__jw_kstr(&w, "name", tc->name);
  sim__jw_kstr(&w, "arguments", piece);
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  sim__jw_close(&w, ']');
  return chunk_close(&w, NULL);
}

/* chat.completion.chunk frames: role, text deltas, tool-call deltas (the
   first carries id and name), the finish chunk, [DONE]. Each frame is
   written field by field: a stream makes one per piece. */
int sim__openai_chat_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out) {
  sim_jw w;
  chunk_open(&w, id, model);
  sim__jw_kstr(&w, "role", "assistant");
  sim__jw_kstr(&w, "content", "");
  out->pre = chunk_close(&w, NULL);
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    chunk_open(&w, id, model);
    sim__jw_kstr(&w, "content", texts[i]);
    rc = sim__sse_push(out, chunk_close(&w, NULL));
  }
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++) {
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(s->tool_calls[t].arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++)
      rc = sim__sse_push(out, tool_chunk(id, model, t, &s->tool_calls[t], pieces[i], i == 0));
    sim__free_strv(pieces, np);
  }
  if (rc != SIM_OK) return rc;
  chunk_open(&w, id, model);
  out->tail = chunk_close(&w, finish_reason(s));
  out->marker = strdup("data: [DONE]\n\n");
  out->error = error_frame(s);
  return SIM_OK;
}

/* The legacy completion's finish reason: a tool call is no reason here. */
static const char *completion_finish(const sim_step *s) {
  return s && s->finish == SIM_FINISH_LENGTH   ? "length"
         : s && s->finish == SIM_FINISH_FILTER ? "content_filter"
                                               : "stop";
}

/* The fields a text_completion body and chunk share, id to choices, in an
   object w has open; finish NULL = null. */
static void completion_fields(sim_jw *w, const char *id, const char *model, const char *text,
                              const char *finish) {
  sim__jw_kstr(w, "id", id);
  sim__jw_kstr(w, "object", "text_completion");
  sim__jw_knum(w, "created", (double)time(NULL));
  sim__jw_kstr(w, "model", model);
  sim__jw_key(w, "choices");
  sim__jw_open(w, '[');
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "text", text);
  sim__jw_knum(w, "index", 0);
  sim__jw_knull(w, "logprobs");
  if (finish) sim__jw_kstr(w, "finish_reason", finish);
  else sim__jw_knull(w, "finish_reason");
  sim__jw_close(w, '}');
  sim__jw_close(w, ']');
}

/* text_completion (legacy POST /v1/completions). */
char *sim__completions_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  completion_fields(&w, id, model, text ? text : "", completion_finish(s));
  put_usage(&w, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* One legacy completion chunk: a text piece, or the finish. */
static char *completion_chunk(const char *id, const char *model, const char *text,
                              const char *finish) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__sse_open(&w, NULL);
  completion_fields(&w, id, model, text, finish);
  sim__sse_close(&w);
  return sim__jw_take(&w);
}

/* Legacy completion chunks: one per text piece, a finish chunk, [DONE]. */
int sim__completions_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++)
    rc = sim__sse_push(out, completion_chunk(id, model, texts[i], NULL));
  if (rc != SIM_OK) return rc;
  out->tail = completion_chunk(id, model, "", completion_finish(s));
  out->marker = strdup("data: [DONE]\n\n");
  out->error = error_frame(s);
  return SIM_OK;
}

/* A deterministic unit vector derived from text, so equal inputs embed
   equally and different ones differ, written as w's next value. */
static void put_vector(sim_jw *w, const char *text) {
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
  sim__jw_open(w, '[');
  for (int i = 0; i < DIM; i++) sim__jw_num(w, round(v[i] / norm * 1e6) / 1e6);
  sim__jw_close(w, ']');
}

/* The embeddings list: ninputs vectors derived from text and their index. */
char *sim__embeddings_body(const char *model, const char *text, int ninputs, int tokens_in) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "object", "list");
  sim__jw_key(&w, "data");
  sim__jw_open(&w, '[');
  for (int i = 0; i < (ninputs > 0 ? ninputs : 1); i++) {
    char seed[32];
    snprintf(seed, sizeof seed, "%d:", i);
    char *t = malloc(strlen(seed) + strlen(text ? text : "") + 1);
    if (t == NULL) {
      sim__jw_free(&w);
      return NULL;
    }
    strcpy(t, seed);
    strcat(t, text ? text : "");
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "object", "embedding");
    sim__jw_knum(&w, "index", i);
    sim__jw_key(&w, "embedding");
    put_vector(&w, t);
    sim__jw_close(&w, '}');
    free(t);
  }
  sim__jw_close(&w, ']');
  sim__jw_kstr(&w, "model", model);
  sim__jw_key(&w, "usage");
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "prompt_tokens", tokens_in);
  sim__jw_knum(&w, "total_tokens", tokens_in);
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* GET /v1/models: the one model the step names (or the default). */
char *sim__models_body(const char *model) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "object", "list");
  sim__jw_key(&w, "data");
  sim__jw_open(&w, '[');
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "id", model);
  sim__jw_kstr(&w, "object", "model");
  sim__jw_knum(&w, "created", 1700000000);
  sim__jw_kstr(&w, "owned_by", "fusebox");
  sim__jw_close(&w, '}');
  sim__jw_close(&w, ']');
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}
