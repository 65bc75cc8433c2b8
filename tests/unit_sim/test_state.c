/*
 * test_state.c - the state interface: the in-process backend gives the
 * answers keymap.c, ledger.c and ratelimit.c always gave; Redis URLs are
 * parsed strictly; an unreachable Redis is SIM_ESTATE, not a hang or a
 * crash; and the fusebox error is marked as fusebox's own.
 * (Redis itself is exercised for real by tests/cli/fleet_redis.sh.)
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sim/state_int.h"

/* A stopped clock: the bucket never refills during the test. */
static double stopped_ms(void *ud) {
  (void)ud;
  return 1000.0;
}

static void test_local(void) {
  sim_ratelimit *rl = NULL;
  char err[SIM_ERRLEN];
  sim_env env = {.now_ms = stopped_ms};
  CU_ASSERT_EQUAL_FATAL(sim__ratelimit_new("{\"rpm\":60,\"burst\":2}", 1, &env, &rl, err), SIM_OK);
  sim_state *st = NULL;
  CU_ASSERT_EQUAL_FATAL(sim__state_local_new(1, rl, &st), SIM_OK);
  CU_ASSERT_STRING_EQUAL(st->session, ""); /* not a fleet */
  CU_ASSERT_EQUAL(st->age_ms, 0);
  int a;
  long n;
  CU_ASSERT_EQUAL(st->ops->arrive(st, "k1", &a, &n, err), SIM_OK);
  CU_ASSERT(a == 1 && n == 1);
  CU_ASSERT_EQUAL(st->ops->arrive(st, "k2", &a, &n, err), SIM_OK);
  CU_ASSERT(a == 1 && n == 2);
  CU_ASSERT_EQUAL(st->ops->arrive(st, "k1", &a, &n, err), SIM_OK);
  CU_ASSERT(a == 2 && n == 3);
  sim_rl_result r;
  CU_ASSERT_EQUAL(st->ops->rl_take(st, 1, &r, err), 0);
  CU_ASSERT_EQUAL(st->ops->rl_take(st, 1, &r, err), 0);
  CU_ASSERT_EQUAL(st->ops->rl_take(st, 1, &r, err), 1); /* the burst of 2 is spent */
  CU_ASSERT(r.retry_after >= 1);
  int count;
  char *res = NULL;
  CU_ASSERT_EQUAL(st->ops->ledger_post(st, "op", "send", "f1", 1, &count, &res, err),
                  SIM_LEDGER_APPLIED);
  free(res);
  CU_ASSERT_EQUAL(st->ops->ledger_post(st, "op", "send", "f1", 1, &count, &res, err),
                  SIM_LEDGER_REPLAYED);
  CU_ASSERT(res != NULL && strstr(res, "\"eff_1\"") != NULL);
  free(res);
  CU_ASSERT_EQUAL(st->ops->ledger_lookup(st, "op", &res, err), 1);
  free(res);
  CU_ASSERT_EQUAL(st->ops->ledger_lookup(st, "nope", &res, err), 0);
  sim__state_free(st);
  sim__state_free(NULL);
}

static void test_parse_url(void) {
  char host[64], err[SIM_ERRLEN];
  int port, db;
  CU_ASSERT_EQUAL(sim__state_parse_url("redis://127.0.0.1:6379", host, sizeof host, &port, &db, err), SIM_OK);
  CU_ASSERT(strcmp(host, "127.0.0.1") == 0 && port == 6379 && db == 0);
  CU_ASSERT_EQUAL(sim__state_parse_url("redis://cache.internal:7000/3", host, sizeof host, &port, &db, err), SIM_OK);
  CU_ASSERT(strcmp(host, "cache.internal") == 0 && port == 7000 && db == 3);
  CU_ASSERT_EQUAL(sim__state_parse_url("redis://[::1]:6380/1", host, sizeof host, &port, &db, err), SIM_OK);
  CU_ASSERT(strcmp(host, "::1") == 0 && port == 6380 && db == 1);
  static const char *const bad[] = {
      "", "127.0.0.1:6379", "http://h:1", "redis://h", "redis://h:", "redis://:6379",
      "redis://h:0", "redis://h:65536", "redis://h:12x", "redis://h:1/", "redis://h:1/x",
      "redis://h:1/2/3", "redis://[::1:1", NULL};
  for (int i = 0; bad[i]; i++) {
    err[0] = '\0';
    CU_ASSERT_EQUAL(sim__state_parse_url(bad[i], host, sizeof host, &port, &db, err), SIM_EINVAL);
    CU_ASSERT(strstr(err, "redis://HOST:PORT") != NULL);
  }
  CU_ASSERT_EQUAL(sim__state_parse_url(NULL, host, sizeof host, &port, &db, err), SIM_EINVAL);
}

static void test_unreachable(void) {
  /* Port 1 on loopback: nothing listens, the connection is refused. */
  sim_state_redis_opts o = {.url = "redis://127.0.0.1:1", .session = "t"};
  sim_state *st = (sim_state *)1;
  char err[SIM_ERRLEN] = "";
  CU_ASSERT_EQUAL(sim__state_redis_new(&o, 1, NULL, &st, err), SIM_ESTATE);
  CU_ASSERT_PTR_NULL(st);
  CU_ASSERT(strstr(err, "127.0.0.1:1") != NULL);
  sim_state_redis_opts noname = {.url = "redis://127.0.0.1:1", .session = ""};
  CU_ASSERT_EQUAL(sim__state_redis_new(&noname, 1, NULL, &st, err), SIM_EINVAL);
}

static void test_error_step(void) {
  sim_step *s = sim__state_error_step("Redis at h:1: connection refused");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->status, 500);
  CU_ASSERT_STRING_EQUAL(s->type, "fusebox_state_unavailable");
  CU_ASSERT(strstr(s->message, "not the provider") != NULL);
  CU_ASSERT(strstr(s->message, "connection refused") != NULL);
  CU_ASSERT_EQUAL_FATAL(s->nheaders, 1);
  CU_ASSERT_STRING_EQUAL(s->headers[0].name, "X-Fusebox-Error");
  CU_ASSERT_EQUAL(s->has_retry_after, 0); /* nothing invites a retry */
  sim__step_free(s);
}

int suite_state(void) {
  CU_pSuite s = CU_add_suite("state", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "in process: attempts, arrivals, bucket, ledger", test_local);
  CU_add_test(s, "redis:// URLs", test_parse_url);
  CU_add_test(s, "an unreachable Redis is SIM_ESTATE", test_unreachable);
  CU_add_test(s, "the fusebox error is marked", test_error_step);
  return CU_get_error();
}
