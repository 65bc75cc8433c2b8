/*
 * test_term_rule.c - rpt__put_term holds to the one terminal-safe rule
 * (common/term_rule.h), the same cases sim_term_safe is tested on
 * (tests/term_rule_cases.h), and cuts at max_cols code points.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"
#include "term_rule_cases.h"

/* What rpt__put_term writes of s, in buf. */
static const char *put(const char *s, int max_cols, char *buf, size_t cap, int *cols) {
  FILE *f = fmemopen(buf, cap, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  *cols = rpt__put_term(f, s, max_cols);
  fclose(f);
  return buf;
}

static void test_cases(void) {
  for (int i = 0; i < TERM_RULE_NCASES; i++) {
    char buf[128] = "";
    int cols;
    put(TERM_RULE_CASES[i].in, -1, buf, sizeof buf, &cols);
    if (strcmp(buf, TERM_RULE_CASES[i].oneline) != 0) fprintf(stderr, "case %d: got '%s'\n", i, buf);
    CU_ASSERT_STRING_EQUAL(buf, TERM_RULE_CASES[i].oneline);
  }
}

static void test_cut(void) {
  char buf[64] = "";
  int cols;
  put("\xc3\xa9t\xc3\xa9\xc2\x9b" "abc", 4, buf, sizeof buf, &cols);
  CU_ASSERT_STRING_EQUAL(buf, "\xc3\xa9t\xc3\xa9\xe2\x80\xa6"); /* 3 code points and the ellipsis */
  CU_ASSERT_EQUAL(cols, 4);
  put("ab\x9b", 3, buf, sizeof buf, &cols);
  CU_ASSERT_STRING_EQUAL(buf, "ab?");
  CU_ASSERT_EQUAL(cols, 3);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_term_rule(void) {
  CU_pSuite s = CU_add_suite("term_rule", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "the shared cases: C0, DEL, C1, bytes that are not UTF-8", test_cases);
  ADD(s, "cut at max_cols code points", test_cut);
  return 0;
}
