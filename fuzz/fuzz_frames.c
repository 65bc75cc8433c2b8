/*
 * fuzz_frames.c - the guard's readers of the streams that are not plain SSE
 * and the dialects they feed: AWS's event stream (guard/eventstream.c) into
 * Bedrock ConverseStream (wire_bedrock.c), NDJSON (guard/ndjson.c) into
 * Ollama (wire_ollama.c), and Cohere's typed SSE (wire_cohere.c), all
 * through a guard_http_response as a transport delivers them.
 *
 * Input layout:
 *   byte 0   bits 0-1 the dialect (0, 3 Bedrock; 1 Ollama; 2 Cohere)
 *   byte 1-2 a cut position (big-endian, modulo the stream's length)
 *   then     the stream's bytes
 *
 * The stream is read whole once; then cut at the input's position, and one
 * byte at a time (up to 4 KiB): each must give the same answer (text,
 * done, error and its type, tool calls, end verdict) and, for Bedrock, the
 * same decoder state and message count. The same bytes as a whole body
 * then go to guard__wire_parse and guard__wire_error.
 */
#include "guard/guard_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const guard_dialect DIALECT[] = {GUARD_BEDROCK, GUARD_OLLAMA, GUARD_COHERE, GUARD_BEDROCK};
static const char *const CTYPE[] = {"application/vnd.amazon.eventstream", "application/x-ndjson",
                                    "text/event-stream", "application/vnd.amazon.eventstream"};

/* What one reading gave. */
typedef struct seen {
  guard__body end;
  guard__es_broken broken;
  long messages;
  int done, error, refusal, ntc;
  char err_type[64];
  uint64_t text_hash;
  size_t text_len;
} seen;

static uint64_t mix(const char *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ULL;
  return h;
}

/* Reads data[0..n) as a stream of dialect k, fed in pieces: the first cut
   bytes, then step bytes at a time (step 0: the rest at once). */
static void read_stream(int k, const uint8_t *data, size_t n, size_t cut, size_t step, seen *s) {
  guard__answer a;
  guard__answer_init(&a, DIALECT[k], 1 << 16);
  guard_http_response r;
  guard__resp_init(&r, 1 << 20, 1, &a);
  guard_resp_status(&r, 200);
  guard_resp_header(&r, "content-type", 12, CTYPE[k], strlen(CTYPE[k]));
  size_t at = 0;
  if (cut > 0 && guard_resp_body(&r, data, cut) == GUARD_OK) at = cut;
  while (at < n) {
    size_t m = step == 0 || n - at < step ? n - at : step;
    if (guard_resp_body(&r, data + at, m) != GUARD_OK) break;
    at += m;
  }
  if (r.sse != 1 && n > 0) abort(); /* a 2xx stream of these types is a stream */
  guard__resp_stream_finish(&r);
  memset(s, 0, sizeof *s);
  s->end = guard__wire_stream_end(&a);
  s->broken = r.es.broken;
  s->messages = r.es.messages;
  s->done = a.done, s->error = a.error, s->refusal = a.refusal, s->ntc = a.ntc;
  memcpy(s->err_type, a.err_type, sizeof s->err_type);
  s->text_len = a.text.len;
  s->text_hash = mix(a.text.p ? a.text.p : "", a.text.len);
  if (a.ntc < 0 || a.ntc > GUARD_MAX_TOOL_CALLS) abort();
  if (DIALECT[k] == GUARD_BEDROCK && r.es.broken != GUARD__ES_FINE && s->end == GUARD__BODY_OK)
    abort(); /* a broken frame is never a whole answer */
  guard__resp_free(&r);
  guard__answer_free(&a);
}

static void same(const seen *a, const seen *b) {
  if (a->end != b->end || a->broken != b->broken || a->messages != b->messages ||
      a->done != b->done || a->error != b->error || a->refusal != b->refusal ||
      a->ntc != b->ntc || strcmp(a->err_type, b->err_type) != 0 ||
      a->text_len != b->text_len || a->text_hash != b->text_hash)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  int k = data[0] & 3;
  size_t pos = (size_t)data[1] << 8 | data[2];
  data += 3;
  size -= 3;
  seen whole, other;
  read_stream(k, data, size, 0, 0, &whole);
  read_stream(k, data, size, size ? pos % (size + 1) : 0, 0, &other);
  same(&whole, &other);
  if (size <= 4096) {
    read_stream(k, data, size, 0, 1, &other);
    same(&whole, &other);
  }
  guard__answer a;
  guard__answer_init(&a, DIALECT[k], 1 << 16);
  guard__wire_parse((const char *)data, size, &a);
  guard__answer_free(&a);
  guard__answer_init(&a, DIALECT[k], 1 << 16);
  guard__wire_error((const char *)data, size, &a);
  guard__answer_free(&a);
  return 0;
}
