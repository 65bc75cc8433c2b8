/*
 * test_retry.c - the retry loop on one provider: what is retried, what is
 * not, how long it waits (backoff, Retry-After as a floor), and what the
 * attempt log says.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

#define RA(v) "retry-after: " v "\n"

static guard_result *run(fake *f, guard_config *cfg) {
  guard *g = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_new(cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r = NULL;
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_OK);
  guard_free(g);
  (void)f;
  return r;
}

static void test_permanent_once(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(401, ERR_OPENAI("invalid_request_error", "invalid_api_key")));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(f.nsleep, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->nattempts, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_PERMANENT);
  CU_ASSERT_EQUAL(r->attempts[0].status, 401);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "invalid_api_key");
  CU_ASSERT_EQUAL(r->tokens, 0);
  guard_result_free(r);
  fake_free(&f);
}

static void test_transient_then_ok(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(503, NULL));
  fake_add(&f, STEP_TX(GUARD_TX_CLOSED));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 3);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "hello");
  CU_ASSERT_STRING_EQUAL(r->provider, "primary");
  CU_ASSERT_EQUAL(r->nattempts, 3);
  CU_ASSERT_EQUAL(r->attempts[0].n, 1);
  CU_ASSERT_EQUAL(r->attempts[2].n, 3);
  CU_ASSERT_EQUAL(r->attempts[1].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "closed_before_response");
  /* Backoff without jitter: 0.5 s, then 1 s. */
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 500, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[0].wait_why, GUARD_WAIT_BACKOFF);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[1].wait_ms, 1000, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[2].wait_why, GUARD_WAIT_NONE);
  CU_ASSERT_DOUBLE_EQUAL(f.slept, 1500, 1e-9);
  /* start + elapsed on the fake clock: 2 ms + 500 + 1 ms + 1000 + 5 ms. */
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[1].start_ms, 502, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[2].start_ms, 1503, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r->total_ms, 1508, 1e-9);
  CU_ASSERT_EQUAL(r->tokens, 15);
  guard_result_free(r);
  fake_free(&f);
}

static void test_retry_after_is_a_floor(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 429, .headers = RA("2"),
                           .body = ERR_OPENAI("requests", "rate_limit_exceeded")});
  fake_add(&f, (fake_step){.status = 429, .headers = "retry-after-ms: 100\n",
                           .body = ERR_OPENAI("requests", "rate_limit_exceeded")});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(f.nreq, 3);
  /* 2 s beats the 0.5 s backoff; 100 ms loses to the 1 s backoff. */
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 2000, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[0].wait_why, GUARD_WAIT_RETRY_AFTER);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].retry_after_ms, 2000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[1].wait_ms, 1000, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[1].wait_why, GUARD_WAIT_BACKOFF);
  CU_ASSERT_DOUBLE_EQUAL(f.req[1].at_ms - f.req[0].at_ms, 2000, 1e-9);
  guard_result_free(r);
  fake_free(&f);
}

static void test_retry_after_http_date(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .headers = RA("Thu, 01 Jan 2026 00:00:03 GMT"), .ms = 2});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  /* The response came at 2 ms on the fake clock: 2.998 s remain. */
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 2998, 1e-3);
  CU_ASSERT_EQUAL(r->attempts[0].wait_why, GUARD_WAIT_RETRY_AFTER);
  guard_result_free(r);
  fake_free(&f);
}

static void test_bad_retry_after(void) {
  /* Ignore: the backoff is used. */
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .headers = RA("soon")});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 500, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[0].detail, "retry-after unparsable"));
  guard_result_free(r);
  fake_free(&f);
  /* Over the cap (60 s): the provider asked for an hour. Coming back after
     the backoff would break that; the guard gives the provider up even
     with "ignore" (found by fusebox hunt: it retried a 120 s one early). */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .headers = RA("3600")});
  fake_add(&f, STEP_OK);
  fake_config(&cfg, &f);
  r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[0].detail, "retry-after over_cap"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[0].detail, "stopped: retry-after over the cap"));
  guard_result_free(r);
  fake_free(&f);
  /* Stop: no second attempt. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .headers = RA("-3")});
  fake_add(&f, STEP_OK);
  fake_config(&cfg, &f);
  cfg.policy.retry_after_bad = GUARD_RA_STOP;
  r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[0].detail, "retry-after negative"));
  guard_result_free(r);
  fake_free(&f);
}

static void test_should_retry_false(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .headers = "x-should-retry: false\n"});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_PERMANENT);
  guard_result_free(r);
  fake_free(&f);
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 400, .headers = "x-should-retry: true\n"});
  fake_add(&f, STEP_OK);
  fake_config(&cfg, &f);
  r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  guard_result_free(r);
  fake_free(&f);
}

static void test_shape_retried_unknown_not(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(200, "{\"choices\":[{\"message\":{\"content\":\"hal"));
  fake_add(&f, STEP_STATUS(200, "<html>gateway</html>"));
  fake_add(&f, STEP_STATUS(200, "{\"choices\":[]}"));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.attempts = 4;
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 4);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_SHAPE);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "truncated");
  CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "not_json");
  CU_ASSERT_STRING_EQUAL(r->attempts[2].error, "missing_fields");
  guard_result_free(r);
  fake_free(&f);

  fake_init(&f);
  fake_add(&f, (fake_step){.status = 418, .headers = "x-request-id: req_teapot\n"});
  fake_add(&f, STEP_OK);
  fake_config(&cfg, &f);
  r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_UNKNOWN);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].request_id, "req_teapot");
  guard_result_free(r);
  fake_free(&f);
}

static void test_attempts_exhausted(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 500, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 3);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->attempts[2].wait_ms, 0); /* no wait after the last */
  CU_ASSERT_DOUBLE_EQUAL(f.slept, 1500, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "primary #3: transient 500 http_500"));
  guard_result_free(r);
  fake_free(&f);
}

static void test_bad_client_knobs(void) {
  /* Retry everything: a 401 is sent three times. */
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 401, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.flags = GUARD_RETRY_EVERYTHING;
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_EQUAL(f.nreq, 3);
  guard_result_free(r);
  fake_free(&f);
  /* Ignore Retry-After: the backoff alone. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 429, .headers = RA("5")});
  fake_add(&f, STEP_OK);
  fake_config(&cfg, &f);
  cfg.policy.flags = GUARD_IGNORE_RETRY_AFTER;
  r = run(&f, &cfg);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 500, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[0].wait_why, GUARD_WAIT_BACKOFF);
  guard_result_free(r);
  fake_free(&f);
}

static void test_time_scale(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 429, .headers = RA("2")});
  fake_add(&f, STEP_STATUS(503, NULL));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.time_scale = 0.1;
  guard_result *r = run(&f, &cfg);
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].wait_ms, 200, 1e-9);  /* Retry-After 2 s */
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[1].wait_ms, 100, 1e-9);  /* backoff 1 s */
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].timeout_ms, 1000, 1e-9);    /* 3 s / 3 attempts */
  guard_result_free(r);
  fake_free(&f);
}

/* Registers the retry-loop suite. */
/* An honoured Retry-After gets a little random time on top (up to 10 %,
   at most 1 s), so a herd told the same value does not return in lockstep;
   never less than asked. */
static void test_retry_after_spread(void) {
  double want[] = {2000, 2100, 2000 + 200 * 0.999};
  double u[] = {0.0, 0.5, 0.999};
  for (int i = 0; i < 3; i++) {
    fake f;
    fake_init(&f);
    f.rnd = fake_u(u[i]);
    fake_add(&f, (fake_step){.status = 429, .headers = RA("2"), .ms = 0});
    fake_add(&f, (fake_step){.status = 200, .body = OK_OPENAI, .ms = 0});
    guard_config cfg;
    fake_config(&cfg, &f);
    cfg.policy.jitter = GUARD_JITTER_FULL;
    cfg.policy.backoff_base = 0.1; /* the backoff stays under the Retry-After */
    guard_result *r = run(&f, &cfg);
    CU_ASSERT_EQUAL(r->attempts[0].wait_why, GUARD_WAIT_RETRY_AFTER);
    CU_ASSERT_DOUBLE_EQUAL(f.slept, want[i], 1e-6);
    guard_result_free(r);
    fake_free(&f);
  }
}

int suite_retry(void) {
  CU_pSuite s = CU_add_suite("retry", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "a permanent error stops after 1 call", test_permanent_once) ||
      !CU_add_test(s, "transient errors are retried with backoff", test_transient_then_ok) ||
      !CU_add_test(s, "Retry-After is a floor over the backoff", test_retry_after_is_a_floor) ||
      !CU_add_test(s, "Retry-After as an HTTP-date", test_retry_after_http_date) ||
      !CU_add_test(s, "Retry-After plus a small random spread", test_retry_after_spread) ||
      !CU_add_test(s, "a bad Retry-After: ignore or stop", test_bad_retry_after) ||
      !CU_add_test(s, "x-should-retry decides", test_should_retry_false) ||
      !CU_add_test(s, "shape is retried, unknown is not", test_shape_retried_unknown_not) ||
      !CU_add_test(s, "attempts are bounded", test_attempts_exhausted) ||
      !CU_add_test(s, "bad-client knobs change the loop", test_bad_client_knobs) ||
      !CU_add_test(s, "time scale shrinks waits and timeouts", test_time_scale))
    return CU_get_error();
  return 0;
}
