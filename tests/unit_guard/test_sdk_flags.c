/*
 * test_sdk_flags.c - the flags that make the guard loop behave like a
 * typical SDK (the sdk-default reference client): retry by status alone,
 * no idempotency key, "up to 25 % less" jitter.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

static guard_result *chat(fake *f, unsigned flags) {
  guard_config cfg;
  fake_config(&cfg, f);
  cfg.policy.flags = flags;
  guard *g = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r = NULL;
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_OK);
  guard_free(g);
  return r;
}

static void test_quota_429_retried_by_status(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(429, ERR_OPENAI("insufficient_quota", "insufficient_quota")));
  fake_add(&f, STEP_STATUS(429, ERR_OPENAI("insufficient_quota", "insufficient_quota")));
  fake_add(&f, STEP_STATUS(429, ERR_OPENAI("insufficient_quota", "insufficient_quota")));
  guard_result *r = chat(&f, GUARD_STATUS_ONLY);
  CU_ASSERT_EQUAL(f.nreq, 3); /* the SDK mistake: a quota 429 retried */
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_TRANSIENT);
  guard_result_free(r);
  fake_free(&f);
  /* Without the flag the same answer is permanent: one request. */
  fake_init(&f);
  fake_add(&f, STEP_STATUS(429, ERR_OPENAI("insufficient_quota", "insufficient_quota")));
  r = chat(&f, 0);
  CU_ASSERT_EQUAL(f.nreq, 1);
  guard_result_free(r);
  fake_free(&f);
}

static void test_bad_200_is_final(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(200, "<html>not json</html>"));
  fake_add(&f, STEP_OK);
  guard_result *r = chat(&f, GUARD_STATUS_ONLY);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_PERMANENT);
  guard_result_free(r);
  fake_free(&f);
}

static void test_4xx_final_5xx_and_connection_retried(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_TX(GUARD_TX_CLOSED));
  fake_add(&f, STEP_STATUS(500, NULL));
  fake_add(&f, STEP_OK);
  guard_result *r = chat(&f, GUARD_STATUS_ONLY);
  CU_ASSERT_EQUAL(f.nreq, 3);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  guard_result_free(r);
  fake_free(&f);
  fake_init(&f);
  fake_add(&f, STEP_STATUS(400, ERR_OPENAI("invalid_request_error", "context_length_exceeded")));
  r = chat(&f, GUARD_STATUS_ONLY);
  CU_ASSERT_EQUAL(f.nreq, 1);
  guard_result_free(r);
  fake_free(&f);
}

static void test_no_key_on_effects(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, STEP_STATUS(200, "{\"key\":null,\"applied\":true}"));
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.flags = GUARD_NO_KEY;
  guard *g = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_result *r = NULL;
  CU_ASSERT_EQUAL(guard_effect(g, "send", "{}", NULL, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_STRING_EQUAL(f.req[0].key, "");
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_subtract_jitter(void) {
  guard__pol p;
  memset(&p, 0, sizeof p);
  p.base_ms = 500;
  p.cap_ms = 8000;
  p.jitter = GUARD_JITTER_SUBTRACT;
  p.jitter_fraction = 0.25;
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.0), 500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 2, 0.5), 1000 * 0.875, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 10, 0.999999), 8000 * 0.75, 1e-2);
}

int suite_sdk_flags(void) {
  CU_pSuite s = CU_add_suite("sdk_flags", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "status only: a quota 429 is retried", test_quota_429_retried_by_status);
  CU_add_test(s, "status only: a bad 200 is final", test_bad_200_is_final);
  CU_add_test(s, "status only: 4xx final, 5xx and connection retried",
              test_4xx_final_5xx_and_connection_retried);
  CU_add_test(s, "no idempotency key on effects", test_no_key_on_effects);
  CU_add_test(s, "subtracted jitter", test_subtract_jitter);
  return CU_get_error();
}
