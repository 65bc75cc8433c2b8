/*
 * test_backoff.c - exponential backoff and each jitter mode: exact values
 * from a fixed random value, and spread from different ones.
 */
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>

static guard__pol pol(guard_jitter j, double frac) {
  guard_policy p = guard_policy_default(); /* base 0.5 s, cap 8 s */
  p.jitter = j;
  p.jitter_fraction = frac;
  guard__pol q;
  guard__pol_from(&q, &p, 1.0);
  return q;
}

static void test_exponential(void) {
  guard__pol p = pol(GUARD_JITTER_NONE, 0);
  const double want[] = {500, 1000, 2000, 4000, 8000, 8000, 8000};
  for (int n = 1; n <= 7; n++) CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, n, 0.3), want[n - 1], 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 100, 0.3), 8000, 1e-9); /* no overflow */
}

static void test_full(void) {
  guard__pol p = pol(GUARD_JITTER_FULL, 0);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.0), 0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.5), 250, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 3, 0.25), 500, 1e-9);
  CU_ASSERT(guard__backoff_ms(&p, 5, 0.999999) < 8000);
}

static void test_equal(void) {
  guard__pol p = pol(GUARD_JITTER_EQUAL, 0);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.0), 250, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.5), 375, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 2, 0.5), 750, 1e-9);
}

static void test_plusminus(void) {
  guard__pol p = pol(GUARD_JITTER_PLUSMINUS, 0.1);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.0), 450, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.5), 500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 2, 0.75), 1050, 1e-9);
}

/* Different random values spread the waits, within each mode's band. */
static void test_spread(void) {
  const guard_jitter modes[] = {GUARD_JITTER_FULL, GUARD_JITTER_EQUAL, GUARD_JITTER_PLUSMINUS};
  const double lo[] = {0, 1000, 1800}, hi[] = {2000, 2000, 2200};
  for (int m = 0; m < 3; m++) {
    guard__pol p = pol(modes[m], 0.1);
    double prev = -1, min = 1e9, max = -1;
    int distinct = 0;
    for (int i = 0; i < 10; i++) {
      double w = guard__backoff_ms(&p, 3, i / 10.0);
      if (w != prev) distinct++;
      prev = w;
      if (w < min) min = w;
      if (w > max) max = w;
    }
    CU_ASSERT_EQUAL(distinct, 10);
    CU_ASSERT(min >= lo[m] && max < hi[m]);
    CU_ASSERT(max - min > (hi[m] - lo[m]) / 2);
  }
}

static void test_fixed_and_scale(void) {
  guard_policy pub = guard_policy_default();
  pub.jitter = GUARD_JITTER_NONE;
  pub.flags = GUARD_FIXED_WAIT;
  guard__pol p;
  guard__pol_from(&p, &pub, 1.0);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 1, 0.5), 500, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 6, 0.5), 500, 1e-9);
  pub.flags = 0;
  guard__pol_from(&p, &pub, 0.1); /* ten times faster */
  CU_ASSERT_DOUBLE_EQUAL(guard__backoff_ms(&p, 2, 0.5), 100, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.deadline_ms, 3000, 1e-9);
}

/* The public nominal wait (guard_backoff_nominal, what `run` plans with) is
   the jitter-free wait of the loop, in seconds. */
static void test_nominal(void) {
  guard_policy pub = guard_policy_default();
  const double want[] = {0.5, 1, 2, 4, 8, 8};
  for (int n = 1; n <= 6; n++) CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(&pub, n), want[n - 1], 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(&pub, 0), 0.5, 1e-12);   /* read as 1 */
  CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(&pub, 100), 8, 1e-12);   /* no overflow */
  pub.jitter = GUARD_JITTER_NONE;
  guard__pol p;
  guard__pol_from(&p, &pub, 1.0);
  for (int n = 1; n <= 8; n++)
    CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(&pub, n) * 1000, guard__backoff_ms(&p, n, 0.3), 1e-9);
  pub.flags = GUARD_FIXED_WAIT;
  pub.backoff_base = 1;
  CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(&pub, 5), 1, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(guard_backoff_nominal(NULL, 1), 0, 1e-12);
}

/* Registers the backoff suite. */
int suite_backoff(void) {
  CU_pSuite s = CU_add_suite("backoff", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "min(cap, base*2^(n-1)) without jitter", test_exponential) ||
      !CU_add_test(s, "full jitter exact values", test_full) ||
      !CU_add_test(s, "equal jitter exact values", test_equal) ||
      !CU_add_test(s, "plus-minus jitter exact values", test_plusminus) ||
      !CU_add_test(s, "different random values spread", test_spread) ||
      !CU_add_test(s, "fixed wait and time scale", test_fixed_and_scale) ||
      !CU_add_test(s, "guard_backoff_nominal is the loop's jitter-free wait", test_nominal))
    return CU_get_error();
  return 0;
}
