/*
 * test_deadline.c - one deadline per call, shared by every attempt and
 * wait; the attempt-timeout slice; the maximum total wait.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

static guard__pol pol(double cap_s, double floor_s) {
  guard_policy p = guard_policy_default();
  p.attempt_timeout_cap = cap_s;
  p.attempt_timeout_floor = floor_s;
  guard__pol q;
  guard__pol_from(&q, &p, 1.0);
  return q;
}

static void test_slice(void) {
  guard__deadline d;
  guard__deadline_start(&d, 1000, 9000); /* at 10000 */
  guard__pol p = pol(20, 1);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&d, 1000, &p, 3), 3000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&d, 4000, &p, 2), 3000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&d, 8500, &p, 3), 1000, 1e-9); /* floor */
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&d, 9500, &p, 1), 500, 1e-9);  /* never past it */
  guard__pol capped = pol(2, 1);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&d, 1000, &capped, 1), 2000, 1e-9);
  CU_ASSERT(guard__attempt_timeout(&d, 10000, &p, 1) > 0);
  guard__deadline none;
  guard__deadline_start(&none, 0, 0);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&none, 5, &p, 3), 20000, 1e-9);
  guard__pol nocap = pol(0, 1);
  CU_ASSERT_DOUBLE_EQUAL(guard__attempt_timeout(&none, 5, &nocap, 3), 0, 1e-9);
  CU_ASSERT(!guard__deadline_passed(&none, 1e12));
  CU_ASSERT(guard__deadline_passed(&d, 10000));
  CU_ASSERT(guard__deadline_crossed_by(&d, 9000, 1000));
  CU_ASSERT(!guard__deadline_crossed_by(&d, 9000, 999));
}

static void test_shared_across_retries(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.tx = GUARD_TX_TIMEOUT, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.deadline = 3;
  cfg.policy.attempt_timeout_floor = 0.1;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  /* 1 s timeout, 0.5 s wait, 0.75 s timeout (1.5 s left / 2), then a 1 s
   * wait would end at 3.25 s: past the deadline, so it stops at 2.25 s. */
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].timeout_ms, 1000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(f.req[1].timeout_ms, 750, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(r->total_ms, 2250, 1e-9);
  CU_ASSERT(r->total_ms <= 3000);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->attempts[1].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "timeout");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[1].detail, "cross the deadline"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "timeout"));
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_cut_by_deadline(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.tx = GUARD_TX_TIMEOUT, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.providers = FAKE_PROVIDERS;
  cfg.nproviders = 2;
  cfg.policy.deadline = 1;
  cfg.policy.attempt_timeout_floor = 2; /* the floor would pass the deadline */
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 1); /* the backup is not tried: no time left */
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].timeout_ms, 1000, 1e-9);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_DEADLINE);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "deadline"));
  CU_ASSERT_STRING_EQUAL(r->stop, "deadline");
  CU_ASSERT_DOUBLE_EQUAL(r->total_ms, 1000, 1e-9);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_max_total_wait(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.attempts = 5;
  cfg.policy.deadline = 0;
  cfg.policy.max_total_wait = 1;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  /* 0.5 s waited; the next 1 s would make 1.5 s > 1 s. */
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_DOUBLE_EQUAL(f.slept, 500, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[1].detail, "max total wait"));
  /* The call's reason leads with why it gave up (issue 24). */
  CU_ASSERT_STRING_EQUAL(r->stop, "max total wait");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "stopped: max total wait; "));
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_no_deadline_no_timeout(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.deadline = 0;
  cfg.policy.attempt_timeout_cap = 0;
  cfg.policy.connect_timeout = 2;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].timeout_ms, 0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].connect_ms, 2000, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(f.req[0].idle_ms, 0, 1e-9); /* not a stream */
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_deadline_before_attempt(void) {
  /* A wait that lands exactly short of the deadline leaves a sliver; a
   * deadline already passed sends nothing more. */
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .ms = 1999.5});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.deadline = 2;
  cfg.policy.backoff_base = 0.0001;
  cfg.policy.attempt_timeout_floor = 0;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT(f.req[1].timeout_ms > 0 && f.req[1].timeout_ms <= 0.5);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

/* Registers the deadline suite. */
int suite_deadline(void) {
  CU_pSuite s = CU_add_suite("deadline", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "attempt-timeout slicing", test_slice) ||
      !CU_add_test(s, "one deadline shared across retries", test_shared_across_retries) ||
      !CU_add_test(s, "an attempt cut by the deadline is kind deadline", test_cut_by_deadline) ||
      !CU_add_test(s, "max total wait", test_max_total_wait) ||
      !CU_add_test(s, "no deadline, no cap: no timeout", test_no_deadline_no_timeout) ||
      !CU_add_test(s, "the last sliver before the deadline", test_deadline_before_attempt))
    return CU_get_error();
  return 0;
}
