/*
 * test_markdown.c - the Markdown report (reports/markdown.c) on
 * rt_sample_run: the headline counts, one table row per scenario, the
 * evidence of each scenario that did not pass in a <details> block, and
 * hostile text from a trace escaped so it can neither break the table nor
 * inject markup; a run that passes has no "Not passed" part.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

static char *markdown_of(rpt_run *run) {
  char *path = rt_tmppath(".md"), err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(rpt_run_write_markdown(run, path, err), 0);
  char *text = rt_slurp(path, NULL);
  CU_ASSERT_PTR_NOT_NULL(text);
  unlink(path);
  free(path);
  return text;
}

static void test_markdown(void) {
  rpt_run *run = rt_sample_run();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  char *t = markdown_of(run);
  rpt_run_free(run);
  CU_ASSERT(rt_has(t, "## fusebox: ❌ 4 scenarios, 1 passed, 2 failed, 1 error"));
  CU_ASSERT(rt_has(t, "| status | scenario | verdicts | attempts | time |"));
  CU_ASSERT(rt_has(t, "| ✅ pass | 429 then ok \\[guard\\] | 6/6 | 2 | 2030 ms |"));
  CU_ASSERT(rt_has(t, "10/13 verdicts hold"));
  CU_ASSERT(rt_has(t, "- pass `served`: 2 requests, all to served paths"));
  CU_ASSERT(rt_has(t, "- **fail** `outcome`: call 0 ended error (&lt;/td&gt;&lt;script&gt; ), expected ok"));
  CU_ASSERT(rt_has(t, "| ❌ **FAIL** | expired key retried by a try/except wrapper | 2/3 | 2 | 1234 ms |"));
  CU_ASSERT(rt_has(t, "| ⚠️ **ERROR** | broken &lt;scenario&gt; | — | — | — |"));
  CU_ASSERT(rt_has(t, "### Not passed"));
  CU_ASSERT(rt_has(t, "<details><summary>❌ expired key retried by a try/except wrapper: 1 verdict failed</summary>"));
  CU_ASSERT(rt_has(t, "- **fail** `no_retry_after`: attempt 2 of request"));
  CU_ASSERT(rt_has(t, "- error: scenarios/broken.lua:3: unexpected symbol near '&lt;'"));
  /* The hostile scenario: escaped, one line, no control characters. */
  CU_ASSERT(rt_has(t, "&lt;script&gt;alert(\"x\")&lt;/script&gt; &amp; 'q'  \\[31mred"));
  CU_ASSERT(!rt_has(t, "<script>"));
  CU_ASSERT(!rt_has(t, "<svg"));
  CU_ASSERT(!rt_has(t, "\x1b"));
  CU_ASSERT(!rt_has(t, "\x07"));
  CU_ASSERT(!rt_has(t, "\xff"));
  /* Every table row has the header's 5 cells: no | from a name got through. */
  int rows = 0;
  for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
    if (*l != '|') continue;
    int bars = 0;
    for (const char *c = l; *c && *c != '\n'; c++)
      if (*c == '|' && (c == l || c[-1] != '\\')) bars++;
    CU_ASSERT_EQUAL(bars, 6);
    rows++;
  }
  CU_ASSERT_EQUAL(rows, 2 + 4);
  free(t);
}

static void test_markdown_all_pass(void) {
  rpt_run *run = rpt_run_new();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  char path[4096], err[RPT_ERRLEN];
  rpt_input in = {0};
  in.trace_path = rt_data_path("attempts_pass_exact.jsonl", path, sizeof path);
  CU_ASSERT_EQUAL_FATAL(rpt_run_add(run, &in, err), 0);
  char *t = markdown_of(run);
  rpt_run_free(run);
  CU_ASSERT(rt_has(t, "## fusebox: ✅ 1 scenario, 1 passed, 0 failed"));
  CU_ASSERT(!rt_has(t, "Not passed"));
  CU_ASSERT(!rt_has(t, "<details>"));
  free(t);
  /* An unwritable path is an error with the path in it. */
  run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_write_markdown(run, "/nonexistent-dir/x.md", err), RPT_EIO);
  CU_ASSERT(rt_has(err, "/nonexistent-dir/x.md"));
  rpt_run_free(run);
}

#define ADD(s, name, fn) \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_writer_markdown(void) {
  CU_pSuite s = CU_add_suite("writer_markdown", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "table, evidence, escapes", test_markdown);
  ADD(s, "a passing run, an unwritable path", test_markdown_all_pass);
  return 0;
}
