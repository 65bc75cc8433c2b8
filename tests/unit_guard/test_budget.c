/*
 * test_budget.c - the token budget: checked before any request (a blocked
 * call sends nothing), per call and per session; only answers actually
 * produced are charged.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

static void test_estimate(void) {
  guard_message m[] = {{"user", "12345678"}, {"assistant", "1"}};
  guard_chat_request r = {.system = "abc", .messages = m, .nmessages = 2, .max_tokens = 100};
  CU_ASSERT_EQUAL(guard__estimate(&r), 3 + 100); /* ceil(12 / 4) */
  r.max_tokens = 0;
  CU_ASSERT_EQUAL(guard__estimate(&r), 3 + 1024);
}

static void test_blocks_per_call(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.budget_per_call = 10; /* the request estimates 3 + 16 */
  cfg.policy.blocked_text = "Over budget, sorry.";
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 0);
  CU_ASSERT_EQUAL(r->requests, 0);
  CU_ASSERT_EQUAL(r->nattempts, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_BLOCKED);
  CU_ASSERT_STRING_EQUAL(r->text, "Over budget, sorry.");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "per-call"));
  CU_ASSERT_STRING_EQUAL(r->stop, "token budget");
  CU_ASSERT_EQUAL(r->estimate, 19);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_session_charges_what_was_produced(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(500, NULL));
  fake_add(&f, STEP_OK); /* usage: 12 + 3 */
  fake_add(&f, STEP_STATUS(401, NULL));
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.budget_per_session = 40;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request(); /* estimate 19 */
  guard_result *r;
  /* 1: a failure then an answer: charged 15, not 30. */
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->tokens, 15);
  CU_ASSERT_EQUAL(r->tokens_in, 12);
  CU_ASSERT_EQUAL(r->tokens_out, 3);
  guard_result_free(r);
  CU_ASSERT_EQUAL(g->budget.used, 15);
  CU_ASSERT_EQUAL(g->budget.reserved, 0);
  /* 2: a permanent failure: nothing charged. */
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->tokens, 0);
  guard_result_free(r);
  CU_ASSERT_EQUAL(g->budget.used, 15);
  /* 3: 15 + 19 <= 40: sent; 4: 30 + 19 > 40: blocked, nothing sent. */
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  guard_result_free(r);
  int before = f.nreq;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_BLOCKED);
  CU_ASSERT_EQUAL(f.nreq, before);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "session"));
  CU_ASSERT_PTR_NOT_NULL(strstr(r->text, "budget")); /* the default text */
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_reservations_in_flight(void) {
  guard__budget b = {0};
  char why[128];
  CU_ASSERT_EQUAL(guard__budget_reserve(&b, 0, 100, 60, why, sizeof why), 0);
  CU_ASSERT_EQUAL(guard__budget_reserve(&b, 0, 100, 60, why, sizeof why), 1);
  guard__budget_settle(&b, 60, 20);
  CU_ASSERT_EQUAL(b.used, 20);
  CU_ASSERT_EQUAL(b.reserved, 0);
  CU_ASSERT_EQUAL(guard__budget_reserve(&b, 0, 100, 60, why, sizeof why), 0);
}

static void test_usage_missing(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(200, "{\"choices\":[{\"message\":{\"content\":\"12345\"}}]}"));
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->tokens_in, 3);  /* ceil(10 / 4) */
  CU_ASSERT_EQUAL(r->tokens_out, 2); /* ceil(5 / 4) */
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

/* Registers the token-budget suite. */
int suite_budget(void) {
  CU_pSuite s = CU_add_suite("budget", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "estimate", test_estimate) ||
      !CU_add_test(s, "over the per-call budget: blocked, 0 requests", test_blocks_per_call) ||
      !CU_add_test(s, "session budget charges only answers produced", test_session_charges_what_was_produced) ||
      !CU_add_test(s, "calls in flight reserve their estimate", test_reservations_in_flight) ||
      !CU_add_test(s, "no usage reported: estimated from the texts", test_usage_missing))
    return CU_get_error();
  return 0;
}
