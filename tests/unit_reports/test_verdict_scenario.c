/*
 * test_verdict_scenario.c - the verdicts every judgement carries (`served`,
 * `exercised`): each hand-written trace under
 * tests/data/traces states the verdicts it must produce.
 */
#include <CUnit/CUnit.h>

#include "rpt_test.h"

static void test_served_data(void) { rt_check_prefix("served_"); }
static void test_exercised_data(void) { rt_check_prefix("exercised_"); }

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_scenario(void) {
  CU_pSuite s = CU_add_suite("verdict_scenario", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: served_*.jsonl", test_served_data);
  ADD(s, "data: exercised_*.jsonl", test_exercised_data);
  return 0;
}
