/*
 * test_matrix.c - per-scenario results and the matrix writers: a cell shows
 * status, attempts, exit status and failed verdicts; n/a is never a pass;
 * rows match by file; every writer escapes what the trace holds.
 */
#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

/* A run of the given data traces, each named by its file, under client. */
static rpt_run *run_of(const char *client, const char *const *names, const char *file_as) {
  rpt_run *run = rpt_run_new();
  char path[4096], err[RPT_ERRLEN];
  for (int i = 0; names[i]; i++) {
    rpt_input in = {.trace_path = rt_data_path(names[i], path, sizeof path), .client = client,
                    .file = file_as ? file_as : names[i]};
    CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), 0);
  }
  return run;
}

static rpt_matrix *sample(void) {
  static const char *const a[] = {"outcome_external_pass.jsonl", "exercised_stream_fail.jsonl",
                                  "served_na_no_account.jsonl", NULL};
  static const char *const b[] = {"outcome_external_fail.jsonl", NULL};
  rpt_matrix *m = rpt_matrix_new();
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(rpt_matrix_add(m, "good", "./good.sh", run_of("good", a, NULL)), 0);
  /* the same row as good's first scenario, matched by file */
  CU_ASSERT_EQUAL(rpt_matrix_add(m, "curl<x>", "curl --retry 3",
                                 run_of("curl", b, "outcome_external_pass.jsonl")), 0);
  rpt_run *hostile = rpt_run_new();
  rpt_run_add_error(hostile, RT_HOSTILE_NAME, "outcome_external_pass.jsonl", "<b>broke</b>");
  CU_ASSERT_EQUAL(rpt_matrix_add(m, "guard", NULL, hostile), 0);
  return m;
}

static void test_results(void) {
  static const char *const a[] = {"outcome_external_fail.jsonl", "served_na_no_account.jsonl",
                                  "exercised_stream_pass.jsonl", NULL};
  rpt_run *run = run_of("c", a, NULL);
  rpt_result r;
  CU_ASSERT_EQUAL(rpt_run_count(run), 3);
  CU_ASSERT_EQUAL(rpt_run_result(run, 0, &r), 0);
  CU_ASSERT_STRING_EQUAL(r.status, "fail");
  CU_ASSERT_EQUAL(r.exit_code, 56);
  CU_ASSERT_EQUAL(r.attempts, 1);
  CU_ASSERT_EQUAL(r.failed, 1);
  CU_ASSERT_EQUAL(rpt_run_result(run, 1, &r), 0);
  CU_ASSERT_STRING_EQUAL(r.status, "n/a"); /* nothing failed, nothing exercised */
  CU_ASSERT_EQUAL(r.exit_code, -1);
  CU_ASSERT_EQUAL(rpt_run_result(run, 2, &r), 0);
  CU_ASSERT_STRING_EQUAL(r.status, "pass");
  CU_ASSERT_EQUAL(rpt_run_result(run, 3, &r), RPT_EINVAL);
  CU_ASSERT_PTR_NOT_NULL(rpt_run_verdict(run, 0, 0));
  CU_ASSERT_PTR_NULL(rpt_run_verdict(run, 0, 99));
  rpt_summary s;
  rpt_run_summary(run, &s);
  CU_ASSERT_EQUAL(s.passed, 1);
  CU_ASSERT_EQUAL(s.failed, 1);
  CU_ASSERT_EQUAL(s.not_applicable, 1);
  rpt_run_free(run);
}

static void test_term(void) {
  rpt_matrix *m = sample();
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_EQUAL(rpt_matrix_write_term(m, f, 0), 0);
  fclose(f);
  CU_ASSERT(rt_has(buf, "PASS 2 att exit 0"));
  CU_ASSERT(rt_has(buf, "FAIL 1 att exit 56 outcome"));
  CU_ASSERT(rt_has(buf, "FAIL 1 att exit 0 exercised")); /* a non-streaming client */
  CU_ASSERT(rt_has(buf, "N/A 0 att"));
  CU_ASSERT(rt_has(buf, "ERROR"));
  CU_ASSERT(rt_has(buf, "good: 1 passed, 1 failed, 1 n/a"));
  CU_ASSERT(!rt_has(buf, "\x1b"));
  /* 3 rows: curl's scenario joined good's first row */
  int rows = 0;
  for (char *p = buf; (p = strstr(p, ".jsonl")); p++) rows++;
  CU_ASSERT_EQUAL(rows, 3);
  free(buf);
  CU_ASSERT(rpt_matrix_failed(m) > 0);
  rpt_matrix_free(m);
}

static void test_json_html_junit(void) {
  rpt_matrix *m = sample();
  char err[RPT_ERRLEN];
  char *pj = rt_tmppath(".json"), *ph = rt_tmppath(".html"), *px = rt_tmppath(".xml");
  CU_ASSERT_EQUAL(rpt_matrix_write_json(m, pj, err), 0);
  CU_ASSERT_EQUAL(rpt_matrix_write_html(m, ph, err), 0);
  CU_ASSERT_EQUAL(rpt_matrix_write_junit(m, px, err), 0);
  CU_ASSERT_EQUAL(rpt_matrix_write_json(m, "/nonexistent/dir/x.json", err), RPT_EIO);
  rpt_matrix_free(m);
  char *t = rt_slurp(pj, NULL);
  cJSON *doc = cJSON_Parse(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "clients")), 3);
  cJSON *row0 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "scenarios"), 0);
  cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(row0, "cells"), 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c1, "status")->valuestring, "fail");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(c1, "exit_code")->valueint, 56);
  cJSON *row2 = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "scenarios"), 2);
  cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(row2, "cells"), 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c0, "status")->valuestring, "n/a");
  cJSON *c2 = cJSON_GetArrayItem(cJSON_GetObjectItem(row2, "cells"), 2);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(c2, "status")->valuestring, "not played");
  cJSON_Delete(doc);
  free(t);
  t = rt_slurp(ph, NULL);
  CU_ASSERT(rt_has(t, "<td class=\"na\"><b>N/A</b>"));
  CU_ASSERT(rt_has(t, "· exit 56"));
  CU_ASSERT(rt_has(t, "curl&lt;x&gt;"));
  CU_ASSERT(rt_has(t, "&lt;b&gt;broke&lt;/b&gt;"));
  /* one script, the filter's; a hostile name or evidence adds none */
  const char *sc = strstr(t, "<script>");
  CU_ASSERT(sc != NULL && strncmp(sc, "<script>(function(){var W=", 26) == 0);
  CU_ASSERT(sc != NULL && strstr(sc + 1, "<script>") == NULL);
  CU_ASSERT(!rt_has(t, "<b>broke"));
  free(t);
  t = rt_slurp(px, NULL);
  CU_ASSERT(rt_has(t, "<testsuite name=\"fusebox good\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\""));
  CU_ASSERT(rt_has(t, "<testsuite name=\"fusebox curl&lt;x&gt;\""));
  CU_ASSERT(rt_has(t, "<failure message=\"1 verdict failed: outcome (exit 56)\""));
  CU_ASSERT(rt_has(t, "client error: curl: (56) Recv failure"));
  CU_ASSERT(rt_has(t, "<skipped message="));
  free(t);
  char cmd[4400];
  snprintf(cmd, sizeof cmd,
           "command -v python3 >/dev/null 2>&1 || exit 0; python3 -c 'import xml.dom.minidom,sys; "
           "xml.dom.minidom.parse(sys.argv[1])' '%s'", px);
  CU_ASSERT_EQUAL(system(cmd), 0);
  unlink(pj);
  unlink(ph);
  unlink(px);
  free(pj);
  free(ph);
  free(px);
}

static void test_bad_args(void) {
  CU_ASSERT_EQUAL(rpt_matrix_add(NULL, "x", NULL, rpt_run_new()), RPT_EINVAL);
  rpt_matrix *m = rpt_matrix_new();
  CU_ASSERT_EQUAL(rpt_matrix_add(m, NULL, NULL, rpt_run_new()), RPT_EINVAL);
  for (int i = 0; i < 64; i++) CU_ASSERT_EQUAL(rpt_matrix_add(m, "c", NULL, rpt_run_new()), 0);
  CU_ASSERT_EQUAL(rpt_matrix_add(m, "c", NULL, rpt_run_new()), RPT_ETOOBIG);
  CU_ASSERT_EQUAL(rpt_matrix_failed(m), 0);
  rpt_matrix_free(m);
  rpt_matrix_free(NULL);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_matrix(void) {
  CU_pSuite s = CU_add_suite("matrix", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "per-scenario results", test_results);
  ADD(s, "terminal table: status, attempts, exit, n/a", test_term);
  ADD(s, "JSON, HTML, JUnit", test_json_html_junit);
  ADD(s, "arguments and bounds", test_bad_args);
  return 0;
}
