/* test_ratelimit.c - the token bucket on an injected clock: refusals,
   Retry-After, refill to the millisecond, headers, bad tables. No sleeping:
   the test moves the clock. */
#include <CUnit/CUnit.h>
#include <string.h>

#include "sim/sim_int.h"

typedef struct fake_clock {
  double ms;   /* monotonic */
  double wall; /* epoch seconds */
} fake_clock;

static double fake_now(void *ud) { return ((fake_clock *)ud)->ms; }
static double fake_wall(void *ud) { return ((fake_clock *)ud)->wall; }

static const char *header(const sim_rl_result *r, const char *name) {
  for (int i = 0; i < r->nheaders; i++)
    if (strcmp(r->headers[i].name, name) == 0) return r->headers[i].value;
  return NULL;
}

static void test_refuses_then_refills(void) {
  fake_clock fc = {1000, 1.7e9};
  sim_env env = {fake_now, fake_wall, &fc};
  sim_ratelimit *rl = NULL;
  char err[SIM_ERRLEN];
  /* 60 rpm: one request a scenario second; a bucket of 2. */
  CU_ASSERT_EQUAL_FATAL(sim__ratelimit_new("{\"rpm\":60,\"burst\":2}", 1, &env, &rl, err), 0);
  sim_rl_result r;
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 0);
  CU_ASSERT_STRING_EQUAL(header(&r, "x-ratelimit-remaining-requests"), "1");
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 0);
  CU_ASSERT_STRING_EQUAL(header(&r, "x-ratelimit-remaining-requests"), "0");
  CU_ASSERT_STRING_EQUAL(header(&r, "x-ratelimit-reset-requests"), "2s");
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 1);
  CU_ASSERT_DOUBLE_EQUAL(r.retry_after, 1, 1e-9);
  fc.ms += 999; /* not quite a second: still empty */
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 1);
  fc.ms += 1; /* a whole second since the bucket emptied: one more */
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 0);
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 1);
  fc.ms += 60000; /* a long pause refills to the burst, not beyond */
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 0);
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 0);
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 10, &r), 1);
  sim__ratelimit_free(rl);
}

static void test_time_scale_and_tokens(void) {
  fake_clock fc = {0, 1.7e9};
  sim_env env = {fake_now, fake_wall, &fc};
  sim_ratelimit *rl = NULL;
  char err[SIM_ERRLEN];
  /* 600 tokens a minute = 10 a scenario second; at scale 0.5 a scenario
     second is 500 ms. */
  CU_ASSERT_EQUAL_FATAL(sim__ratelimit_new("{\"tpm\":600}", 0.5, &env, &rl, err), 0);
  sim_rl_result r;
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 600, &r), 0);
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 50, &r), 1);
  CU_ASSERT_DOUBLE_EQUAL(r.retry_after, 5, 1e-9); /* 50 tokens at 10/s */
  fc.ms += 2000; /* 4 scenario seconds: 40 tokens */
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 50, &r), 1);
  CU_ASSERT_DOUBLE_EQUAL(r.retry_after, 1, 1e-9);
  fc.ms += 500; /* one more: 50 */
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 50, &r), 0);
  CU_ASSERT_PTR_NULL(header(&r, "x-ratelimit-remaining-requests")); /* no rpm */
  CU_ASSERT_STRING_EQUAL(header(&r, "x-ratelimit-remaining-tokens"), "0");
  sim__ratelimit_free(rl);
}

static void test_anthropic_reset_on_wall_clock(void) {
  fake_clock fc = {0, 1700000000}; /* 2023-11-14T22:13:20Z */
  sim_env env = {fake_now, fake_wall, &fc};
  sim_ratelimit *rl = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(
      sim__ratelimit_new("{\"rpm\":6,\"style\":\"anthropic\"}", 1, &env, &rl, err), 0);
  sim_rl_result r;
  CU_ASSERT_EQUAL(sim__ratelimit_take(rl, 1, &r), 0);
  CU_ASSERT_STRING_EQUAL(header(&r, "anthropic-ratelimit-requests-limit"), "6");
  CU_ASSERT_STRING_EQUAL(header(&r, "anthropic-ratelimit-requests-remaining"), "5");
  /* One request back every 10 s. */
  CU_ASSERT_STRING_EQUAL(header(&r, "anthropic-ratelimit-requests-reset"), "2023-11-14T22:13:30Z");
  sim__ratelimit_free(rl);
}

static void test_bad_tables_name_the_key(void) {
  static const struct {
    const char *json, *msg;
  } cases[] = {
      {"{\"rpm\":10,\"stlye\":\"openai\"}", "ratelimit.stlye: unknown key"},
      {"{\"rpm\":-1}", "ratelimit.rpm must be"},
      {"{\"rpm\":1,\"style\":\"azure\"}", "ratelimit.style must be"},
      {"{\"burst\":3}", "ratelimit needs rpm or tpm"},
      {"[1]", "ratelimit must be a table"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sim_ratelimit *rl = (sim_ratelimit *)1;
    char err[SIM_ERRLEN] = "";
    CU_ASSERT_EQUAL(sim__ratelimit_new(cases[i].json, 1, NULL, &rl, err), SIM_ELOAD);
    CU_ASSERT_PTR_NULL(rl);
    if (strncmp(err, cases[i].msg, strlen(cases[i].msg)) != 0) {
      fprintf(stderr, "\n  %s -> %s\n", cases[i].json, err);
      CU_FAIL("message");
    }
  }
  sim_ratelimit *rl = (sim_ratelimit *)1;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__ratelimit_new(NULL, 1, NULL, &rl, err), SIM_OK);
  CU_ASSERT_PTR_NULL(rl);
}

int suite_ratelimit(void) {
  CU_pSuite s = CU_add_suite("ratelimit", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "refuses when empty, refills by the clock", test_refuses_then_refills);
  CU_add_test(s, "tokens per minute, in scaled time", test_time_scale_and_tokens);
  CU_add_test(s, "Anthropic reset time from the wall clock", test_anthropic_reset_on_wall_clock);
  CU_add_test(s, "a bad table names its key", test_bad_tables_name_the_key);
  return CU_get_error();
}
