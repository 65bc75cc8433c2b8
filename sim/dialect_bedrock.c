/*
 * dialect_bedrock.c - Amazon Bedrock's Converse API: POST
 * /model/{modelId}/converse answers {output:{message}, stopReason, usage,
 * metrics}; /converse-stream answers the binary event stream
 * (eventstream.c) of messageStart, contentBlockStart/Delta/Stop,
 * messageStop and metadata events, and ends a broken stream with an
 * exception message (throttlingException, modelStreamErrorException, ...).
 * Errors are the x-amzn-errortype header (play.c sends it) and
 * {"message":"..."}. InvokeModel (/invoke) answers the model's own body,
 * here Anthropic's Messages shape (dialect_anthropic.c) whatever the
 * model id; /invoke-with-response-stream wraps each of its stream events
 * in a `chunk` message {"bytes":"<base64 of the event's JSON>"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/dialect_int.h"

static const char *stop_reason(const sim_step *s) {
  if (s != NULL && s->finish == SIM_FINISH_LENGTH) return "max_tokens";
  if (s != NULL && s->finish == SIM_FINISH_FILTER) return "content_filtered";
  if (s != NULL && s->ntool_calls > 0) return "tool_use";
  return "end_turn";
}

/* The error's name by status, as x-amzn-errortype carries it; a step's
   `type` names another (ModelNotReadyException, ...). Static. */
const char *sim__bedrock_error_type(int status, const char *type) {
  if (type != NULL && type[0] != '\0') return type;
  switch (status) {
  case 400: return "ValidationException";
  case 403: return "AccessDeniedException";
  case 404: return "ResourceNotFoundException";
  case 408: return "ModelTimeoutException";
  case 424: return "ModelErrorException";
  case 429: return "ThrottlingException";
  case 503: return "ServiceUnavailableException";
  default: return status >= 500 ? "InternalServerException" : "ValidationException";
  }
}

/* The in-stream exception's name (lower camel case, as ConverseStream's
   union members are spelt) for a status; a step's `type` names another. */
static const char *stream_exception(int status, const char *type) {
  if (type != NULL && type[0] != '\0') return type;
  switch (status) {
  case 400: return "validationException";
  case 424: return "modelStreamErrorException";
  case 429: return "throttlingException";
  case 503: return "serviceUnavailableException";
  default: return "internalServerException";
  }
}

/* "usage":{inputTokens, outputTokens, totalTokens},"metrics":{latencyMs}. */
static void usage_metrics(sim_jw *w, int tokens_in, int tokens_out) {
  sim__jw_key(w, "usage");
  sim__jw_open(w, '{');
  sim__jw_knum(w, "inputTokens", tokens_in);
  sim__jw_knum(w, "outputTokens", tokens_out);
  sim__jw_knum(w, "totalTokens", (double)tokens_in + tokens_out);
  sim__jw_close(w, '}');
  sim__jw_key(w, "metrics");
  sim__jw_open(w, '{');
  sim__jw_knum(w, "latencyMs", 100);
  sim__jw_close(w, '}');
}

/* Converse's answer whole: a text block (when there is text, or nothing
   else), then one toolUse block per call with its input as JSON. */
char *sim__bedrock_body(const sim_step *s, const char *text, int tokens_in, int tokens_out) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  int ntools = s ? s->ntool_calls : 0;
  sim__jw_open(&w, '{');
  sim__jw_key(&w, "output");
  sim__jw_open(&w, '{');
  sim__jw_key(&w, "message");
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "role", "assistant");
  sim__jw_key(&w, "content");
  sim__jw_open(&w, '[');
  if (text != NULL || ntools == 0) {
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "text", text ? text : "");
    sim__jw_close(&w, '}');
  }
  for (int i = 0; i < ntools; i++) {
    const sim_tool_call *tc = &s->tool_calls[i];
    sim__jw_open(&w, '{');
    sim__jw_key(&w, "toolUse");
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "toolUseId", tc->id);
    sim__jw_kstr(&w, "name", tc->name);
    sim__put_args(&w, "input", tc);
    sim__jw_close(&w, '}');
    sim__jw_close(&w, '}');
  }
  sim__jw_close(&w, ']');
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  sim__jw_kstr(&w, "stopReason", stop_reason(s));
  usage_metrics(&w, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* {"message":"..."}: the body of every Bedrock error (its name rides in
   the x-amzn-errortype header). */
char *sim__bedrock_error_body(int status, const char *message) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "message", sim__err_message(status, message));
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* Appends event message (type, the JSON w holds, taken) to buf/len;
   returns 0, or -1 when out of memory (buf is then freed). */
static int add_event(char **buf, size_t *len, const char *type, sim_jw *w) {
  char *json = sim__jw_take(w);
  size_t n = 0;
  char *m = json ? sim__es_event(type, json, &n) : NULL;
  free(json);
  char *grown = m ? realloc(*buf, *len + n + 1) : NULL;
  if (grown == NULL) {
    free(m);
    free(*buf);
    *buf = NULL;
    return -1;
  }
  memcpy(grown + *len, m, n);
  *len += n;
  grown[*len] = '\0';
  free(m);
  *buf = grown;
  return 0;
}

/* Starts a frame's buffer: empty, NUL-terminated. */
static char *frame_new(size_t *len) {
  *len = 0;
  return calloc(1, 1);
}

/* A contentBlockStop event for block index, appended. */
static int block_stop(char **buf, size_t *len, int index) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "contentBlockIndex", index);
  sim__jw_close(&w, '}');
  return add_event(buf, len, "contentBlockStop", &w);
}

/* A contentBlockDelta event: a text piece (tool 0) or a piece of a tool's
   input (tool 1), appended. */
static int block_delta(char **buf, size_t *len, int index, int tool, const char *piece) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_knum(&w, "contentBlockIndex", index);
  sim__jw_key(&w, "delta");
  sim__jw_open(&w, '{');
  if (tool) {
    sim__jw_key(&w, "toolUse");
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "input", piece);
    sim__jw_close(&w, '}');
  } else {
    sim__jw_kstr(&w, "text", piece);
  }
  sim__jw_close(&w, '}');
  sim__jw_close(&w, '}');
  return add_event(buf, len, "contentBlockDelta", &w);
}

/*
 * ConverseStream's messages. pre: messageStart; one contentBlockDelta per
 * text piece (block 0, when there is text or nothing else); each tool call
 * a contentBlockStart with its toolUseId and name, then its input in
 * 8-byte contentBlockDeltas; a block's contentBlockStop rides at the head
 * of the next block's first chunk (a stream cut inside a block never
 * closes it); tail: the last block's stop; the end marker: messageStop and
 * metadata (usage). The error is an exception message. Every frame is
 * binary: its length is in out->lens / *_len.
 */
int sim__bedrock_stream(const sim_step *s, int tokens_in, int tokens_out, char **texts,
                        int ntexts, sim_sse *out) {
  out->binary = 1;
  sim_jw w;
  size_t len;
  char *buf = frame_new(&len);
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "role", "assistant");
  sim__jw_close(&w, '}');
  if (buf == NULL) sim__jw_free(&w); /* add_event takes w; nothing else does */
  if (buf == NULL || add_event(&buf, &len, "messageStart", &w) != 0) return SIM_ENOMEM;
  out->pre = buf;
  out->pre_len = len;
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++) {
    buf = frame_new(&len);
    if (buf == NULL || block_delta(&buf, &len, 0, 0, texts[i]) != 0) return SIM_ENOMEM;
    rc = sim__sse_push_bin(out, buf, len);
  }
  int text_block = ntexts > 0 || s->ntool_calls == 0;
  int index = text_block ? 1 : 0, carry = text_block ? 0 : -1;
  for (int t = 0; rc == SIM_OK && t < s->ntool_calls; t++, index++) {
    const sim_tool_call *tc = &s->tool_calls[t];
    char **pieces = NULL;
    int np = 0;
    rc = sim__split_args(tc->arguments, &pieces, &np);
    for (int i = 0; rc == SIM_OK && i < np; i++) {
      buf = frame_new(&len);
      int bad = buf == NULL;
      if (!bad && i == 0) {
        if (carry >= 0) bad = block_stop(&buf, &len, carry) != 0;
        if (!bad) {
          sim__jw_init(&w, SIM__BODY_MAX);
          sim__jw_open(&w, '{');
          sim__jw_knum(&w, "contentBlockIndex", index);
          sim__jw_key(&w, "start");
          sim__jw_open(&w, '{');
          sim__jw_key(&w, "toolUse");
          sim__jw_open(&w, '{');
          sim__jw_kstr(&w, "toolUseId", tc->id);
          sim__jw_kstr(&w, "name", tc->name);
          sim__jw_close(&w, '}');
          sim__jw_close(&w, '}');
          sim__jw_close(&w, '}');
          bad = add_event(&buf, &len, "contentBlockStart", &w) != 0;
        }
      }
      if (!bad) bad = block_delta(&buf, &len, index, 1, pieces[i]) != 0;
      rc = bad ? SIM_ENOMEM : sim__sse_push_bin(out, buf, len);
    }
    sim__free_strv(pieces, np);
    carry = index;
  }
  if (rc != SIM_OK) return rc;
  buf = frame_new(&len);
  if (buf == NULL || (carry >= 0 && block_stop(&buf, &len, carry) != 0)) return SIM_ENOMEM;
  out->tail = buf;
  out->tail_len = len;
  buf = frame_new(&len);
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "stopReason", stop_reason(s));
  sim__jw_close(&w, '}');
  if (buf == NULL) sim__jw_free(&w);
  if (buf == NULL || add_event(&buf, &len, "messageStop", &w) != 0) return SIM_ENOMEM;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  usage_metrics(&w, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  if (add_event(&buf, &len, "metadata", &w) != 0) return SIM_ENOMEM;
  out->marker = buf;
  out->marker_len = len;
  int status = s->status ? s->status : 500;
  char *json = sim__bedrock_error_body(status, s->message);
  out->error = json ? sim__es_exception(stream_exception(status, s->type), json,
                                        &out->error_len)
                    : NULL;
  free(json);
  return SIM_OK;
}

/* ------------------------------------------------------------ InvokeModel */

/* Standard base64 of n bytes, NUL-terminated; owned by the caller. */
static char *base64(const char *in, size_t n) {
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = malloc((n + 2) / 3 * 4 + 1);
  if (out == NULL) return NULL;
  const unsigned char *u = (const unsigned char *)in;
  size_t o = 0, i = 0;
  for (; i + 2 < n; i += 3) {
    unsigned v = (unsigned)u[i] << 16 | (unsigned)u[i + 1] << 8 | u[i + 2];
    out[o++] = A[v >> 18 & 63], out[o++] = A[v >> 12 & 63];
    out[o++] = A[v >> 6 & 63], out[o++] = A[v & 63];
  }
  if (i < n) {
    unsigned v = (unsigned)u[i] << 16 | (i + 1 < n ? (unsigned)u[i + 1] << 8 : 0);
    out[o++] = A[v >> 18 & 63], out[o++] = A[v >> 12 & 63];
    out[o++] = i + 1 < n ? A[v >> 6 & 63] : '=';
    out[o++] = '=';
  }
  out[o] = '\0';
  return out;
}

/* Rewrites SSE text (frames "event: X\ndata: JSON\n\n", taken) as the
   event stream's chunk messages, one per frame, each {"bytes": base64 of
   its JSON}; *len their length. NULL when out of memory. */
static char *sse_to_chunks(char *sse, size_t *len) {
  char *buf = sse ? frame_new(len) : NULL;
  for (const char *p = buf ? strstr(sse, "data: ") : NULL; buf != NULL && p != NULL;
       p = strstr(p, "data: ")) {
    p += 6;
    const char *end = strstr(p, "\n\n");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *b64 = base64(p, n);
    sim_jw w;
    sim__jw_init(&w, SIM__BODY_MAX);
    sim__jw_open(&w, '{');
    sim__jw_kstr(&w, "bytes", b64 ? b64 : "");
    sim__jw_close(&w, '}');
    if (b64 == NULL) {
      sim__jw_free(&w);
      free(buf);
      buf = NULL;
    } else if (add_event(&buf, len, "chunk", &w) != 0) {
      buf = NULL; /* add_event freed it */
    }
    free(b64);
    p += n;
  }
  free(sse);
  return buf;
}

/*
 * InvokeModelWithResponseStream: Anthropic's stream (sim__anthropic_sse)
 * with each frame a chunk message, in the same places (so a cut between
 * chunks cuts the same events); the error is an exception message, as
 * ConverseStream's.
 */
int sim__bedrock_invoke_stream(const sim_step *s, const char *id, const char *model,
                               int tokens_in, int tokens_out, char **texts, int ntexts,
                               sim_sse *out) {
  sim_sse an;
  memset(&an, 0, sizeof an);
  int rc = sim__anthropic_sse(s, id, model, tokens_in, tokens_out, texts, ntexts, &an);
  out->binary = 1;
  /* each of an's frames is taken (and freed) by sse_to_chunks, or left to
     sim__sse_clear(&an) once something failed */
  if (rc == SIM_OK) {
    out->pre = sse_to_chunks(an.pre, &out->pre_len);
    an.pre = NULL;
    if (out->pre == NULL) rc = SIM_ENOMEM;
  }
  for (int i = 0; rc == SIM_OK && i < an.nchunks; i++) {
    size_t n = 0;
    char *f = sse_to_chunks(an.chunk[i], &n);
    an.chunk[i] = NULL;
    rc = f ? sim__sse_push_bin(out, f, n) : SIM_ENOMEM;
  }
  if (rc == SIM_OK) {
    out->tail = sse_to_chunks(an.tail, &out->tail_len);
    an.tail = NULL;
    if (out->tail == NULL) rc = SIM_ENOMEM;
  }
  if (rc == SIM_OK) {
    out->marker = sse_to_chunks(an.marker, &out->marker_len);
    an.marker = NULL;
    if (out->marker == NULL) rc = SIM_ENOMEM;
  }
  sim__sse_clear(&an);
  if (rc != SIM_OK) return rc;
  int status = s->status ? s->status : 500;
  char *json = sim__bedrock_error_body(status, s->message);
  out->error = json ? sim__es_exception(stream_exception(status, s->type), json,
                                        &out->error_len)
                    : NULL;
  free(json);
  return SIM_OK;
}
