/*
 * test_families.c - the verdict families table as the rest of the program
 * reads it (rpt_expect_nfamilies, rpt_expect_family, rpt_expect_best_practice,
 * rpt_expect_kind_of, rpt_expect_best_practice_list): which verdicts hold for
 * any client (what `fusebox exec` keeps and its --help lists), which it
 * always judges, which are a client's own policy; every key is one
 * rpt_expect_check knows; the list is cut like snprintf.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "rpt_test.h"

/* Today's kinds, pinned: changing one changes what exec judges. */
static void test_kinds(void) {
  static const struct {
    const char *key;
    rpt_family_kind kind;
  } K[] = {
      {"attempts", RPT_FAMILY_POLICY},
      {"backoff", RPT_FAMILY_POLICY},
      {"within_deadline", RPT_FAMILY_POLICY},
      {"profile", RPT_FAMILY_POLICY},
      {"max_requests", RPT_FAMILY_BEST_PRACTICE},
      {"no_retry_after", RPT_FAMILY_BEST_PRACTICE},
      {"retry_after_honoured", RPT_FAMILY_BEST_PRACTICE},
      {"herd", RPT_FAMILY_BEST_PRACTICE},
      {"side_effects", RPT_FAMILY_BEST_PRACTICE},
      {"no_stream_splice", RPT_FAMILY_BEST_PRACTICE},
      {"cost", RPT_FAMILY_BEST_PRACTICE},
      {"tool_integrity", RPT_FAMILY_BEST_PRACTICE},
      {"outcome", RPT_FAMILY_ALWAYS},
      {"exercised", RPT_FAMILY_ALWAYS},
      {"point", RPT_FAMILY_ALWAYS},
  };
  for (size_t i = 0; i < sizeof K / sizeof K[0]; i++) {
    if (rpt_expect_kind_of(K[i].key) != K[i].kind) fprintf(stderr, "kind of %s\n", K[i].key);
    CU_ASSERT_EQUAL(rpt_expect_kind_of(K[i].key), K[i].kind);
  }
  CU_ASSERT_EQUAL(rpt_expect_kind_of("no_such_verdict"), RPT_FAMILY_POLICY);
  CU_ASSERT_EQUAL(rpt_expect_kind_of(NULL), RPT_FAMILY_POLICY);
}

/* The index view agrees with the key view, and every key is a real one. */
static void test_index(void) {
  int n = rpt_expect_nfamilies();
  CU_ASSERT_TRUE(n >= 15);
  CU_ASSERT_PTR_NULL(rpt_expect_family(-1));
  CU_ASSERT_PTR_NULL(rpt_expect_family(n));
  CU_ASSERT_EQUAL(rpt_expect_best_practice(n), RPT_FAMILY_POLICY);
  CU_ASSERT_STRING_EQUAL(rpt_expect_family(n - 1), "point"); /* last: it reads the others */
  for (int i = 0; i < n; i++) {
    const char *k = rpt_expect_family(i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_EQUAL(rpt_expect_best_practice(i), rpt_expect_kind_of(k));
    /* a key rpt_expect_check knows: its error (if any) is about the value */
    char json[128], err[RPT_ERRLEN];
    snprintf(json, sizeof json, "{\"%s\": \"?\"}", k);
    rpt_expect_check(json, NULL, err);
    CU_ASSERT_PTR_NULL(strstr(err, "unknown expectation"));
  }
}

/* The list: the best-practice keys in report order; cut like snprintf. */
static void test_list(void) {
  static const char WANT[] = "max_requests, no_retry_after, retry_after_honoured, herd, "
                             "side_effects, no_stream_splice, cost, tool_integrity";
  char buf[256];
  size_t len = rpt_expect_best_practice_list(buf, sizeof buf);
  CU_ASSERT_STRING_EQUAL(buf, WANT);
  CU_ASSERT_EQUAL(len, strlen(WANT));
  char small[10];
  CU_ASSERT_EQUAL(rpt_expect_best_practice_list(small, sizeof small), strlen(WANT));
  CU_ASSERT_STRING_EQUAL(small, "max_reque");
  CU_ASSERT_EQUAL(rpt_expect_best_practice_list(NULL, 0), strlen(WANT));
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_families(void) {
  CU_pSuite s = CU_add_suite("families", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "each family's kind, pinned", test_kinds);
  ADD(s, "by index and by key alike, every key known", test_index);
  ADD(s, "the best-practice list, cut like snprintf", test_list);
  return 0;
}
