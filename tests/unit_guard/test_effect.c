/*
 * test_effect.c - side effects: one idempotency key for every attempt, and
 * each branch of the result-unknown procedure (ask the ledger before
 * sending again; pending when it cannot tell).
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

#define POST_URL "/effects/send_email"
#define GET_URL "/effects/op-"
#define APPLIED "{\"key\":\"op-1\",\"applied\":true,\"result\":{\"id\":42}}"
#define NOT_APPLIED "{\"key\":\"op-1\",\"applied\":false}"

static int count(const fake *f, const char *method) {
  int n = 0;
  for (int i = 0; i < f->nreq; i++) n += strcmp(f->req[i].method, method) == 0;
  return n;
}

static guard_result *effect(fake *f, unsigned flags, const char *key) {
  guard_config cfg;
  fake_config(&cfg, f);
  cfg.policy.flags = flags;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_result *r = NULL;
  CU_ASSERT_EQUAL(guard_effect(g, "send_email", "{\"to\":\"a@b\"}", key, &r), GUARD_OK);
  guard_free(g);
  return r;
}

static void test_key_reused(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 503});
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 500});
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
  guard_result *r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "{\"id\":42}");
  CU_ASSERT_EQUAL(f.nreq, 3);
  for (int i = 0; i < 3; i++) {
    CU_ASSERT_STRING_EQUAL(f.req[i].key, "op-1");
    CU_ASSERT_STRING_EQUAL(f.req[i].url, "http://fake/v1/effects/send_email");
    CU_ASSERT_STRING_EQUAL(f.req[i].body, "{\"to\":\"a@b\"}");
  }
  CU_ASSERT_STRING_EQUAL(r->key, "op-1");
  guard_result_free(r);
  fake_free(&f);
  /* A generated key is also one key for every attempt. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 502});
  fake_add(&f, (fake_step){.status = 200, .body = APPLIED});
  r = effect(&f, 0, NULL);
  CU_ASSERT_EQUAL(strncmp(f.req[0].key, "fx-", 3), 0);
  CU_ASSERT_EQUAL(strlen(f.req[0].key), 35);
  CU_ASSERT_STRING_EQUAL(f.req[0].key, f.req[1].key);
  CU_ASSERT_STRING_EQUAL(r->key, f.req[0].key);
  guard_result_free(r);
  fake_free(&f);
}

static void test_unknown_then_applied(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_CLOSED});
  fake_add(&f, (fake_step){.url_has = GET_URL, .status = 200, .body = APPLIED});
  guard_result *r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "{\"id\":42}");
  CU_ASSERT_EQUAL(count(&f, "POST"), 1); /* never re-executed */
  CU_ASSERT_EQUAL(count(&f, "GET"), 1);
  CU_ASSERT_STRING_EQUAL(f.req[1].url, "http://fake/v1/effects/op-1");
  CU_ASSERT_EQUAL(r->nattempts, 2);
  CU_ASSERT_STRING_EQUAL(r->attempts[1].provider, "ledger");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->attempts[0].detail, "result unknown"));
  CU_ASSERT_EQUAL(r->requests, 2);
  guard_result_free(r);
  fake_free(&f);
}

static void test_unknown_not_applied(void) {
  const char *answers[] = {NULL, NOT_APPLIED};
  const int statuses[] = {404, 200};
  for (int i = 0; i < 2; i++) {
    fake f;
    fake_init(&f);
    fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_TIMEOUT});
    fake_add(&f, (fake_step){.url_has = GET_URL, .status = statuses[i], .body = answers[i]});
    fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
    guard_result *r = effect(&f, 0, "op-1");
    CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
    CU_ASSERT_EQUAL(count(&f, "POST"), 2);
    CU_ASSERT_EQUAL(count(&f, "GET"), 1);
    CU_ASSERT_STRING_EQUAL(f.req[2].key, "op-1"); /* the same key */
    CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "not_applied");
    CU_ASSERT(r->attempts[0].wait_ms > 0);
    guard_result_free(r);
    fake_free(&f);
  }
}

static void test_unknown_cannot_tell(void) {
  fake_step lookups[] = {
      {.url_has = GET_URL, .status = 503},            /* ledger down */
      {.url_has = GET_URL, .tx = GUARD_TX_TIMEOUT},   /* lookup timed out */
      {.url_has = GET_URL, .status = 200, .body = "not json"},
  };
  const char *errors[] = {"ledger_down", "timeout", "http_200"};
  for (int i = 0; i < 3; i++) {
    fake f;
    fake_init(&f);
    fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_CUT, .status = 200,
                             .body = "{\"key\":\"op"});
    fake_add(&f, lookups[i]);
    fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
    guard_result *r = effect(&f, 0, "op-1");
    CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_PENDING);
    CU_ASSERT_EQUAL(count(&f, "POST"), 1); /* never re-executed blind */
    CU_ASSERT_STRING_EQUAL(r->attempts[1].error, errors[i]);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "result unknown"));
    CU_ASSERT(strlen(r->text) > 0);
    guard_result_free(r);
    fake_free(&f);
  }
}

static void test_unreadable_200_asks(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = "<html>"});
  fake_add(&f, (fake_step){.url_has = GET_URL, .status = 200, .body = APPLIED});
  guard_result *r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(count(&f, "POST"), 1);
  guard_result_free(r);
  fake_free(&f);
}

static void test_not_sent_retries_without_asking(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_CONNECT});
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
  guard_result *r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(count(&f, "GET"), 0);
  CU_ASSERT_EQUAL(count(&f, "POST"), 2);
  guard_result_free(r);
  fake_free(&f);
}

static void test_conflict_is_an_error(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 409, .sticky = 1});
  guard_result *r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_ERROR);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "conflict");
  CU_ASSERT_PTR_NOT_NULL(strstr(r->reason, "conflict"));
  guard_result_free(r);
  fake_free(&f);
  /* Transient failures to the end: error, not pending (never applied). */
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 503, .sticky = 1});
  r = effect(&f, 0, "op-1");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_ERROR);
  CU_ASSERT_EQUAL(f.nreq, 3);
  guard_result_free(r);
  fake_free(&f);
}

static void test_bad_client_knobs(void) {
  /* Blind re-execution: no lookup after an unknown result. */
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_TIMEOUT});
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
  guard_result *r = effect(&f, GUARD_BLIND_REEXECUTE, "op-1");
  CU_ASSERT_EQUAL(count(&f, "GET"), 0);
  CU_ASSERT_EQUAL(count(&f, "POST"), 2);
  guard_result_free(r);
  fake_free(&f);
  /* A new key per attempt. */
  static const uint64_t seq[] = {1, 2, 3, 4, 5, 6};
  fake_init(&f);
  f.rnd_seq = seq;
  f.rnd_n = 6;
  fake_add(&f, (fake_step){.url_has = POST_URL, .tx = GUARD_TX_CONNECT});
  fake_add(&f, (fake_step){.url_has = POST_URL, .status = 200, .body = APPLIED});
  r = effect(&f, GUARD_NEW_KEY_PER_ATTEMPT, NULL);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_STRING_NOT_EQUAL(f.req[0].key, f.req[1].key);
  guard_result_free(r);
  fake_free(&f);
}

static void test_bad_arguments(void) {
  fake f;
  fake_init(&f);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_result *r = (guard_result *)1;
  CU_ASSERT_EQUAL(guard_effect(g, "../x", "{}", NULL, &r), GUARD_EINVAL);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_EQUAL(guard_effect(g, "x", "{}", "a/b", &r), GUARD_EINVAL);
  CU_ASSERT_EQUAL(guard_effect(g, "x", "{}", "", &r), GUARD_EINVAL);
  CU_ASSERT_EQUAL(guard_effect(g, "x", NULL, NULL, &r), GUARD_EINVAL);
  CU_ASSERT_EQUAL(f.nreq, 0);
  guard_free(g);
  fake_free(&f);
}

/* Registers the side-effect suite. */
int suite_effect(void) {
  CU_pSuite s = CU_add_suite("effect", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "one idempotency key for every attempt", test_key_reused) ||
      !CU_add_test(s, "unknown result, ledger says applied: ok", test_unknown_then_applied) ||
      !CU_add_test(s, "unknown result, not applied: retry, same key", test_unknown_not_applied) ||
      !CU_add_test(s, "unknown result, ledger cannot tell: pending", test_unknown_cannot_tell) ||
      !CU_add_test(s, "an unreadable 200 asks the ledger", test_unreadable_200_asks) ||
      !CU_add_test(s, "not sent: retry without asking", test_not_sent_retries_without_asking) ||
      !CU_add_test(s, "conflict and exhausted retries are errors", test_conflict_is_an_error) ||
      !CU_add_test(s, "bad-client knobs: blind re-execution, new keys", test_bad_client_knobs) ||
      !CU_add_test(s, "bad arguments send nothing", test_bad_arguments))
    return CU_get_error();
  return 0;
}
