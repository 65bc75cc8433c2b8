/*
 * dialect.c - the dispatchers the player calls: one answer, one error, one
 * stream, each handed to the file of the API that was hit (dialect_openai.c,
 * dialect_anthropic.c, dialect_responses.c, dialect_gemini.c,
 * dialect_ollama.c, dialect_cohere.c), which build from the shared pieces
 * in dialect_parts.c; and the routing of the APIs whose paths are their
 * own (Ollama, Cohere).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/dialect_int.h"

/* The response header that carries the request id in each dialect. */
const char *sim__request_id_header(sim_dialect d) {
  if (d == SIM_DIALECT_ANTHROPIC) return "request-id";
  return sim__dialect_binary(d) ? "x-amzn-requestid" : "x-request-id";
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
  case SIM_DIALECT_OLLAMA_CHAT: return "ollama-chat";
  case SIM_DIALECT_OLLAMA_GENERATE: return "ollama-generate";
  case SIM_DIALECT_COHERE: return "cohere";
  case SIM_DIALECT_BEDROCK: return "bedrock-converse";
  case SIM_DIALECT_BEDROCK_INVOKE: return "bedrock-invoke";
  }
  return "unknown";
}

/* 1 when the API answers with an SSE stream when asked to. */
int sim__dialect_streams(sim_dialect d) {
  return d != SIM_DIALECT_EMBEDDINGS && d != SIM_DIALECT_MODELS && d != SIM_DIALECT_EFFECT;
}

/* 1 when a request that does not say "stream" is streamed: Ollama's
   default. */
int sim__dialect_streams_by_default(sim_dialect d) {
  return d == SIM_DIALECT_OLLAMA_CHAT || d == SIM_DIALECT_OLLAMA_GENERATE;
}

/* 1 for Bedrock's binary event streams; see sim_int.h. */
int sim__dialect_binary(sim_dialect d) {
  return d == SIM_DIALECT_BEDROCK || d == SIM_DIALECT_BEDROCK_INVOKE;
}

/* The stream's content type; see sim_int.h. */
const char *sim__dialect_stream_ctype(sim_dialect d) {
  if (sim__dialect_streams_by_default(d)) return "application/x-ndjson";
  if (sim__dialect_binary(d)) return "application/vnd.amazon.eventstream";
  return "text/event-stream; charset=utf-8";
}

/* How a stream carries tool arguments; see sim_int.h. */
int sim__dialect_tool_form(sim_dialect d) {
  if (d == SIM_DIALECT_OLLAMA_GENERATE || !sim__dialect_streams(d)) return 0;
  return d == SIM_DIALECT_GEMINI || d == SIM_DIALECT_OLLAMA_CHAT ? 1 : 2;
}

/* Bedrock: /model/{modelId}/converse, /converse-stream, /invoke or
   /invoke-with-response-stream, the model id (libmicrohttpd has unescaped
   its %3A) copied into model. */
static int route_bedrock(const char *p, sim_dialect *d, char *model, size_t cap, int *stream) {
  if (strncmp(p, "/model/", 7) != 0) return 0;
  const char *id = p + 7, *slash = strchr(id, '/');
  if (slash == NULL || slash == id || (size_t)(slash - id) >= cap) return 0;
  static const struct { const char *op; sim_dialect d; int stream; } ops[] = {
      {"/converse", SIM_DIALECT_BEDROCK, 0},
      {"/converse-stream", SIM_DIALECT_BEDROCK, 1},
      {"/invoke", SIM_DIALECT_BEDROCK_INVOKE, 0},
      {"/invoke-with-response-stream", SIM_DIALECT_BEDROCK_INVOKE, 1},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(slash, ops[i].op) == 0) {
      memcpy(model, id, (size_t)(slash - id));
      model[slash - id] = '\0';
      *d = ops[i].d;
      *stream = ops[i].stream;
      return 1;
    }
  return 0;
}

/* Ollama's /api/chat and /api/generate, Cohere's /v2/chat, Bedrock's
   Converse; see sim_int.h. The path is matched whole (a query string is
   not part of it). */
int sim__route_own_path(const char *p, sim_dialect *d, char *model, size_t cap, int *stream) {
  if (route_bedrock(p, d, model, cap, stream)) return 1;
  static const struct { const char *path; sim_dialect d; } own[] = {
      {"/api/chat", SIM_DIALECT_OLLAMA_CHAT},
      {"/api/generate", SIM_DIALECT_OLLAMA_GENERATE},
      {"/v2/chat", SIM_DIALECT_COHERE},
  };
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (strcmp(p, own[i].path) == 0) {
      *d = own[i].d;
      return 1;
    }
  return 0;
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
  case SIM_DIALECT_OLLAMA_CHAT:
  case SIM_DIALECT_OLLAMA_GENERATE:
    return sim__ollama_body(d == SIM_DIALECT_OLLAMA_GENERATE, s, model, text, tokens_in,
                            tokens_out);
  case SIM_DIALECT_COHERE: return sim__cohere_body(s, id, text, tokens_in, tokens_out);
  case SIM_DIALECT_BEDROCK: return sim__bedrock_body(s, text, tokens_in, tokens_out);
  case SIM_DIALECT_BEDROCK_INVOKE:
    return sim__anthropic_body(s, id, model, text, tokens_in, tokens_out);
  default: return sim__openai_chat_body(s, id, model, text, tokens_in, tokens_out);
  }
}

/* The dialect's word on step s's answer sent whole; see sim_int.h. Only
   the Responses API has a finished answer that is not a complete one (its
   "incomplete" status): a chat finish_reason "length", Anthropic's
   "max_tokens" and Gemini's "MAX_TOKENS" are finished answers. */
sim_end_state sim__answer_done(sim_dialect d, const sim_step *s) {
  if (d == SIM_DIALECT_RESPONSES && s != NULL) return sim__responses_done(s);
  return SIM_STATE_COMPLETE;
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
  if (sim__dialect_streams_by_default(d)) return sim__ollama_error_body(status, message);
  if (d == SIM_DIALECT_COHERE) return sim__cohere_error_body(status, NULL, message);
  if (sim__dialect_binary(d)) return sim__bedrock_error_body(status, message);
  return sim__openai_error_body(status, code, type, message);
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
  case SIM_DIALECT_OLLAMA_CHAT:
  case SIM_DIALECT_OLLAMA_GENERATE:
    rc = sim__ollama_stream(d == SIM_DIALECT_OLLAMA_GENERATE, s, model, tokens_in, tokens_out,
                            texts, ntexts, out);
    break;
  case SIM_DIALECT_COHERE:
    rc = sim__cohere_sse(s, id, tokens_in, tokens_out, texts, ntexts, out);
    break;
  case SIM_DIALECT_BEDROCK:
    rc = sim__bedrock_stream(s, tokens_in, tokens_out, texts, ntexts, out);
    break;
  case SIM_DIALECT_BEDROCK_INVOKE:
    rc = sim__bedrock_invoke_stream(s, id, model, tokens_in, tokens_out, texts, ntexts, out);
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
  free(sse->lens);
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
  size_t pos = 0, plen;
  const char *piece;
  while (sim__next_piece(text, len, &pos, &piece, &plen)) { /* sse_text.c */
    v[k] = strndup(piece, plen);
    if (v[k] == NULL) {
      for (int m = 0; m < k; m++) free(v[m]);
      free(v);
      return SIM_ENOMEM;
    }
    k++;
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

