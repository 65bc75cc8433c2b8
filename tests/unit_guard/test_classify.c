/*
 * test_classify.c - every row of the classification table, data-driven:
 * the facts and the kind they must give sit side by side.
 */
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

typedef struct row {
  const char *what;
  guard__facts f;
  guard_kind kind;
  const char *summary;
} row;

#define TX(t) {.tx = (t)}
#define ST(s) {.status = (s)}
#define STC(s, ty, co) {.status = (s), .err_type = (ty), .err_code = (co)}
#define BODY(b) {.status = 200, .body = (b)}

static const row ROWS[] = {
    /* transient */
    {"connect failure", TX(GUARD_TX_CONNECT), GUARD_KIND_TRANSIENT, "connect_failed"},
    {"closed before response", TX(GUARD_TX_CLOSED), GUARD_KIND_TRANSIENT, "closed_before_response"},
    {"attempt timeout", TX(GUARD_TX_TIMEOUT), GUARD_KIND_TRANSIENT, "timeout"},
    {"stream idle timeout", TX(GUARD_TX_IDLE), GUARD_KIND_TRANSIENT, "idle_timeout"},
    {"408", ST(408), GUARD_KIND_TRANSIENT, "http_408"},
    {"409", ST(409), GUARD_KIND_TRANSIENT, "http_409"},
    {"429 rate_limit_exceeded", STC(429, "requests", "rate_limit_exceeded"), GUARD_KIND_TRANSIENT, "rate_limit_exceeded"},
    {"429 anthropic rate_limit_error", STC(429, "rate_limit_error", NULL), GUARD_KIND_TRANSIENT, "rate_limit_error"},
    {"429 without a structured error", ST(429), GUARD_KIND_TRANSIENT, "http_429"},
    {"500", STC(500, "server_error", NULL), GUARD_KIND_TRANSIENT, "server_error"},
    {"502", ST(502), GUARD_KIND_TRANSIENT, "http_502"},
    {"503", ST(503), GUARD_KIND_TRANSIENT, "http_503"},
    {"504", ST(504), GUARD_KIND_TRANSIENT, "http_504"},
    {"529 overloaded_error", STC(529, "overloaded_error", NULL), GUARD_KIND_TRANSIENT, "overloaded_error"},
    /* permanent */
    {"400", STC(400, "invalid_request_error", NULL), GUARD_KIND_PERMANENT, "invalid_request_error"},
    {"400 context length", STC(400, "invalid_request_error", "context_length_exceeded"), GUARD_KIND_PERMANENT, "context_length_exceeded"},
    {"401", STC(401, "authentication_error", "invalid_api_key"), GUARD_KIND_PERMANENT, "invalid_api_key"},
    {"402", ST(402), GUARD_KIND_PERMANENT, "http_402"},
    {"403", STC(403, "permission_error", NULL), GUARD_KIND_PERMANENT, "permission_error"},
    {"404", ST(404), GUARD_KIND_PERMANENT, "http_404"},
    {"413", STC(413, "request_too_large", NULL), GUARD_KIND_PERMANENT, "request_too_large"},
    {"422", ST(422), GUARD_KIND_PERMANENT, "http_422"},
    {"429 insufficient_quota", STC(429, "insufficient_quota", "insufficient_quota"), GUARD_KIND_PERMANENT, "insufficient_quota"},
    {"429 billing", STC(429, "billing_error", NULL), GUARD_KIND_PERMANENT, "billing_error"},
    {"refusal", BODY(GUARD__BODY_REFUSAL), GUARD_KIND_PERMANENT, "content_refusal"},
    /* shape */
    {"200 not JSON", BODY(GUARD__BODY_NOT_JSON), GUARD_KIND_SHAPE, "not_json"},
    {"200 missing fields", BODY(GUARD__BODY_MISSING), GUARD_KIND_SHAPE, "missing_fields"},
    {"200 cut below its length", {.tx = GUARD_TX_CUT, .status = 200}, GUARD_KIND_SHAPE, "truncated"},
    {"stream cut mid-body", {.tx = GUARD_TX_CUT, .status = 200, .streaming = 1}, GUARD_KIND_SHAPE, "stream_cut"},
    {"stream without end marker", BODY(GUARD__BODY_NO_END), GUARD_KIND_SHAPE, "no_end_marker"},
    {"stream bad chunk", BODY(GUARD__BODY_BAD_CHUNK), GUARD_KIND_SHAPE, "bad_chunk"},
    {"body too large", TX(GUARD_TX_TOOBIG), GUARD_KIND_SHAPE, "too_large"},
    /* in-stream (or in-200) error events, by their type */
    {"stream error overloaded", {.status = 200, .body = GUARD__BODY_ERROR, .err_type = "overloaded_error"}, GUARD_KIND_TRANSIENT, "overloaded_error"},
    {"stream error invalid", {.status = 200, .body = GUARD__BODY_ERROR, .err_type = "invalid_request_error"}, GUARD_KIND_PERMANENT, "invalid_request_error"},
    {"stream error unknown", {.status = 200, .body = GUARD__BODY_ERROR, .err_type = "weird_error"}, GUARD_KIND_UNKNOWN, "weird_error"},
    {"stream error after a cut", {.tx = GUARD_TX_CUT, .status = 200, .body = GUARD__BODY_ERROR, .err_type = "api_error"}, GUARD_KIND_TRANSIENT, "api_error"},
    /* unknown: fail closed */
    {"429 with an unknown code", STC(429, "mystery", "mystery_code"), GUARD_KIND_UNKNOWN, "mystery_code"},
    {"418", ST(418), GUARD_KIND_UNKNOWN, "http_418"},
    {"501", ST(501), GUARD_KIND_UNKNOWN, "http_501"},
    {"302", ST(302), GUARD_KIND_UNKNOWN, "http_302"},
    {"transport other", TX(GUARD_TX_OTHER), GUARD_KIND_UNKNOWN, "transport_error"},
    /* ok */
    {"200 ok", BODY(GUARD__BODY_OK), GUARD_KIND_OK, ""},
};

static void test_table(void) {
  for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
    char sum[64] = "?";
    guard_kind k = guard__classify(&ROWS[i].f, sum, sizeof sum);
    if (k != ROWS[i].kind || strcmp(sum, ROWS[i].summary) != 0)
      fprintf(stderr, "\n  row \"%s\": got %s \"%s\"\n", ROWS[i].what,
              guard_kind_name(k), sum);
    CU_ASSERT_EQUAL(k, ROWS[i].kind);
    CU_ASSERT_STRING_EQUAL(sum, ROWS[i].summary);
  }
}

static void test_should_retry_overrides(void) {
  char sum[64];
  guard__facts f = {.status = 503, .should_retry = "false"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_PERMANENT);
  f = (guard__facts){.status = 400, .should_retry = "true"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_TRANSIENT);
  f = (guard__facts){.status = 429, .err_code = "insufficient_quota", .should_retry = "TRUE"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_TRANSIENT);
  /* An unknown value leaves the table alone; success is never overridden. */
  f = (guard__facts){.status = 503, .should_retry = "maybe"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_TRANSIENT);
  f = (guard__facts){.status = 200, .should_retry = "true"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_OK);
  f = (guard__facts){.status = 418, .should_retry = "true"};
  CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), GUARD_KIND_TRANSIENT);
}

static void test_names(void) {
  CU_ASSERT_STRING_EQUAL(guard_kind_name(GUARD_KIND_SKIPPED), "skipped");
  CU_ASSERT_STRING_EQUAL(guard_kind_name(GUARD_KIND_DEADLINE), "deadline");
  CU_ASSERT_STRING_EQUAL(guard_kind_name((guard_kind)99), "?");
  CU_ASSERT_STRING_EQUAL(guard_outcome_name(GUARD_OUTCOME_PENDING), "pending");
  CU_ASSERT_STRING_EQUAL(guard_outcome_name(GUARD_OUTCOME_BLOCKED), "blocked");
  CU_ASSERT_STRING_EQUAL(guard_wait_why_name(GUARD_WAIT_RETRY_AFTER), "retry_after");
  CU_ASSERT_STRING_EQUAL(guard_strerror(GUARD_ETOOBIG), "too large");
}

/* Registers the classification suite. */
int suite_classify(void) {
  CU_pSuite s = CU_add_suite("classify", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "each row of the table", test_table) ||
      !CU_add_test(s, "x-should-retry overrides the table", test_should_retry_overrides) ||
      !CU_add_test(s, "kind, outcome and wait names", test_names))
    return CU_get_error();
  return 0;
}
