/* test_dialect_bytes.c - every answer body, error body and stream frame the
   dialects write field by field (sim/json_write.c, issue 13) is byte for
   byte what the cJSON trees they were built as before printed. The old
   tree-building code is kept here as the reference (ref_*); the clock's
   values (created, created_at) are read back from what was written and fed
   to it in the order it asks for them. */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dialect_int.h"

/* ------------------------------------------------------------ the clock */

#define MAX_TIMES 64
static double ref_times[MAX_TIMES];
static int ref_ntimes, ref_next;

/* Collects every "created" and "created_at" in s, in order, after those
   already collected. */
static void times_from(const char *s) {
  static const char *const keys[] = {"\"created\":", "\"created_at\":"};
  while (s != NULL) {
    const char *best = NULL;
    size_t klen = 0;
    for (int k = 0; k < 2; k++) {
      const char *at = strstr(s, keys[k]);
      if (at != NULL && (best == NULL || at < best)) {
        best = at;
        klen = strlen(keys[k]);
      }
    }
    if (best == NULL) return;
    if (ref_ntimes < MAX_TIMES) ref_times[ref_ntimes++] = strtod(best + klen, NULL);
    s = best + klen;
  }
}

static void times_reset(void) { ref_ntimes = ref_next = 0; }

/* What the reference asks the clock for: the next time written. */
static double ref_clock(void) { return ref_next < ref_ntimes ? ref_times[ref_next++] : -1; }

static void times_from_sse(const sim_sse *o) {
  times_reset();
  times_from(o->pre);
  for (int i = 0; i < o->nchunks; i++) times_from(o->chunk[i]);
  times_from(o->tail);
  times_from(o->marker);
  times_from(o->error);
}

/* ----------------------------------------------- the old shared pieces */

static char *ref_print_free(cJSON *o) {
  if (o == NULL) return NULL;
  char *s = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  return s;
}

static char *ref_frame(const char *event, cJSON *data) {
  char *json = ref_print_free(data);
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

static char *ref_concat2(char *a, char *b) {
  if (a == NULL || b == NULL) {
    free(a);
    free(b);
    return NULL;
  }
  size_t la = strlen(a), lb = strlen(b);
  char *r = malloc(la + lb + 1);
  memcpy(r, a, la);
  memcpy(r + la, b, lb + 1);
  free(a);
  free(b);
  return r;
}

static cJSON *ref_tool_args_json(const sim_tool_call *tc) {
  cJSON *j = tc->arguments ? cJSON_Parse(tc->arguments) : NULL;
  if (j == NULL) j = cJSON_CreateObject();
  return j;
}

/* A stream as the reference builds it: frames pushed in order. */
static void ref_push(sim_sse *o, char *frame) {
  if (o->nchunks == o->cap) {
    o->cap = o->cap ? o->cap * 2 : 16;
    o->chunk = realloc(o->chunk, (size_t)o->cap * sizeof *o->chunk);
  }
  o->chunk[o->nchunks++] = frame;
}

/* ------------------------------------------------------------- asserts */

static void same_str(const char *what, const char *got, const char *want) {
  int same = got != NULL && want != NULL && strcmp(got, want) == 0;
  CU_ASSERT(same);
  if (!same)
    fprintf(stderr, "\n%s\n got  %s\n want %s\n", what, got ? got : "(null)",
            want ? want : "(null)");
}

/* got equals the reference want (printed and deleted). */
static void same_tree(const char *what, const char *got, cJSON *want) {
  char *w = ref_print_free(want);
  same_str(what, got, w);
  free(w);
}

static void same_sse(const char *what, const sim_sse *got, const sim_sse *want) {
  CU_ASSERT_EQUAL(got->nchunks, want->nchunks);
  same_str(what, got->pre, want->pre);
  for (int i = 0; i < got->nchunks && i < want->nchunks; i++)
    same_str(what, got->chunk[i], want->chunk[i]);
  same_str(what, got->tail, want->tail);
  same_str(what, got->marker, want->marker);
  same_str(what, got->error, want->error);
}

/* -------------------------------------------------------------- inputs */

static const char *const TEXTS[] = {
    "hello",
    "line\nbreak \"quoted\" caf\xc3\xa9 \x01 tab\t back\\slash /slash \xf0\x9f\x98\x80",
    "",
    NULL,
    "bad bytes \xff\xc3( pass as cJSON passes them",
};
#define NTEXTS ((int)(sizeof TEXTS / sizeof TEXTS[0]))

/* Argument texts: valid (in cJSON's printed form and not), invalid, long
   enough to stream in several pieces (one cut inside a UTF-8 sequence). */
static const char *const ARGS[] = {
    "{\"city\":\"Paris\"}",
    "not json",
    "",
    "{ \"a\" : [1.0, 2e3, \"\\u00e9\\/\", 0.30000000000000004] }",
    "{\"q\":\"caf\xc3\xa9 z\xc3\xbcrich \\\"x\\\" \\n\",\"n\":-0,\"f\":1.5,\"big\":1e+300}",
    "[1,2,3] trailing",
    "\"just a string\"",
    "42",
};
#define NARGS ((int)(sizeof ARGS / sizeof ARGS[0]))

static sim_tool_call TOOLS[NARGS];

/* Step s with k tool calls (from first, wrapping), the given finish. */
static void set_tools(sim_step *s, int first, int k) {
  for (int i = 0; i < NARGS; i++) {
    static char ids[NARGS][16];
    snprintf(ids[i], sizeof ids[i], "call_%d", i);
    TOOLS[i].id = ids[i];
    TOOLS[i].name = i % 2 ? "send\"mail" : "get_weather";
    TOOLS[i].arguments = (char *)ARGS[i];
  }
  s->tool_calls = k ? TOOLS + first : NULL;
  s->ntool_calls = k;
}

static sim_step base_step(void) {
  sim_step s;
  memset(&s, 0, sizeof s);
  s.kind = SIM_STEP_STREAM;
  s.usage_in = s.usage_out = -1;
  s.drop_after = s.stall_after = s.error_after = -1;
  return s;
}

/* Text pieces for a stream: none, one, or several with escapes. */
static char *PIECES[] = {"Hello", " \"world\"\n", " caf\xc3\xa9", " \xc3", "\xa9 end"};

/* The shapes every stream test runs over: (tools first, tools count,
   text pieces, finish, error step). */
typedef struct stream_case {
  int first, ntools, ntexts, finish, status;
  const char *code, *type, *message;
  int error_after;
} stream_case;

static const stream_case STREAMS[] = {
    {0, 0, 5, SIM_FINISH_STOP, 0, NULL, NULL, NULL, -1},
    {0, 0, 1, SIM_FINISH_LENGTH, 429, NULL, NULL, NULL, 0},
    {0, 2, 2, SIM_FINISH_STOP, 500, "custom_code", "custom_type", "boom \"q\"\n", 1},
    {0, 2, 0, SIM_FINISH_FILTER, 503, NULL, NULL, NULL, 2},
    {2, 6, 3, SIM_FINISH_STOP, 0, "insufficient_quota", NULL, NULL, 7},
    {4, 1, 0, SIM_FINISH_LENGTH, 529, NULL, NULL, NULL, -1},
};
#define NSTREAMS ((int)(sizeof STREAMS / sizeof STREAMS[0]))

static sim_step stream_step(const stream_case *c) {
  sim_step s = base_step();
  set_tools(&s, c->first, c->ntools);
  s.finish = c->finish;
  s.status = c->status;
  s.code = (char *)c->code;
  s.type = (char *)c->type;
  s.message = (char *)c->message;
  s.error_after = c->error_after;
  return s;
}

/* Error inputs: status, code, type, message. */
typedef struct err_case {
  int status;
  const char *code, *type, *message;
} err_case;

static const err_case ERRS[] = {
    {400, NULL, NULL, NULL},
    {401, NULL, NULL, "bad key \"k\"\n"},
    {402, NULL, NULL, NULL},
    {404, "model_gone", "my_type", NULL},
    {418, NULL, NULL, NULL},
    {429, "insufficient_quota", NULL, NULL},
    {500, NULL, NULL, "caf\xc3\xa9"},
    {503, NULL, NULL, NULL},
    {529, NULL, "overloaded_error", NULL},
    {599, NULL, NULL, NULL},
};
#define NERRS ((int)(sizeof ERRS / sizeof ERRS[0]))

/* ====================================================== OpenAI (old code) */

static const char *ref_oa_finish(const sim_step *s) {
  if (s == NULL) return "stop";
  if (s->finish == SIM_FINISH_LENGTH) return "length";
  if (s->finish == SIM_FINISH_FILTER) return "content_filter";
  return s->ntool_calls > 0 ? "tool_calls" : "stop";
}

static cJSON *ref_oa_error_object(int status, const char *code, const char *type,
                                  const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  cJSON *o = cJSON_CreateObject();
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

static cJSON *ref_oa_error_body(int status, const char *code, const char *type,
                                const char *message) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "error", ref_oa_error_object(status, code, type, message));
  return o;
}

static void ref_add_usage(cJSON *o, int tokens_in, int tokens_out) {
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "prompt_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "completion_tokens", tokens_out);
  cJSON_AddNumberToObject(usage, "total_tokens", tokens_in + tokens_out);
}

static cJSON *ref_chat_chunk(const char *id, const char *model, cJSON *delta,
                             const char *finish) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "chat.completion.chunk");
  cJSON_AddNumberToObject(o, "created", ref_clock());
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

static cJSON *ref_tool_delta(int index, const sim_tool_call *tc, const char *piece, int first) {
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

static void ref_chat_sse(const sim_step *s, const char *id, const char *model, char **texts,
                         int ntexts, sim_sse *out) {
  cJSON *delta = cJSON_CreateObject();
  cJSON_AddStringToObject(delta, "role", "assistant");
  cJSON_AddStringToObject(delta, "content", "");
  out->pre = ref_frame(NULL, ref_chat_chunk(id, model, delta, NULL));
  for (int i = 0; i < ntexts; i++) {
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "content", texts[i]);
    ref_push(out, ref_frame(NULL, ref_chat_chunk(id, model, d, NULL)));
  }
  for (int t = 0; t < s->ntool_calls; t++) {
    char **pieces = NULL;
    int np = 0;
    sim__split_args(s->tool_calls[t].arguments, &pieces, &np);
    for (int i = 0; i < np; i++)
      ref_push(out, ref_frame(NULL, ref_chat_chunk(id, model,
                                                   ref_tool_delta(t, &s->tool_calls[t],
                                                                  pieces[i], i == 0),
                                                   NULL)));
    sim__free_strv(pieces, np);
  }
  out->tail = ref_frame(NULL, ref_chat_chunk(id, model, cJSON_CreateObject(), ref_oa_finish(s)));
  out->marker = strdup("data: [DONE]\n\n");
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", ref_oa_error_object(s->status ? s->status : 500, s->code,
                                                          s->type, s->message));
  out->error = ref_frame(NULL, err);
}

static cJSON *ref_completions_body(const sim_step *s, const char *id, const char *model,
                                   const char *text, int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "text_completion");
  cJSON_AddNumberToObject(o, "created", ref_clock());
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
  ref_add_usage(o, tokens_in, tokens_out);
  return o;
}

static cJSON *ref_completion_chunk(const char *id, const char *model, const char *text,
                                   const char *finish) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "object", "text_completion");
  cJSON_AddNumberToObject(o, "created", ref_clock());
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

static void ref_completions_sse(const sim_step *s, const char *id, const char *model,
                                char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  for (int i = 0; i < ntexts; i++)
    ref_push(out, ref_frame(NULL, ref_completion_chunk(id, model, texts[i], NULL)));
  const char *fin = s->finish == SIM_FINISH_LENGTH   ? "length"
                    : s->finish == SIM_FINISH_FILTER ? "content_filter"
                                                     : "stop";
  out->tail = ref_frame(NULL, ref_completion_chunk(id, model, "", fin));
  out->marker = strdup("data: [DONE]\n\n");
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", ref_oa_error_object(s->status ? s->status : 500, s->code,
                                                          s->type, s->message));
  out->error = ref_frame(NULL, err);
}

static cJSON *ref_vector_of(const char *text) {
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

static cJSON *ref_embeddings_body(const char *model, const char *text, int ninputs,
                                  int tokens_in) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(o, "data");
  for (int i = 0; i < (ninputs > 0 ? ninputs : 1); i++) {
    char seed[32];
    snprintf(seed, sizeof seed, "%d:", i);
    char *t = malloc(strlen(seed) + strlen(text ? text : "") + 1);
    strcpy(t, seed);
    strcat(t, text ? text : "");
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "object", "embedding");
    cJSON_AddNumberToObject(e, "index", i);
    cJSON_AddItemToObject(e, "embedding", ref_vector_of(t));
    cJSON_AddItemToArray(data, e);
    free(t);
  }
  cJSON_AddStringToObject(o, "model", model);
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "prompt_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "total_tokens", tokens_in);
  return o;
}

static cJSON *ref_models_body(const char *model) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "object", "list");
  cJSON *data = cJSON_AddArrayToObject(o, "data");
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "id", model);
  cJSON_AddStringToObject(m, "object", "model");
  cJSON_AddNumberToObject(m, "created", 1700000000);
  cJSON_AddStringToObject(m, "owned_by", "fusebox");
  cJSON_AddItemToArray(data, m);
  return o;
}

/* =================================================== Anthropic (old code) */

static const char *ref_an_stop(const sim_step *s) {
  if (s == NULL) return "end_turn";
  if (s->finish == SIM_FINISH_LENGTH) return "max_tokens";
  if (s->finish == SIM_FINISH_FILTER) return "refusal";
  return s->ntool_calls > 0 ? "tool_use" : "end_turn";
}

static cJSON *ref_an_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
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
    cJSON_AddItemToObject(b, "input", ref_tool_args_json(&s->tool_calls[i]));
    cJSON_AddItemToArray(content, b);
  }
  cJSON_AddStringToObject(o, "stop_reason", ref_an_stop(s));
  cJSON_AddNullToObject(o, "stop_sequence");
  cJSON *usage = cJSON_AddObjectToObject(o, "usage");
  cJSON_AddNumberToObject(usage, "input_tokens", tokens_in);
  cJSON_AddNumberToObject(usage, "output_tokens", tokens_out);
  return o;
}

static cJSON *ref_an_error_object(int status, const char *type, const char *message) {
  const sim__err_default *def = sim__err_default_for(status);
  cJSON *o = cJSON_CreateObject();
  const char *t = type ? type : def ? def->an_type
                                    : status >= 500 ? "api_error" : "invalid_request_error";
  cJSON_AddStringToObject(o, "type", t);
  cJSON_AddStringToObject(o, "message", sim__err_message(status, message));
  return o;
}

static cJSON *ref_an_error_body(int status, const char *type, const char *message) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "error");
  cJSON_AddItemToObject(o, "error", ref_an_error_object(status, type, message));
  return o;
}

static char *ref_block_start(int index, cJSON *block) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "content_block_start");
  cJSON_AddNumberToObject(o, "index", index);
  cJSON_AddItemToObject(o, "content_block", block);
  return ref_frame("content_block_start", o);
}

static char *ref_block_stop(int index) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "type", "content_block_stop");
  cJSON_AddNumberToObject(o, "index", index);
  return ref_frame("content_block_stop", o);
}

static char *ref_block_delta(int index, const char *dtype, const char *field, const char *v) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "type", "content_block_delta");
  cJSON_AddNumberToObject(d, "index", index);
  cJSON *delta = cJSON_AddObjectToObject(d, "delta");
  cJSON_AddStringToObject(delta, "type", dtype);
  cJSON_AddStringToObject(delta, field, v);
  return ref_frame("content_block_delta", d);
}

static void ref_an_sse(const sim_step *s, const char *id, const char *model, int tokens_in,
                       int tokens_out, char **texts, int ntexts, sim_sse *out) {
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
  out->pre = ref_frame("message_start", start);
  if (text_block) {
    cJSON *block = cJSON_CreateObject();
    cJSON_AddStringToObject(block, "type", "text");
    cJSON_AddStringToObject(block, "text", "");
    out->pre = ref_concat2(out->pre, ref_block_start(0, block));
  }
  out->pre = ref_concat2(out->pre, ref_frame("ping", ping));
  for (int i = 0; i < ntexts; i++)
    ref_push(out, ref_block_delta(0, "text_delta", "text", texts[i]));
  int index = text_block ? 1 : 0;
  char *carry = text_block ? ref_block_stop(0) : strdup("");
  for (int t = 0; t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "type", "tool_use");
    cJSON_AddStringToObject(b, "id", tc->id);
    cJSON_AddStringToObject(b, "name", tc->name);
    cJSON_AddObjectToObject(b, "input");
    char **pieces = NULL;
    int np = 0;
    sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; i < np; i++) {
      char *f = ref_block_delta(index, "input_json_delta", "partial_json", pieces[i]);
      if (i == 0) {
        f = ref_concat2(ref_concat2(carry, ref_block_start(index, b)), f);
        b = NULL;
        carry = NULL;
      }
      ref_push(out, f);
    }
    cJSON_Delete(b);
    sim__free_strv(pieces, np);
    carry = ref_block_stop(index);
  }
  cJSON *mdelta = cJSON_CreateObject();
  cJSON_AddStringToObject(mdelta, "type", "message_delta");
  cJSON *dd = cJSON_AddObjectToObject(mdelta, "delta");
  cJSON_AddStringToObject(dd, "stop_reason", ref_an_stop(s));
  cJSON_AddNullToObject(dd, "stop_sequence");
  cJSON *u = cJSON_AddObjectToObject(mdelta, "usage");
  cJSON_AddNumberToObject(u, "output_tokens", tokens_out);
  out->tail = ref_concat2(carry, ref_frame("message_delta", mdelta));
  cJSON *stop = cJSON_CreateObject();
  cJSON_AddStringToObject(stop, "type", "message_stop");
  out->marker = ref_frame("message_stop", stop);
  cJSON *err = cJSON_CreateObject();
  cJSON_AddStringToObject(err, "type", "error");
  cJSON_AddItemToObject(err, "error", ref_an_error_object(s->status ? s->status : 529, s->type,
                                                          s->message));
  out->error = ref_frame("error", err);
}

/* =================================================== Responses (old code) */

static const char *ref_rs_reason(const sim_step *s) {
  if (s == NULL) return NULL;
  if (s->finish == SIM_FINISH_LENGTH) return "max_output_tokens";
  if (s->finish == SIM_FINISH_FILTER) return "content_filter";
  return NULL;
}

static void ref_item_id(char *out, size_t cap, const char *kind, const char *id, int i) {
  snprintf(out, cap, "%s_%s_%d", kind, id, i);
}

static cJSON *ref_message_item(const char *id, const char *text, int done) {
  char mid[96];
  ref_item_id(mid, sizeof mid, "msg", id, 0);
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

static cJSON *ref_call_item(const char *id, int i, const sim_tool_call *tc, int done) {
  char fid[96];
  ref_item_id(fid, sizeof fid, "fc", id, i);
  cJSON *f = cJSON_CreateObject();
  cJSON_AddStringToObject(f, "id", fid);
  cJSON_AddStringToObject(f, "type", "function_call");
  cJSON_AddStringToObject(f, "status", done ? "completed" : "in_progress");
  cJSON_AddStringToObject(f, "call_id", tc->id);
  cJSON_AddStringToObject(f, "name", tc->name);
  cJSON_AddStringToObject(f, "arguments", done && tc->arguments ? tc->arguments : "");
  return f;
}

static cJSON *ref_response_obj(const char *id, const char *model, const char *status,
                               const char *reason, cJSON *output, int tokens_in,
                               int tokens_out, int with_usage, cJSON *error) {
  cJSON *r = cJSON_CreateObject();
  char rid[64];
  snprintf(rid, sizeof rid, "resp_%s", id);
  cJSON_AddStringToObject(r, "id", rid);
  cJSON_AddStringToObject(r, "object", "response");
  cJSON_AddNumberToObject(r, "created_at", ref_clock());
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

static cJSON *ref_full_output(const sim_step *s, const char *id, const char *text) {
  cJSON *out = cJSON_CreateArray();
  int ntools = s ? s->ntool_calls : 0;
  if (text != NULL || ntools == 0) cJSON_AddItemToArray(out, ref_message_item(id, text, 1));
  for (int i = 0; i < ntools; i++)
    cJSON_AddItemToArray(out, ref_call_item(id, i, &s->tool_calls[i], 1));
  return out;
}

static cJSON *ref_rs_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out) {
  const char *reason = ref_rs_reason(s);
  return ref_response_obj(id, model, reason ? "incomplete" : "completed", reason,
                          ref_full_output(s, id, text), tokens_in, tokens_out, 1, NULL);
}

typedef struct ref_seqb {
  int seq;
} ref_seqb;

static char *ref_ev(ref_seqb *b, const char *type, cJSON *data) {
  cJSON_AddStringToObject(data, "type", type);
  cJSON_AddNumberToObject(data, "sequence_number", b->seq++);
  return ref_frame(type, data);
}

static char *ref_ev_response(ref_seqb *b, const char *type, cJSON *resp) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddItemToObject(d, "response", resp);
  return ref_ev(b, type, d);
}

static char *ref_ev_item(ref_seqb *b, const char *type, int index, cJSON *item) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddNumberToObject(d, "output_index", index);
  cJSON_AddItemToObject(d, "item", item);
  return ref_ev(b, type, d);
}

static cJSON *ref_text_part(const char *text) {
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "type", "output_text");
  cJSON_AddStringToObject(p, "text", text);
  cJSON_AddArrayToObject(p, "annotations");
  cJSON_AddArrayToObject(p, "logprobs");
  return p;
}

static cJSON *ref_part_ev(const char *mid, const char *text, int with_part) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "item_id", mid);
  cJSON_AddNumberToObject(d, "output_index", 0);
  cJSON_AddNumberToObject(d, "content_index", 0);
  if (with_part) cJSON_AddItemToObject(d, "part", ref_text_part(text));
  return d;
}

static char *ref_join_texts(char **texts, int ntexts) {
  size_t len = 0;
  for (int i = 0; i < ntexts; i++) len += strlen(texts[i]);
  char *t = malloc(len + 1);
  t[0] = '\0';
  for (int i = 0; i < ntexts; i++) strcat(t, texts[i]);
  return t;
}

static char *ref_error_frames(const sim_step *s, const char *id, const char *model, int seq) {
  ref_seqb b = {seq};
  int status = s->status ? s->status : 500;
  const sim__err_default *def = sim__err_default_for(status);
  const char *code = s->code ? s->code : def && def->oa_code ? def->oa_code : "server_error";
  const char *msg = sim__err_message(status, s->message);
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "code", code);
  cJSON_AddStringToObject(e, "message", msg);
  cJSON_AddNullToObject(e, "param");
  char *f = ref_ev(&b, "error", e);
  cJSON *err = cJSON_CreateObject();
  cJSON_AddStringToObject(err, "code", code);
  cJSON_AddStringToObject(err, "message", msg);
  return ref_concat2(f, ref_ev_response(&b, "response.failed",
                                        ref_response_obj(id, model, "failed", NULL, NULL, 0, 0,
                                                         0, err)));
}

/* The old stream, with one change: where it joined two events in one call
   (concat2(ev(a), ev(b))) their sequence numbers followed the compiler's
   order of evaluating arguments (GCC: b before a). Here each event is built
   in its own statement, in wire order, as the new writer numbers them. */
static void ref_rs_sse(const sim_step *s, const char *id, const char *model, int tokens_in,
                       int tokens_out, char **texts, int ntexts, sim_sse *out) {
  ref_seqb b = {0};
  int err_seq = -1;
  int text_item = ntexts > 0 || s->ntool_calls == 0;
  char mid[96];
  ref_item_id(mid, sizeof mid, "msg", id, 0);
  char *created = ref_ev_response(
      &b, "response.created",
      ref_response_obj(id, model, "in_progress", NULL, NULL, 0, 0, 0, NULL));
  char *in_progress = ref_ev_response(
      &b, "response.in_progress",
      ref_response_obj(id, model, "in_progress", NULL, NULL, 0, 0, 0, NULL));
  out->pre = ref_concat2(created, in_progress);
  if (text_item) {
    out->pre = ref_concat2(out->pre, ref_ev_item(&b, "response.output_item.added", 0,
                                                 ref_message_item(id, NULL, 0)));
    out->pre = ref_concat2(out->pre, ref_ev(&b, "response.content_part.added",
                                            ref_part_ev(mid, "", 1)));
  }
  int pushed = 0;
  for (int i = 0; i < ntexts; i++, pushed++) {
    if (pushed == s->error_after) err_seq = b.seq;
    cJSON *d = ref_part_ev(mid, NULL, 0);
    cJSON_AddStringToObject(d, "delta", texts[i]);
    cJSON_AddArrayToObject(d, "logprobs");
    ref_push(out, ref_ev(&b, "response.output_text.delta", d));
  }
  char *text = ref_join_texts(texts, ntexts);
  char *carry = strdup("");
  int carry_seq = b.seq;
  if (text_item) {
    cJSON *done = ref_part_ev(mid, NULL, 0);
    cJSON_AddStringToObject(done, "text", text);
    cJSON_AddArrayToObject(done, "logprobs");
    carry = ref_concat2(carry, ref_ev(&b, "response.output_text.done", done));
    carry = ref_concat2(carry, ref_ev(&b, "response.content_part.done", ref_part_ev(mid, text, 1)));
    carry = ref_concat2(carry, ref_ev_item(&b, "response.output_item.done", 0,
                                           ref_message_item(id, text, 1)));
  }
  int index = text_item ? 1 : 0;
  for (int t = 0; t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    char fid[96];
    ref_item_id(fid, sizeof fid, "fc", id, t);
    char **pieces = NULL;
    int np = 0;
    sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; i < np; i++, pushed++) {
      if (pushed == s->error_after) err_seq = i == 0 ? carry_seq : b.seq;
      char *f = NULL;
      if (i == 0) {
        f = ref_concat2(carry, ref_ev_item(&b, "response.output_item.added", index,
                                           ref_call_item(id, t, tc, 0)));
        carry = NULL;
      } else {
        f = strdup("");
      }
      cJSON *d = cJSON_CreateObject();
      cJSON_AddStringToObject(d, "item_id", fid);
      cJSON_AddNumberToObject(d, "output_index", index);
      cJSON_AddStringToObject(d, "delta", pieces[i]);
      f = ref_concat2(f, ref_ev(&b, "response.function_call_arguments.delta", d));
      ref_push(out, f);
    }
    sim__free_strv(pieces, np);
    carry_seq = b.seq;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "item_id", fid);
    cJSON_AddNumberToObject(d, "output_index", index);
    cJSON_AddStringToObject(d, "arguments", tc->arguments ? tc->arguments : "");
    char *args_done = ref_ev(&b, "response.function_call_arguments.done", d);
    char *item_done = ref_ev_item(&b, "response.output_item.done", index,
                                  ref_call_item(id, t, tc, 1));
    carry = ref_concat2(args_done, item_done);
  }
  if (err_seq < 0) err_seq = carry_seq;
  out->tail = carry;
  const char *reason = ref_rs_reason(s);
  cJSON *output = ref_full_output(s, id, ntexts ? text : NULL);
  out->marker = ref_ev_response(&b, reason ? "response.incomplete" : "response.completed",
                                ref_response_obj(id, model, reason ? "incomplete" : "completed",
                                                 reason, output, tokens_in, tokens_out, 1, NULL));
  out->error = ref_error_frames(s, id, model, err_seq);
  free(text);
}

/* ====================================================== Gemini (old code) */

static const char *ref_rpc_status(int status) {
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

static const char *ref_gm_finish(const sim_step *s) {
  if (s != NULL && s->finish == SIM_FINISH_LENGTH) return "MAX_TOKENS";
  if (s != NULL && s->finish == SIM_FINISH_FILTER) return "SAFETY";
  return "STOP";
}

static cJSON *ref_gm_usage(int tokens_in, int tokens_out) {
  cJSON *u = cJSON_CreateObject();
  cJSON_AddNumberToObject(u, "promptTokenCount", tokens_in);
  cJSON_AddNumberToObject(u, "candidatesTokenCount", tokens_out);
  cJSON_AddNumberToObject(u, "totalTokenCount", tokens_in + tokens_out);
  return u;
}

static cJSON *ref_call_part(const sim_tool_call *tc) {
  cJSON *p = cJSON_CreateObject();
  cJSON *fc = cJSON_AddObjectToObject(p, "functionCall");
  cJSON_AddStringToObject(fc, "id", tc->id);
  cJSON_AddStringToObject(fc, "name", tc->name);
  cJSON_AddItemToObject(fc, "args", ref_tool_args_json(tc));
  return p;
}

static cJSON *ref_gm_response(cJSON *parts, const char *finish, const char *model,
                              int tokens_in, int tokens_out) {
  cJSON *o = cJSON_CreateObject();
  cJSON *cands = cJSON_AddArrayToObject(o, "candidates");
  cJSON *c = cJSON_CreateObject();
  cJSON *content = cJSON_AddObjectToObject(c, "content");
  cJSON_AddItemToObject(content, "parts", parts);
  cJSON_AddStringToObject(content, "role", "model");
  if (finish) cJSON_AddStringToObject(c, "finishReason", finish);
  cJSON_AddNumberToObject(c, "index", 0);
  cJSON_AddItemToArray(cands, c);
  if (tokens_out >= 0)
    cJSON_AddItemToObject(o, "usageMetadata", ref_gm_usage(tokens_in, tokens_out));
  cJSON_AddStringToObject(o, "modelVersion", model);
  return o;
}

static cJSON *ref_gm_body(const sim_step *s, const char *model, const char *text,
                          int tokens_in, int tokens_out) {
  cJSON *parts = cJSON_CreateArray();
  int ntools = s ? s->ntool_calls : 0;
  if (text != NULL || ntools == 0) {
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "text", text ? text : "");
    cJSON_AddItemToArray(parts, p);
  }
  for (int i = 0; i < ntools; i++) cJSON_AddItemToArray(parts, ref_call_part(&s->tool_calls[i]));
  return ref_gm_response(parts, ref_gm_finish(s), model, tokens_in, tokens_out);
}

static cJSON *ref_gm_error_object(int status, const char *code, const char *message,
                                  double retry_s) {
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "code", status);
  cJSON_AddStringToObject(e, "message", sim__err_message(status, message));
  cJSON_AddStringToObject(e, "status", code ? code : ref_rpc_status(status));
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

static cJSON *ref_gm_error_body(int status, const char *code, const char *message,
                                double retry_s) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddItemToObject(o, "error", ref_gm_error_object(status, code, message, retry_s));
  return o;
}

static void ref_gm_sse(const sim_step *s, const char *model, int tokens_in, int tokens_out,
                       char **texts, int ntexts, sim_sse *out) {
  out->pre = strdup("");
  for (int i = 0; i < ntexts; i++) {
    cJSON *parts = cJSON_CreateArray();
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "text", texts[i]);
    cJSON_AddItemToArray(parts, p);
    ref_push(out, ref_frame(NULL, ref_gm_response(parts, NULL, model, tokens_in, -1)));
  }
  for (int t = 0; t < s->ntool_calls; t++) {
    cJSON *parts = cJSON_CreateArray();
    cJSON_AddItemToArray(parts, ref_call_part(&s->tool_calls[t]));
    ref_push(out, ref_frame(NULL, ref_gm_response(parts, NULL, model, tokens_in, -1)));
  }
  out->tail = strdup("");
  cJSON *last = cJSON_CreateArray();
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "text", "");
  cJSON_AddItemToArray(last, p);
  out->marker = ref_frame(NULL, ref_gm_response(last, ref_gm_finish(s), model, tokens_in,
                                                tokens_out));
  cJSON *err = cJSON_CreateObject();
  cJSON_AddItemToObject(err, "error", ref_gm_error_object(s->status ? s->status : 500, s->code,
                                                          s->message, -1));
  out->error = ref_frame(NULL, err);
}

/* ================================================================ tests */

#define ID "chatcmpl-1"
#define MODEL "model \"x\" caf\xc3\xa9"

/* Each answer body over every text, with and without tool calls, every
   finish. */
static void test_bodies(void) {
  static const int finishes[] = {SIM_FINISH_STOP, SIM_FINISH_LENGTH, SIM_FINISH_FILTER};
  for (int f = 0; f < 3; f++)
    for (int k = 0; k <= NARGS; k += NARGS / 2) {
      sim_step s = base_step();
      s.kind = SIM_STEP_CHAT;
      s.finish = finishes[f];
      set_tools(&s, 0, k);
      for (int i = 0; i < NTEXTS; i++) {
        const char *text = TEXTS[i];
        for (int null_step = 0; null_step < 2; null_step++) {
          const sim_step *sp = null_step ? NULL : &s;
          if (null_step && (f > 0 || k > 0)) continue;
          char *got = sim__completions_body(sp, ID, MODEL, text, 12, 3);
          times_reset();
          times_from(got);
          same_tree("completions", got, ref_completions_body(sp, ID, MODEL, text, 12, 3));
          free(got);

          got = sim__anthropic_body(sp, ID, MODEL, text, 12, 3);
          same_tree("anthropic", got, ref_an_body(sp, ID, MODEL, text, 12, 3));
          free(got);

          got = sim__responses_body(sp, ID, MODEL, text, 12, 3);
          times_reset();
          times_from(got);
          same_tree("responses", got, ref_rs_body(sp, ID, MODEL, text, 12, 3));
          free(got);

          got = sim__gemini_body(sp, MODEL, text, 12, 3);
          same_tree("gemini", got, ref_gm_body(sp, MODEL, text, 12, 3));
          free(got);
        }
      }
    }
}

/* Embeddings and the model list (no clock in either). */
static void test_embeddings_models(void) {
  for (int i = 0; i < NTEXTS; i++)
    for (int n = 0; n <= 3; n++) {
      char *got = sim__embeddings_body(MODEL, TEXTS[i], n, 7);
      same_tree("embeddings", got, ref_embeddings_body(MODEL, TEXTS[i], n, 7));
      free(got);
    }
  char *got = sim__models_body(MODEL);
  same_tree("models", got, ref_models_body(MODEL));
  free(got);
}

/* Error bodies through the dispatcher, every status, code and type. */
static void test_error_bodies(void) {
  static const double retries[] = {-1, 0, 2, 1.5};
  for (int i = 0; i < NERRS; i++) {
    const err_case *e = &ERRS[i];
    char *got = sim__error_body(SIM_DIALECT_OPENAI, e->status, e->code, e->type, e->message);
    same_tree("openai error", got, ref_oa_error_body(e->status, e->code, e->type, e->message));
    free(got);
    got = sim__error_body(SIM_DIALECT_RESPONSES, e->status, e->code, e->type, e->message);
    same_tree("responses error", got,
              ref_oa_error_body(e->status, e->code, e->type, e->message));
    free(got);
    got = sim__error_body(SIM_DIALECT_ANTHROPIC, e->status, e->code, e->type, e->message);
    same_tree("anthropic error", got, ref_an_error_body(e->status, e->type, e->message));
    free(got);
    for (int r = 0; r < 4; r++) {
      got = sim__error_body_retry(SIM_DIALECT_GEMINI, e->status, e->code, e->type, e->message,
                                  retries[r]);
      same_tree("gemini error", got, ref_gm_error_body(e->status, e->code, e->message, retries[r]));
      free(got);
    }
  }
}

/* Every stream over the shapes in STREAMS, each dialect against its old
   frames. */
static void test_streams(void) {
  for (int c = 0; c < NSTREAMS; c++) {
    sim_step s = stream_step(&STREAMS[c]);
    int n = STREAMS[c].ntexts;
    for (int d = 0; d < 5; d++) {
      sim_sse got, want;
      memset(&got, 0, sizeof got);
      memset(&want, 0, sizeof want);
      int rc;
      const char *what;
      switch (d) {
      case 0:
        what = "openai chat stream";
        rc = sim__openai_chat_sse(&s, ID, MODEL, PIECES, n, &got);
        times_from_sse(&got);
        ref_chat_sse(&s, ID, MODEL, PIECES, n, &want);
        break;
      case 1:
        what = "completions stream";
        rc = sim__completions_sse(&s, ID, MODEL, PIECES, n, &got);
        times_from_sse(&got);
        ref_completions_sse(&s, ID, MODEL, PIECES, n, &want);
        break;
      case 2:
        what = "anthropic stream";
        rc = sim__anthropic_sse(&s, ID, MODEL, 12, 3, PIECES, n, &got);
        ref_an_sse(&s, ID, MODEL, 12, 3, PIECES, n, &want);
        break;
      case 3:
        what = "responses stream";
        rc = sim__responses_sse(&s, ID, MODEL, 12, 3, PIECES, n, &got);
        times_from_sse(&got);
        ref_rs_sse(&s, ID, MODEL, 12, 3, PIECES, n, &want);
        break;
      default:
        what = "gemini stream";
        rc = sim__gemini_sse(&s, MODEL, 12, 3, PIECES, n, &got);
        ref_gm_sse(&s, MODEL, 12, 3, PIECES, n, &want);
        break;
      }
      CU_ASSERT_EQUAL(rc, SIM_OK);
      same_sse(what, &got, &want);
      sim__sse_clear(&got);
      sim__sse_clear(&want);
    }
  }
}

/* The dispatcher's stream for every dialect agrees with the direct call
   (its token estimate included) on one shape. */
static void test_sse_build(void) {
  sim_step s = stream_step(&STREAMS[2]);
  sim_sse got, want;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_ANTHROPIC, &s, ID, MODEL, 12, PIECES, 2, &got),
                        SIM_OK);
  memset(&want, 0, sizeof want);
  int tout = 0;
  for (int i = 0; i < 2; i++) tout += sim__estimate_tokens(strlen(PIECES[i]));
  for (int i = 0; i < s.ntool_calls; i++)
    tout += sim__estimate_tokens(strlen(s.tool_calls[i].arguments) + strlen(s.tool_calls[i].name));
  ref_an_sse(&s, ID, MODEL, 12, tout, PIECES, 2, &want);
  same_sse("sse_build anthropic", &got, &want);
  sim__sse_clear(&got);
  sim__sse_clear(&want);
}

/* A small deterministic random source for the argument cases. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;
static unsigned rnd(unsigned n) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return (unsigned)(rnd_state % n);
}

/* A random JSON tree: the values cJSON prints in every form it has. */
static cJSON *rnd_tree(int depth) {
  static const double nums[] = {0, -0.0, 1, -42, 1.5, 0.1, 0.30000000000000004, 1e300, 1e-7,
                                123456789012345.0, 1e15, 3e9, 2.5e-308, 48.8566, -1e21};
  static const char *const strs[] = {"", "a", "caf\xc3\xa9", "q\"b\\s/", "\x01\x1f\x7f",
                                     "\b\f\n\r\t", "\xf0\x9f\x98\x80", "\xff raw"};
  unsigned k = depth > 3 ? rnd(5) : rnd(7);
  switch (k) {
  case 0: return cJSON_CreateNull();
  case 1: return cJSON_CreateBool((int)rnd(2));
  case 2: return cJSON_CreateNumber(nums[rnd(sizeof nums / sizeof nums[0])]);
  case 3:
  case 4: return cJSON_CreateString(strs[rnd(sizeof strs / sizeof strs[0])]);
  case 5: {
    cJSON *a = cJSON_CreateArray();
    for (unsigned i = rnd(4); i > 0; i--) cJSON_AddItemToArray(a, rnd_tree(depth + 1));
    return a;
  }
  default: {
    cJSON *o = cJSON_CreateObject();
    for (unsigned i = rnd(4); i > 0; i--)
      cJSON_AddItemToObject(o, strs[rnd(sizeof strs / sizeof strs[0])], rnd_tree(depth + 1));
    return o;
  }
  }
}

/* Arguments as Anthropic's input and Gemini's args: what cJSON prints for
   them parsed, whether they are in that form already (copied as they are),
   in another (parsed), or no JSON at all ({}). */
static void args_case(const char *args) {
  sim_tool_call tc = {.id = "call_1", .name = "f", .arguments = (char *)args};
  sim_step s = base_step();
  s.kind = SIM_STEP_CHAT;
  s.tool_calls = &tc;
  s.ntool_calls = 1;
  char *got = sim__anthropic_body(&s, ID, MODEL, NULL, 1, 2);
  same_tree(args, got, ref_an_body(&s, ID, MODEL, NULL, 1, 2));
  free(got);
  got = sim__gemini_body(&s, MODEL, NULL, 1, 2);
  same_tree(args, got, ref_gm_body(&s, MODEL, NULL, 1, 2));
  free(got);
}

static void test_tool_args(void) {
  static const char *const cases[] = {
      "{}", "[]", "{ }", "[ ]", "null", "nullx", "true", "false", "fals", "\"s\"", "0", "-0",
      "01", "-", "1.", ".5", "+1", "1e5", "1E5", "1e+05", "100000", "1.5", "1.50", "0.3",
      "0.30000000000000004", "1e+300", "1e999", "-1e-07", "123456789012345678",
      "1234567890123456789012345678901234567890123456789012345678901234567890",
      "{\"a\":1,\"a\":2}", "{\"\":\"\"}", "[1,]", "{,}", "[1 2]", "[1.2.3]", "1.2.3", "[]x",
      "{\"a\":\"\\u00e9\"}", "{\"a\":\"\\u001f\"}", "{\"a\":\"\\u001F\"}", "{\"a\":\"\\u0008\"}",
      "{\"a\":\"\\b\\f\\n\\r\\t\\\"\\\\\"}", "{\"a\":\"\\/\"}", "{\"a\":\"x\\u0000y\"}",
      "{\"a\":\"\\ud83d\\ude00\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\q\"}",
      "{\"a\":\"tab\there\"}", "{\"a\":\"\x7f\"}", "{\"caf\xc3\xa9\":\"\xff\"}",
      "\xef\xbb\xbf{\"a\":1}", " {\"a\":1}", "{\"a\":1} ", "{\"a\":[true,false,null,{}]}",
      "{\"a\":tru}", "{\"a\"}", "{\"a\":}", "{a:1}", "[\"unterminated", "\"\\",
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) args_case(cases[i]);
  /* Nesting past the fast path's depth, and past cJSON's own limit. */
  for (int depth = 60; depth <= 1010; depth += depth < 70 ? 5 : 470) {
    char *deep = malloc((size_t)depth * 2 + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(deep);
    memset(deep, '[', (size_t)depth);
    memset(deep + depth, ']', (size_t)depth);
    deep[depth * 2] = '\0';
    args_case(deep);
    free(deep);
  }
  /* Random trees, printed as cJSON prints them (the fast path) and
     formatted (the slow one). */
  for (int i = 0; i < 400; i++) {
    cJSON *t = rnd_tree(0);
    char *compact = cJSON_PrintUnformatted(t), *pretty = cJSON_Print(t);
    args_case(compact);
    args_case(pretty);
    free(compact);
    free(pretty);
    cJSON_Delete(t);
  }
  /* Random token soup: mostly not JSON. */
  static const char *const toks[] = {"{",    "}",    "[",          "]",       ":",
                                     ",",    " ",    "\"a\"",      "\"\\u00e9\"", "1",
                                     "-0",   "1.5",  "1e5",        "true",    "null",
                                     "\"\\/\"", "\xc3\xa9"};
  for (int i = 0; i < 2000; i++) {
    char buf[128] = "";
    for (unsigned k = 1 + rnd(8); k > 0; k--) strcat(buf, toks[rnd(sizeof toks / sizeof toks[0])]);
    args_case(buf);
  }
}

int suite_dialect_bytes(void) {
  CU_pSuite s = CU_add_suite("dialect_bytes", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "answer bodies: cJSON's bytes", test_bodies);
  CU_add_test(s, "embeddings and models: cJSON's bytes", test_embeddings_models);
  CU_add_test(s, "error bodies: cJSON's bytes", test_error_bodies);
  CU_add_test(s, "stream frames: cJSON's bytes", test_streams);
  CU_add_test(s, "sse_build: the dialect's frames", test_sse_build);
  CU_add_test(s, "tool arguments: what cJSON prints parsed", test_tool_args);
  return CU_get_error();
}
