/*
 * test_ratelimit.c - the server-side token bucket: 429 with Retry-After
 * when empty, x-ratelimit-* / anthropic-ratelimit-* headers, refill.
 */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <string.h>

#include "e2e_util.h"

#define CHAT "/v1/chat/completions"

/* The server's clock, moved by the test: refills happen when it says so. */
typedef struct fake_clock {
  pthread_mutex_t lock;
  double ms;
} fake_clock;

static double fake_now(void *ud) {
  fake_clock *fc = ud;
  pthread_mutex_lock(&fc->lock);
  double v = fc->ms;
  pthread_mutex_unlock(&fc->lock);
  return v;
}

static void fake_add(fake_clock *fc, double ms) {
  pthread_mutex_lock(&fc->lock);
  fc->ms += ms;
  pthread_mutex_unlock(&fc->lock);
}

static void test_bucket_refuses_then_refills(void) {
  /* 60 rpm = one a scenario second; at time scale 0.05 that is 50 ms of the
     server's clock, which the test moves instead of sleeping. */
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = 1e6};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  e2e_server *s = e2e_start_env("return scenario { name='t', provider = { chat{} },"
                                " ratelimit = { rpm = 60, burst = 2 } }", 0.05, &env);
  e2e_resp r;
  long want[] = {200, 200, 429, 429};
  for (int i = 0; i < 4; i++) {
    if (i == 3) fake_add(&fc, 49); /* not yet a scenario second */
    e2e_chat(s, CHAT, 0, 2000, &r);
    CU_ASSERT_EQUAL(r.status, want[i]);
    CU_ASSERT_PTR_NOT_NULL(e2e_header(&r, "x-ratelimit-remaining-requests"));
    if (i == 2) {
      CU_ASSERT_STRING_EQUAL(e2e_header(&r, "retry-after"), "1");
      CU_ASSERT(strstr(r.body, "rate_limit_exceeded") != NULL);
    }
    e2e_resp_clear(&r);
  }
  fake_add(&fc, 1); /* now a whole scenario second since the bucket emptied */
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 2), "retry_after_ms"), 1000);
  /* Trace times are on the same clock: the last arrival came 50 ms in. */
  CU_ASSERT_DOUBLE_EQUAL(e2e_num(e2e_end_of(s, 4), "t"), 50, 1e-6);
  e2e_free(s);
}

static void test_anthropic_style(void) {
  e2e_server *s = e2e_start("return scenario { name='t', provider = { chat{} },"
                            " ratelimit = { rpm = 10, tpm = 100000, style = 'anthropic' } }", 1);
  e2e_resp r;
  e2e_chat(s, "/v1/messages", 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "anthropic-ratelimit-requests-limit"), "10");
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "anthropic-ratelimit-requests-remaining"), "9");
  CU_ASSERT_PTR_NOT_NULL(e2e_header(&r, "anthropic-ratelimit-tokens-remaining"));
  e2e_resp_clear(&r);
  e2e_free(s);
}

int suite_ratelimit(void) {
  CU_pSuite s = CU_add_suite("e2e_ratelimit", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "the bucket refuses with 429, then refills", test_bucket_refuses_then_refills);
  CU_add_test(s, "Anthropic-style headers", test_anthropic_style);
  return CU_get_error();
}
