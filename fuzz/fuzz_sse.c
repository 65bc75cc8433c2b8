/*
 * fuzz_sse.c - the guard's SSE parser (guard/sse.c) and what it feeds: the
 * stream events of both dialects (guard__wire_stream_event) and the end-of-
 * stream check (guard__wire_stream_end).
 *
 * The input is a byte stream. It is parsed whole once, and the events it
 * gives (their names, data, and the parser's return code) are the reference;
 * then it is parsed again cut at other places — at every byte boundary for
 * short inputs, at positions derived from the input for long ones, and one
 * byte at a time — and each split must give exactly the same events, the
 * same answer and the same end verdict. A small event bound runs too, so the
 * GUARD_ETOOBIG path is reached; it must also not depend on the splits. Last,
 * the stream goes through a guard_http_response the way a transport
 * delivers it.
 */
#include "guard/guard_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a run of the parser produced: a hash of every event, their count,
 * and the answer each dialect read from them. */
typedef struct run {
  uint64_t hash;
  int nevents;
  int rc;      /* last feed/finish return code */
  int answers; /* 1: also read the events as both dialects */
  guard__answer oa, an;
  guard__body end_oa, end_an;
} run;

static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static int on_event(void *ud, const char *event, const char *data, size_t len) {
  run *r = ud;
  size_t elen = strlen(event);
  if (elen == 0 || elen >= 64) abort(); /* "message" when unnamed; bounded */
  r->hash = mix(r->hash, event, elen + 1);
  r->hash = mix(r->hash, &len, sizeof len);
  r->hash = mix(r->hash, data, len);
  r->nevents++;
  if (r->answers) {
    guard__wire_stream_event(&r->oa, event, data, len);
    guard__wire_stream_event(&r->an, event, data, len);
  }
  return 0;
}

/* Parses data cut at the positions cuts[0..ncuts) (ascending, inside). The
 * reference run (answers = 1) also reads the events as both dialects; the
 * others only hash them, since the answers are a function of the events. */
static void parse(run *r, const uint8_t *data, size_t size, const size_t *cuts,
                  size_t ncuts, size_t max_event, int answers) {
  memset(r, 0, sizeof *r);
  r->hash = 1469598103934665603ULL;
  r->answers = answers;
  guard__answer_init(&r->oa, GUARD_OPENAI, 4096);
  guard__answer_init(&r->an, GUARD_ANTHROPIC, 4096);
  guard__sse s;
  guard__sse_init(&s, max_event, on_event, r);
  size_t at = 0;
  int rc = 0;
  for (size_t i = 0; i <= ncuts && rc == 0; i++) {
    size_t to = i < ncuts ? cuts[i] : size;
    if (to < at || to > size) abort();
    rc = guard__sse_feed(&s, (const char *)data + at, to - at);
    at = to;
  }
  if (rc == 0) rc = guard__sse_finish(&s);
  if (rc != 0 && rc != GUARD_ETOOBIG) abort(); /* the callback never stops it */
  r->rc = rc;
  r->end_oa = guard__wire_stream_end(&r->oa);
  r->end_an = guard__wire_stream_end(&r->an);
  guard__sse_free(&s);
}

static void same_answer(const guard__answer *a, const guard__answer *b) {
  if (a->text.len != b->text.len ||
      (a->text.len && memcmp(a->text.p, b->text.p, a->text.len) != 0) ||
      a->tokens_in != b->tokens_in || a->tokens_out != b->tokens_out ||
      a->done != b->done || a->refusal != b->refusal || a->error != b->error ||
      strcmp(a->err_type, b->err_type) != 0 || strcmp(a->err_code, b->err_code) != 0 ||
      a->bad != b->bad)
    abort();
  if (a->text.p != NULL && a->text.p[a->text.len] != '\0') abort();
  if (a->text.len > a->text.max) abort();
}

static void same(run *ref, run *r) {
  if (ref->hash != r->hash || ref->nevents != r->nevents || ref->rc != r->rc) abort();
  if (r->answers) {
    if (ref->end_oa != r->end_oa || ref->end_an != r->end_an) abort();
    same_answer(&ref->oa, &r->oa);
    same_answer(&ref->an, &r->an);
  }
}

static void done(run *r) {
  guard__answer_free(&r->oa);
  guard__answer_free(&r->an);
}

/* Every split of data against the whole parse, with one event bound. */
static void check_splits(const uint8_t *data, size_t size, size_t max_event) {
  run ref, r;
  parse(&ref, data, size, NULL, 0, max_event, 1);

  size_t *cuts = malloc((size + 1) * sizeof *cuts);
  if (cuts == NULL) abort();
  if (size <= 512) {
    /* One cut at every boundary, then two cuts around every byte. */
    for (size_t i = 1; i < size; i++) {
      cuts[0] = i;
      parse(&r, data, size, cuts, 1, max_event, 0);
      same(&ref, &r);
      done(&r);
      if (i + 1 < size && size <= 128) {
        cuts[1] = i + 1;
        parse(&r, data, size, cuts, 2, max_event, 0);
        same(&ref, &r);
        done(&r);
      }
    }
  } else {
    /* Cuts at positions the input itself chooses. */
    size_t n = 0, at = 0;
    for (size_t i = 0; i < size && n < size; i += 7) {
      at += 1 + data[i] % 64;
      if (at >= size) break;
      cuts[n++] = at;
    }
    parse(&r, data, size, cuts, n, max_event, 1);
    same(&ref, &r);
    done(&r);
  }
  /* One byte at a time. */
  size_t n = 0;
  for (size_t i = 1; i < size; i++) cuts[n++] = i;
  parse(&r, data, size, cuts, n, max_event, 1);
  same(&ref, &r);
  done(&r);
  free(cuts);
  done(&ref);
}

/* The stream as a transport delivers it, through a guard_http_response. */
static void through_response(const uint8_t *data, size_t size) {
  for (int d = 0; d < 2; d++) {
    guard__answer a;
    guard__answer_init(&a, d ? GUARD_ANTHROPIC : GUARD_OPENAI, 1024);
    guard_http_response resp;
    guard__resp_init(&resp, size > 8 ? size - size / 8 : 64, 1, &a);
    guard_resp_status(&resp, 200);
    guard_resp_header(&resp, "Content-Type", 12, " text/event-stream ", 19);
    size_t step = size > 0 ? 1 + data[0] % 97 : 1;
    for (size_t i = 0; i < size; i += step) {
      size_t n = size - i < step ? size - i : step;
      if (guard_resp_body(&resp, data + i, n) != GUARD_OK) {
        if (!resp.overflow) abort();
        break;
      }
    }
    if (!resp.overflow) guard__sse_finish(&resp.parser);
    (void)guard__wire_stream_end(&a);
    guard__resp_free(&resp);
    guard__answer_free(&a);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) return 0;
  check_splits(data, size, GUARD__MAX_SSE_EVENT);
  check_splits(data, size, 32);
  through_response(data, size);
  return 0;
}
