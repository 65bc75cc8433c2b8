/*
 * test_verdict_profile.c - `profile`: does a client keep its profile's
 * promises? Pass and fail cases on hand-written traces
 * (tests/data/traces/profile_*.jsonl): too many attempts, a retry the
 * profile does not make, giving up early, a Retry-After form not read, and
 * the boundaries of max_attempts and of the backoff window; calls to the
 * effect endpoint (the client's own tool executor) are not judged unless
 * the scenario asks for that call (client.call = "effect") (profile_effect_*).
 */
#include <CUnit/CUnit.h>

#include "rpt_test.h"

static void test_profile_data(void) { rt_check_prefix("profile_"); }

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_profile(void) {
  CU_pSuite s = CU_add_suite("verdict_profile", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: profile_*.jsonl", test_profile_data);
  return 0;
}
