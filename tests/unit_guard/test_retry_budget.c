/*
 * test_retry_budget.c - the retry budget shared by all calls of a handle:
 * exhaustion fails fast, successes refill it, and many threads on one
 * handle never spend more than it holds.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <pthread.h>
#include <string.h>

static void test_bucket(void) {
  guard__rbudget b;
  guard__rbudget_init(&b, 2, 1, 0.5);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 0);
  guard__rbudget_success(&b);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 0);
  guard__rbudget_success(&b);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
  for (int i = 0; i < 100; i++) guard__rbudget_success(&b);
  CU_ASSERT_DOUBLE_EQUAL(b.tokens, 2, 1e-9);
  /* 0.2 five times is one whole token despite rounding */
  guard__rbudget_init(&b, 1, 1, 0.2);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
  for (int i = 0; i < 5; i++) guard__rbudget_success(&b);
  CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
  guard__rbudget_init(&b, 0, 1, 0);
  for (int i = 0; i < 10; i++) CU_ASSERT_EQUAL(guard__rbudget_take(&b), 1);
}

static void test_exhaustion(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.retry_budget_capacity = 1;
  cfg.policy.retry_budget_refill = 0;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_EQUAL(r->nattempts, 3);
  CU_ASSERT_EQUAL(r->attempts[2].kind, GUARD_KIND_SKIPPED);
  CU_ASSERT_STRING_EQUAL(r->attempts[2].error, "retry_budget_empty");
  CU_ASSERT_EQUAL(r->attempts[1].wait_ms, 0); /* failed fast, no wait */
  guard_result_free(r);
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 3);
  CU_ASSERT_EQUAL(r->nattempts, 2);
  CU_ASSERT_EQUAL(r->attempts[1].n, 2);
  CU_ASSERT_EQUAL(r->attempts[1].kind, GUARD_KIND_SKIPPED);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "503"));
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

typedef struct herd {
  guard *g;
  int ok;
} herd;

static void *herd_member(void *ud) {
  herd *h = ud;
  guard_chat_request req = fake_request();
  for (int i = 0; i < 5; i++) {
    guard_result *r = NULL;
    if (guard_chat(h->g, &req, &r) == GUARD_OK && r->outcome == GUARD_OUTCOME_DEGRADED) h->ok++;
    guard_result_free(r);
  }
  return NULL;
}

static void test_shared_by_threads(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 503, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.deadline = 0;
  cfg.policy.max_total_wait = 0;
  cfg.policy.retry_budget_capacity = 10;
  cfg.policy.retry_budget_refill = 0;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  enum { N = 8 };
  pthread_t t[N];
  herd h[N];
  for (int i = 0; i < N; i++) {
    h[i] = (herd){g, 0};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, herd_member, &h[i]), 0);
  }
  int degraded = 0;
  for (int i = 0; i < N; i++) {
    pthread_join(t[i], NULL);
    degraded += h[i].ok;
  }
  CU_ASSERT_EQUAL(degraded, N * 5);
  CU_ASSERT_EQUAL(f.nreq, N * 5 + 10); /* every first attempt + 10 retries */
  guard_free(g);
  fake_free(&f);
}

/* Registers the retry-budget suite. */
int suite_retry_budget(void) {
  CU_pSuite s = CU_add_suite("retry_budget", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "token bucket", test_bucket) ||
      !CU_add_test(s, "exhaustion: no retries, fail fast", test_exhaustion) ||
      !CU_add_test(s, "one budget for many threads", test_shared_by_threads))
    return CU_get_error();
  return 0;
}
