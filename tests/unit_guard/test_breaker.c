/*
 * test_breaker.c - circuit breaker transitions, alone and in the loop,
 * where a refusal shows as a skipped attempt.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

static guard__pol pol(int threshold, double cooldown_s) {
  guard_policy p = guard_policy_default();
  p.breaker_threshold = threshold;
  p.breaker_cooldown = cooldown_s;
  guard__pol q;
  guard__pol_from(&q, &p, 1.0);
  return q;
}

static void test_transitions(void) {
  guard__pol p = pol(3, 1);
  guard__breaker b = {0};
  int probe;
  const char *why = NULL;
  /* closed: failures count, a success resets them */
  guard__breaker_record(&b, &p, 0, 0, 0);
  guard__breaker_record(&b, &p, 0, 0, 0);
  guard__breaker_record(&b, &p, 0, 1, 0);
  CU_ASSERT_EQUAL(b.failures, 0);
  for (int i = 0; i < 2; i++) guard__breaker_record(&b, &p, 10, 0, 0);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_CLOSED);
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 10, &probe, &why), 1);
  CU_ASSERT_EQUAL(probe, 0);
  /* the third consecutive failure opens it */
  guard__breaker_record(&b, &p, 10, 0, 0);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_OPEN);
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 500, &probe, &why), 0);
  CU_ASSERT_STRING_EQUAL(why, "breaker_open");
  CU_ASSERT(guard__breaker_refuses(&b, &p, 1009));
  /* a late success from before it opened changes nothing */
  guard__breaker_record(&b, &p, 20, 1, 0);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_OPEN);
  /* after the cooldown: half-open, one probe only */
  CU_ASSERT(!guard__breaker_refuses(&b, &p, 1010));
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 1010, &probe, &why), 1);
  CU_ASSERT_EQUAL(probe, 1);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_HALF_OPEN);
  int probe2;
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 1011, &probe2, &why), 0);
  CU_ASSERT_STRING_EQUAL(why, "breaker_half_open");
  /* the probe fails: open again for a new cooldown */
  guard__breaker_record(&b, &p, 1100, 0, 1);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_OPEN);
  CU_ASSERT_DOUBLE_EQUAL(b.open_until, 2100, 1e-9);
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 2000, &probe, &why), 0);
  /* the next probe succeeds: closed */
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 2100, &probe, &why), 1);
  CU_ASSERT_EQUAL(probe, 1);
  guard__breaker_record(&b, &p, 2150, 1, 1);
  CU_ASSERT_EQUAL(b.state, GUARD__BRK_CLOSED);
  CU_ASSERT_EQUAL(b.failures, 0);
  /* a claimed probe that was never sent is given back */
  guard__breaker b2 = {GUARD__BRK_OPEN, 3, 0, 0};
  CU_ASSERT_EQUAL(guard__breaker_allow(&b2, &p, 0, &probe, &why), 1);
  guard__breaker_release(&b2, probe);
  CU_ASSERT_EQUAL(guard__breaker_allow(&b2, &p, 0, &probe, &why), 1);
}

static void test_off(void) {
  guard__pol p = pol(0, 1);
  guard__breaker b = {0};
  int probe;
  const char *why;
  for (int i = 0; i < 100; i++) guard__breaker_record(&b, &p, 0, 0, 0);
  CU_ASSERT_EQUAL(guard__breaker_allow(&b, &p, 0, &probe, &why), 1);
}

static void test_in_the_loop(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 503});
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 503});
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 503});
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 200, .body = OK_OPENAI, .sticky = 1});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .body = OK_ANTHROPIC, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.nproviders = 2;
  cfg.policy.breaker_threshold = 2;
  cfg.policy.breaker_cooldown = 10;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;

  /* Call 1: two failures open the primary's breaker; the third attempt is
   * skipped without waiting and the backup answers. */
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 3);
  CU_ASSERT_EQUAL(r->nattempts, 4);
  CU_ASSERT_EQUAL(r->attempts[2].kind, GUARD_KIND_SKIPPED);
  CU_ASSERT_STRING_EQUAL(r->attempts[2].provider, "primary");
  CU_ASSERT_EQUAL(r->attempts[2].n, 3);
  CU_ASSERT_STRING_EQUAL(r->attempts[2].error, "breaker_open");
  CU_ASSERT_EQUAL(r->attempts[1].wait_ms, 0);
  CU_ASSERT_STRING_EQUAL(r->provider, "backup");
  guard_result_free(r);

  /* Call 2: the primary is skipped at once. */
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 4);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_SKIPPED);
  CU_ASSERT_STRING_EQUAL(r->provider, "backup");
  guard_result_free(r);

  /* After the cooldown, one probe: it fails (the third 503), open again. */
  f.now += 10000;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_EQUAL(r->attempts[1].kind, GUARD_KIND_SKIPPED);
  CU_ASSERT_EQUAL(g->prov[0].brk.state, GUARD__BRK_OPEN);
  guard_result_free(r);

  /* After another cooldown the probe succeeds: closed again. */
  f.now += 10000;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(r->provider, "primary");
  CU_ASSERT_EQUAL(g->prov[0].brk.state, GUARD__BRK_CLOSED);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_all_open(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.tx = GUARD_TX_CONNECT, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.breaker_threshold = 1;
  cfg.policy.attempts = 1;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  guard_result_free(r);
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "breaker_open"));
  CU_ASSERT_STRING_EQUAL(r->stop, "breaker open");
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

/* Registers the circuit-breaker suite. */
int suite_breaker(void) {
  CU_pSuite s = CU_add_suite("breaker", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "closed, open, half-open, closed", test_transitions) ||
      !CU_add_test(s, "threshold 0 is off", test_off) ||
      !CU_add_test(s, "in the loop: skipped attempts, probe", test_in_the_loop) ||
      !CU_add_test(s, "every breaker open: degraded, no request", test_all_open))
    return CU_get_error();
  return 0;
}
