/*
 * test_effects.c - the side-effect endpoint and its ledger.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "e2e_util.h"

static void post(e2e_server *s, const char *key, const char *body, e2e_resp *r) {
  char h[128];
  snprintf(h, sizeof h, "Idempotency-Key: %s", key);
  const char *hv[] = {h, NULL};
  e2e_request(s, "POST", "/v1/effects/send_email", body, key ? hv : NULL, 2000, r);
}

static void test_honoured_keys(void) {
  e2e_server *s = e2e_start("return scenario { name='t', effects = { effect{} } }", 1);
  e2e_resp r;
  post(s, "k1", "{\"to\":\"a\"}", &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "\"applied\":true") != NULL);
  e2e_resp_clear(&r);
  post(s, "k1", "{\"to\":\"a\"}", &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "\"replayed\":true") != NULL);
  e2e_resp_clear(&r);
  post(s, "k1", "{\"to\":\"b\"}", &r);
  CU_ASSERT_EQUAL(r.status, 409);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "effect", 0), "action"), "applied");
  CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "effect", 0), "count"), 1);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "effect", 1), "action"), "replayed");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "effect", 2), "action"), "conflict");
  e2e_free(s);
}

static void test_ignored_keys_double_execute(void) {
  e2e_server *s = e2e_start("return scenario { name='t', idempotency = 'ignored', effects = { effect{} } }", 1);
  e2e_resp r;
  post(s, "k1", "{}", &r);
  e2e_resp_clear(&r);
  post(s, "k1", "{}", &r);
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "effect", 1), "count"), 2);
  e2e_free(s);
}

static void test_commit_then_drop_and_lookup(void) {
  e2e_server *s = e2e_start(
      "return scenario { name='t', effects = { effect { apply = true, respond = 'drop' }, effect {} } }", 1);
  e2e_resp r;
  e2e_request(s, "GET", "/v1/effects/k9", NULL, NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404); /* not yet */
  e2e_resp_clear(&r);
  post(s, "k9", "{}", &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_GOT_NOTHING); /* applied, answer lost */
  e2e_resp_clear(&r);
  e2e_request(s, "GET", "/v1/effects/k9", NULL, NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "\"applied\":true") != NULL);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "effect", 1), "action"), "applied");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 1), "how"), "dropped");
  e2e_free(s);
}

static void test_ledger_down(void) {
  e2e_server *s = e2e_start("return scenario { name='t', ledger = 'down', effects = { effect{} } }", 1);
  e2e_resp r;
  e2e_request(s, "GET", "/v1/effects/k1", NULL, NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 503);
  e2e_resp_clear(&r);
  e2e_free(s);
}

int suite_effects(void) {
  CU_pSuite s = CU_add_suite("e2e_effects", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "keys honoured: replay and conflict", test_honoured_keys);
  CU_add_test(s, "keys ignored: double execution", test_ignored_keys_double_execute);
  CU_add_test(s, "commit then drop, then lookup", test_commit_then_drop_and_lookup);
  CU_add_test(s, "ledger down", test_ledger_down);
  return CU_get_error();
}
