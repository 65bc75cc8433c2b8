/* test_ledger.c - the side-effect ledger, keys honoured or ignored. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

static int post(sim_ledger *lg, const char *key, const char *fp, int apply, int *count) {
  char *res = NULL;
  int a = sim__ledger_post(lg, key, "send", fp, apply, count, &res);
  free(res);
  return a;
}

/* issue 11: without an Idempotency-Key the operation is its name and its
   payload: charge_card with send_email's body is a first execution, with
   its own result. */
static void test_keyless_names_differ(void) {
  sim_ledger *lg = sim__ledger_new(1);
  int n = 0;
  char *r1 = NULL, *r2 = NULL, *r3 = NULL;
  CU_ASSERT_EQUAL(sim__ledger_post(lg, NULL, "send_email", "f1", 1, &n, &r1), SIM_LEDGER_APPLIED);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_EQUAL(sim__ledger_post(lg, NULL, "charge_card", "f1", 1, &n, &r2), SIM_LEDGER_APPLIED);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r2);
  CU_ASSERT(strstr(r2, "charge_card") != NULL);
  CU_ASSERT(strstr(r2, "send_email") == NULL);
  /* The same effect and payload again is counted as a second execution. */
  CU_ASSERT_EQUAL(sim__ledger_post(lg, NULL, "send_email", "f1", 1, &n, &r3), SIM_LEDGER_APPLIED);
  CU_ASSERT_EQUAL(n, 2);
  free(r1);
  free(r2);
  free(r3);
  sim__ledger_free(lg);
}

static void test_honoured(void) {
  sim_ledger *lg = sim__ledger_new(1);
  int n;
  CU_ASSERT_EQUAL(post(lg, "k", "f1", 1, &n), SIM_LEDGER_APPLIED);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_EQUAL(post(lg, "k", "f1", 1, &n), SIM_LEDGER_REPLAYED);
  CU_ASSERT_EQUAL(n, 1);
  CU_ASSERT_EQUAL(post(lg, "k", "f2", 1, &n), SIM_LEDGER_CONFLICT);
  char *res = NULL;
  CU_ASSERT_EQUAL(sim__ledger_lookup(lg, "k", &res), 1);
  CU_ASSERT_PTR_NOT_NULL(res);
  free(res);
  CU_ASSERT_EQUAL(sim__ledger_lookup(lg, "other", &res), 0);
  sim__ledger_free(lg);
}

static void test_ignored_and_keyless(void) {
  sim_ledger *lg = sim__ledger_new(0);
  int n;
  post(lg, "k", "f1", 1, &n);
  CU_ASSERT_EQUAL(post(lg, "k", "f1", 1, &n), SIM_LEDGER_APPLIED);
  CU_ASSERT_EQUAL(n, 2); /* executed twice */
  post(lg, NULL, "f9", 1, &n);
  post(lg, NULL, "f9", 1, &n);
  CU_ASSERT_EQUAL(n, 2); /* keyless duplicates counted by payload */
  sim__ledger_free(lg);
}

static void test_not_applied(void) {
  sim_ledger *lg = sim__ledger_new(1);
  int n;
  CU_ASSERT_EQUAL(post(lg, "k", "f1", 0, &n), SIM_LEDGER_NOT_APPLIED);
  char *res = NULL;
  CU_ASSERT_EQUAL(sim__ledger_lookup(lg, "k", &res), 0);
  CU_ASSERT_EQUAL(post(lg, "k", "f1", 1, &n), SIM_LEDGER_APPLIED);
  sim__ledger_free(lg);
  sim__ledger_free(NULL);
}

int suite_ledger(void) {
  CU_pSuite s = CU_add_suite("ledger", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "keys honoured: replay, conflict, lookup", test_honoured);
  CU_add_test(s, "keyless: the effect name is part of the key", test_keyless_names_differ);
  CU_add_test(s, "keys ignored, keyless payloads", test_ignored_and_keyless);
  CU_add_test(s, "an effect not applied", test_not_applied);
  return CU_get_error();
}
