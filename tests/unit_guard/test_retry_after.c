/*
 * test_retry_after.c - each Retry-After form and each bad value.
 */
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <string.h>

#define NOW 1767225600.0 /* Thu, 01 Jan 2026 00:00:00 GMT */

typedef struct row {
  const char *ra_ms;
  const char *ra;
  guard__ra_state state;
  double ms;
  const char *why;
} row;

static const row ROWS[] = {
    {NULL, NULL, GUARD__RA_NONE, 0, ""},
    /* retry-after-ms first */
    {"1500", NULL, GUARD__RA_OK, 1500, ""},
    {"250.5", NULL, GUARD__RA_OK, 250.5, ""},
    {"1500", "9", GUARD__RA_OK, 1500, ""},
    {"junk", "2", GUARD__RA_OK, 2000, ""}, /* a bad ms value falls back */
    /* delta-seconds, integer and decimal */
    {NULL, "2", GUARD__RA_OK, 2000, ""},
    {NULL, " 3 ", GUARD__RA_OK, 3000, ""},
    {NULL, "0", GUARD__RA_OK, 0, ""},
    {NULL, "1.25", GUARD__RA_OK, 1250, ""},
    {NULL, "60", GUARD__RA_OK, 60000, ""},
    /* HTTP-date in the three forms RFC 9110 accepts */
    {NULL, "Thu, 01 Jan 2026 00:00:05 GMT", GUARD__RA_OK, 5000, ""},
    {NULL, "Thursday, 01-Jan-26 00:00:07 GMT", GUARD__RA_OK, 7000, ""},
    {NULL, "Thu Jan  1 00:00:09 2026", GUARD__RA_OK, 9000, ""},
    {NULL, "Wed, 31 Dec 2025 23:59:00 GMT", GUARD__RA_OK, 0, ""}, /* past: now */
    /* bad values */
    {NULL, "-1", GUARD__RA_BAD, 0, "negative"},
    {"-5", NULL, GUARD__RA_BAD, 0, "negative"},
    {NULL, "soon", GUARD__RA_BAD, 0, "unparsable"},
    {NULL, "", GUARD__RA_BAD, 0, "unparsable"},
    {NULL, "2s", GUARD__RA_BAD, 0, "unparsable"},
    {NULL, "1e3", GUARD__RA_BAD, 0, "unparsable"},
    {NULL, "Thu, 32 Jan 2026 00:00:00 GMT", GUARD__RA_BAD, 0, "unparsable"},
    {NULL, "inf", GUARD__RA_BAD, 0, "infinite"},
    {"Infinity", NULL, GUARD__RA_BAD, 0, "infinite"},
    {NULL, "61", GUARD__RA_BAD, 0, "over_cap"},
    {NULL, "99999999999999999999999999", GUARD__RA_BAD, 0, "over_cap"},
    {"60001", NULL, GUARD__RA_BAD, 0, "over_cap"},
    {NULL, "Fri, 02 Jan 2026 00:00:00 GMT", GUARD__RA_BAD, 0, "over_cap"},
};

static void test_forms(void) {
  for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
    guard__ra ra;
    guard__retry_after(ROWS[i].ra_ms, ROWS[i].ra, NOW, 60, &ra);
    CU_ASSERT_EQUAL(ra.state, ROWS[i].state);
    CU_ASSERT_DOUBLE_EQUAL(ra.ms, ROWS[i].ms, 1e-6);
    CU_ASSERT_STRING_EQUAL(ra.why, ROWS[i].why);
  }
}

static void test_no_cap(void) {
  guard__ra ra;
  guard__retry_after(NULL, "3600", NOW, 0, &ra);
  CU_ASSERT_EQUAL(ra.state, GUARD__RA_OK);
  CU_ASSERT_DOUBLE_EQUAL(ra.ms, 3600000, 1e-6);
}

static void test_http_date(void) {
  double t;
  CU_ASSERT_EQUAL(guard__http_date("Sun, 06 Nov 1994 08:49:37 GMT", &t), 0);
  CU_ASSERT_DOUBLE_EQUAL(t, 784111777.0, 1e-9);
  CU_ASSERT_EQUAL(guard__http_date("Sunday, 06-Nov-94 08:49:37 GMT", &t), 0);
  CU_ASSERT_DOUBLE_EQUAL(t, 784111777.0, 1e-9);
  CU_ASSERT_EQUAL(guard__http_date("Sun Nov  6 08:49:37 1994", &t), 0);
  CU_ASSERT_DOUBLE_EQUAL(t, 784111777.0, 1e-9);
  CU_ASSERT_EQUAL(guard__http_date("Sun, 06 Foo 1994 08:49:37 GMT", &t), -1);
  CU_ASSERT_EQUAL(guard__http_date("Sun, 06 Nov 1994 08:49:37 GMT trailing", &t), -1);
  CU_ASSERT_EQUAL(guard__http_date("Sun, 06 Nov 1994 25:49:37 GMT", &t), -1);
}

/* Registers the Retry-After suite. */
int suite_retry_after(void) {
  CU_pSuite s = CU_add_suite("retry_after", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "each form and each bad value", test_forms) ||
      !CU_add_test(s, "cap 0 means no cap", test_no_cap) ||
      !CU_add_test(s, "HTTP-date forms", test_http_date))
    return CU_get_error();
  return 0;
}
