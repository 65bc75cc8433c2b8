/*
 * fuzz_wire.c - how the guard reads a response: JSON bodies of both dialects
 * (guard__wire_parse, guard__wire_error), response headers
 * (guard_resp_header), Retry-After values (guard__retry_after,
 * guard__http_date), classification, and at last a whole guarded call
 * (guard_chat, guard_effect, guard_result_json) against a transport that
 * answers every attempt with the fuzzed response.
 *
 * Input layout:
 *   byte 0   flags: bit 0 dialect, bit 1 stream request, bits 2-4 the
 *            transport outcome, bits 5-7 the body split
 *   byte 1   the status (an index into STATUS, or raw 0..599 above it)
 *   then     "name: value" header lines up to an empty line, then the body
 *            (no empty line: everything is the body)
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int STATUS[] = {200, 200, 200, 201, 400, 401, 402, 403, 404, 408,
                             409, 413, 422, 429, 429, 500, 502, 503, 504, 529};
#define NSTATUS (int)(sizeof STATUS / sizeof STATUS[0])

typedef struct input {
  guard_dialect dialect;
  int stream;
  guard_tx tx;
  size_t split;
  int status;
  const char *head; /* header lines */
  size_t head_len;
  const char *body;
  size_t body_len;
} input;

static void split_input(const uint8_t *data, size_t size, input *in) {
  memset(in, 0, sizeof *in);
  uint8_t flags = size > 0 ? data[0] : 0;
  uint8_t st = size > 1 ? data[1] : 0;
  in->dialect = flags & 1 ? GUARD_ANTHROPIC : GUARD_OPENAI;
  in->stream = (flags >> 1) & 1;
  static const guard_tx TX[8] = {GUARD_TX_OK, GUARD_TX_OK, GUARD_TX_OK, GUARD_TX_CUT,
                                 GUARD_TX_TIMEOUT, GUARD_TX_CLOSED, GUARD_TX_IDLE,
                                 GUARD_TX_OTHER};
  in->tx = TX[(flags >> 2) & 7];
  static const size_t SPLIT[8] = {0, 0, 1, 2, 3, 7, 16, 100};
  in->split = SPLIT[(flags >> 5) & 7];
  in->status = st < NSTATUS ? STATUS[st] : (st - NSTATUS) * 3;
  const char *p = size > 2 ? (const char *)data + 2 : "";
  size_t n = size > 2 ? size - 2 : 0;
  const char *blank = NULL;
  for (size_t i = 0; i + 1 < n; i++)
    if (p[i] == '\n' && p[i + 1] == '\n') {
      blank = p + i;
      break;
    }
  if (blank != NULL) {
    in->head = p;
    in->head_len = (size_t)(blank - p) + 1;
    in->body = blank + 2;
    in->body_len = n - in->head_len - 1;
  } else {
    in->body = p;
    in->body_len = n;
  }
}

/* Adds each "name: value" line of the input to the response. */
static void each_header(const input *in, guard_http_response *r) {
  if (in->head == NULL) return;
  const char *h = in->head, *end = in->head + in->head_len;
  while (h < end) {
    const char *eol = memchr(h, '\n', (size_t)(end - h));
    size_t len = eol ? (size_t)(eol - h) : (size_t)(end - h);
    const char *colon = memchr(h, ':', len);
    if (colon != NULL)
      guard_resp_header(r, h, (size_t)(colon - h), colon + 1, len - (size_t)(colon - h) - 1);
    h = eol ? eol + 1 : end;
  }
}

static void check_answer(const guard__answer *a) {
  if (a->text.len > a->text.max) abort();
  if (a->text.p != NULL && a->text.p[a->text.len] != '\0') abort();
  if (memchr(a->err_type, '\0', sizeof a->err_type) == NULL) abort();
  if (memchr(a->err_code, '\0', sizeof a->err_code) == NULL) abort();
}

static void check_ra(const guard__ra *ra, double cap_s) {
  if (memchr(ra->why, '\0', sizeof ra->why) == NULL) abort();
  if (ra->state == GUARD__RA_OK) {
    if (!isfinite(ra->ms) || ra->ms < 0) abort();
    if (cap_s > 0 && ra->ms > cap_s * 1000.0) abort();
  } else if (ra->state == GUARD__RA_BAD) {
    if (ra->why[0] == '\0') abort();
  }
}

/* Bodies, errors, headers, Retry-After and the kind, piece by piece. */
static void pieces(const input *in) {
  for (int d = 0; d < 2; d++) {
    guard__answer a;
    guard__answer_init(&a, d ? GUARD_ANTHROPIC : GUARD_OPENAI, d ? 16 : 4096);
    guard__body b = guard__wire_parse(in->body, in->body_len, &a);
    check_answer(&a);
    guard__answer_free(&a);
    guard__answer_init(&a, d ? GUARD_ANTHROPIC : GUARD_OPENAI, 4096);
    guard__wire_error(in->body, in->body_len, &a);
    check_answer(&a);

    guard_http_response r;
    guard__resp_init(&r, 1024, 0, NULL);
    guard_resp_status(&r, in->status);
    each_header(in, &r);
    if (r.nheaders > GUARD__MAX_HEADERS || r.hbytes > GUARD__MAX_HEADER_BYTES) abort();
    for (int i = 0; i < r.nheaders; i++) {
      double when;
      guard__http_date(r.hvalue[i], &when);
    }
    static const double CAPS[] = {0, 60, 1e-3};
    for (int c = 0; c < 3; c++) {
      guard__ra ra;
      guard__retry_after(guard__resp_get(&r, "retry-after-ms"),
                         guard__resp_get(&r, "retry-after"), 1767225600.0, CAPS[c], &ra);
      check_ra(&ra, CAPS[c]);
    }

    guard__facts f = {0};
    f.tx = in->tx;
    f.status = in->status;
    f.body = b;
    f.streaming = in->stream;
    f.err_type = a.err_type[0] ? a.err_type : NULL;
    f.err_code = a.err_code[0] ? a.err_code : NULL;
    f.should_retry = guard__resp_get(&r, "x-should-retry");
    char summary[64];
    guard_kind k = guard__classify(&f, summary, sizeof summary);
    if ((int)k < GUARD_KIND_OK || k > GUARD_KIND_SKIPPED) abort();
    if (memchr(summary, '\0', sizeof summary) == NULL) abort();
    guard__classify_by_status(&f, k);
    guard__resp_free(&r);
    guard__answer_free(&a);
  }

  /* The body as one Retry-After value, and as an HTTP-date. */
  if (in->body_len < 256) {
    char v[256];
    memcpy(v, in->body, in->body_len);
    v[in->body_len] = '\0';
    guard__ra ra;
    guard__retry_after(v, NULL, 1767225600.0, 60, &ra);
    check_ra(&ra, 60);
    guard__retry_after(NULL, v, 1767225600.0, 0, &ra);
    check_ra(&ra, 0);
    guard__retry_after(NULL, v, 0, 60, &ra);
    check_ra(&ra, 60);
    double when;
    guard__http_date(v, &when);
  }
}

/* ------------------------------------------------ a whole guarded call */

typedef struct fake {
  const input *in;
  double now;
  int nreq;
} fake;

static double f_now(void *ud) { return ((fake *)ud)->now; }
static void f_sleep(void *ud, double ms) { ((fake *)ud)->now += ms; }
static uint64_t f_rand(void *ud) { return 0x8000000000000000ULL; }
static double f_wall(void *ud) { return 1767225600.0 + ((fake *)ud)->now / 1000.0; }

static guard_tx f_transport(void *ud, const guard_http_request *req,
                            guard_http_response *resp) {
  fake *f = ud;
  const input *in = f->in;
  f->nreq++;
  f->now += 3;
  if (in->tx == GUARD_TX_CLOSED || in->tx == GUARD_TX_OTHER) return in->tx;
  if (in->tx == GUARD_TX_TIMEOUT) {
    f->now += req->timeout_ms;
    return in->tx;
  }
  guard_resp_status(resp, in->status);
  each_header(in, resp);
  size_t step = in->split ? in->split : in->body_len;
  for (size_t i = 0; i < in->body_len; i += step) {
    size_t n = in->body_len - i < step ? in->body_len - i : step;
    if (guard_resp_body(resp, in->body + i, n) != GUARD_OK) return GUARD_TX_TOOBIG;
  }
  if (in->tx == GUARD_TX_IDLE) f->now += req->idle_timeout_ms;
  return in->tx;
}

static void check_result(const guard_result *r) {
  if (r->text == NULL) abort();
  if (r->nattempts < 0 || (r->nattempts > 0 && r->attempts == NULL)) abort();
  char *js = guard_result_json(r, "guard", 1, 0);
  if (js == NULL) abort();
  cJSON *o = cJSON_Parse(js);
  if (!cJSON_IsObject(o)) abort(); /* the client event must be JSON */
  cJSON_Delete(o);
  free(js);
}

static void whole_call(const input *in) {
  static const guard_provider prov[2] = {
      {"primary", "http://fake/v1", GUARD_OPENAI, "sk-test", "gpt-test", NULL},
      {"backup", "http://fake/backup", GUARD_ANTHROPIC, "ak-test", "claude-test", NULL},
  };
  fake f = {in, 0, 0};
  guard_config cfg;
  guard_config_init(&cfg);
  guard_provider chain[2] = {prov[0], prov[1]};
  chain[0].dialect = in->dialect;
  cfg.providers = chain;
  cfg.nproviders = 2;
  cfg.env = (guard_env){f_now, f_sleep, f_rand, f_wall, &f, f_transport, &f};
  cfg.max_response_bytes = 2048;
  cfg.policy.breaker_threshold = 0;
  cfg.policy.retry_budget_capacity = 0;
  guard *g;
  if (guard_new(&cfg, &g, NULL) != GUARD_OK) abort();

  static const guard_message msg[] = {{"user", "Say hello."}};
  guard_chat_request req = {0};
  req.messages = msg;
  req.nmessages = 1;
  req.max_tokens = 16;
  req.stream = in->stream;
  guard_result *r = NULL;
  if (guard_chat(g, &req, &r) != GUARD_OK) abort();
  check_result(r);
  guard_result_free(r);

  r = NULL;
  if (guard_effect(g, "send_email", "{\"to\":\"a@b\"}", NULL, &r) != GUARD_OK) abort();
  check_result(r);
  guard_result_free(r);
  guard_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) return 0;
  input in;
  split_input(data, size, &in);
  pieces(&in);
  whole_call(&in);
  return 0;
}
