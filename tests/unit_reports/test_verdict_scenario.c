/*
 * test_verdict_scenario.c - the verdicts every judgement carries (`served`,
 * `exercised`) and the scenario's point (`point`): each hand-written trace under
 * tests/data/traces states the verdicts it must produce.
 */
#include <CUnit/CUnit.h>

#include "rpt_test.h"

static void test_served_data(void) { rt_check_prefix("served_"); }
static void test_exercised_data(void) { rt_check_prefix("exercised_"); }
/* expect.point: judged and passed (PASS), failed (FAIL), n/a or not judged
   (N/A with the sentence), bad values. */
static void test_point_data(void) { rt_check_prefix("point_"); }

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_scenario(void) {
  CU_pSuite s = CU_add_suite("verdict_scenario", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: served_*.jsonl", test_served_data);
  ADD(s, "data: exercised_*.jsonl", test_exercised_data);
  ADD(s, "data: point_*.jsonl", test_point_data);
  return 0;
}
