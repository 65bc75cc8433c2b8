/*
 * test_check.h - NULL-safe string assertions for every test runner.
 *
 * CUnit's CU_ASSERT_STRING_EQUAL and friends pass their arguments straight
 * to strcmp: a helper that returns NULL (a header the server did not send, a
 * trace field that is missing) crashes the whole runner, and every later test
 * goes unreported. This header redefines them so that NULL fails the one
 * assertion instead, and says so. Every test gets it through
 * tests/shim/CUnit/CUnit.h (first on the runners' include path), so a new
 * test file that includes <CUnit/CUnit.h> gets it without asking.
 *
 * Also here: t_has(haystack, needle), a NULL-safe strstr test.
 */
#ifndef FUSEBOX_TEST_CHECK_H
#define FUSEBOX_TEST_CHECK_H

#include <CUnit/CUnit.h>
#include <string.h>

/* 1 when both strings exist and are equal (n > 0: their first n bytes). */
static inline int t__streq(const char *a, const char *b, size_t n, int use_n) {
  if (a == NULL || b == NULL) return 0;
  return use_n ? strncmp(a, b, n) == 0 : strcmp(a, b) == 0;
}

/* 1 when both strings exist and differ. */
static inline int t__strne(const char *a, const char *b, size_t n, int use_n) {
  if (a == NULL || b == NULL) return 0;
  return use_n ? strncmp(a, b, n) != 0 : strcmp(a, b) != 0;
}

/* 1 when haystack and needle exist and haystack contains needle. */
static inline int t_has(const char *haystack, const char *needle) {
  return haystack != NULL && needle != NULL && strstr(haystack, needle) != NULL;
}

#define T__ASSERT(ok, text, fatal) \
  { CU_assertImplementation((ok) ? CU_TRUE : CU_FALSE, __LINE__, (text), __FILE__, "", (fatal)); }

#undef CU_ASSERT_STRING_EQUAL
#undef CU_ASSERT_STRING_EQUAL_FATAL
#undef CU_ASSERT_STRING_NOT_EQUAL
#undef CU_ASSERT_STRING_NOT_EQUAL_FATAL
#undef CU_ASSERT_NSTRING_EQUAL
#undef CU_ASSERT_NSTRING_EQUAL_FATAL
#undef CU_ASSERT_NSTRING_NOT_EQUAL
#undef CU_ASSERT_NSTRING_NOT_EQUAL_FATAL

#define CU_ASSERT_STRING_EQUAL(actual, expected)                                           \
  T__ASSERT(t__streq((const char *)(actual), (const char *)(expected), 0, 0),              \
            ("CU_ASSERT_STRING_EQUAL(" #actual "," #expected ") (NULL never matches)"), CU_FALSE)
#define CU_ASSERT_STRING_EQUAL_FATAL(actual, expected)                                     \
  T__ASSERT(t__streq((const char *)(actual), (const char *)(expected), 0, 0),              \
            ("CU_ASSERT_STRING_EQUAL_FATAL(" #actual "," #expected ") (NULL never matches)"), \
            CU_TRUE)
#define CU_ASSERT_STRING_NOT_EQUAL(actual, expected)                                       \
  T__ASSERT(t__strne((const char *)(actual), (const char *)(expected), 0, 0),              \
            ("CU_ASSERT_STRING_NOT_EQUAL(" #actual "," #expected ") (NULL never passes)"), \
            CU_FALSE)
#define CU_ASSERT_STRING_NOT_EQUAL_FATAL(actual, expected)                                 \
  T__ASSERT(t__strne((const char *)(actual), (const char *)(expected), 0, 0),              \
            ("CU_ASSERT_STRING_NOT_EQUAL_FATAL(" #actual "," #expected ") (NULL never passes)"), \
            CU_TRUE)
#define CU_ASSERT_NSTRING_EQUAL(actual, expected, count)                                   \
  T__ASSERT(t__streq((const char *)(actual), (const char *)(expected), (size_t)(count), 1), \
            ("CU_ASSERT_NSTRING_EQUAL(" #actual "," #expected "," #count ") (NULL never matches)"), \
            CU_FALSE)
#define CU_ASSERT_NSTRING_EQUAL_FATAL(actual, expected, count)                             \
  T__ASSERT(t__streq((const char *)(actual), (const char *)(expected), (size_t)(count), 1), \
            ("CU_ASSERT_NSTRING_EQUAL_FATAL(" #actual "," #expected "," #count ")"), CU_TRUE)
#define CU_ASSERT_NSTRING_NOT_EQUAL(actual, expected, count)                               \
  T__ASSERT(t__strne((const char *)(actual), (const char *)(expected), (size_t)(count), 1), \
            ("CU_ASSERT_NSTRING_NOT_EQUAL(" #actual "," #expected "," #count ")"), CU_FALSE)
#define CU_ASSERT_NSTRING_NOT_EQUAL_FATAL(actual, expected, count)                         \
  T__ASSERT(t__strne((const char *)(actual), (const char *)(expected), (size_t)(count), 1), \
            ("CU_ASSERT_NSTRING_NOT_EQUAL_FATAL(" #actual "," #expected "," #count ")"), CU_TRUE)

#endif
