/*
 * test_report_merge.c - joining JSON reports (rpt_run_merge_json): a report
 * read back writes the same bytes in every format; shards come back in the
 * suite's order; refusals name the file (and the line of bad JSON), and a
 * status its verdicts do not give is refused.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

/* Writes run as JSON to a new temporary file; the caller frees and unlinks. */
static char *json_of(const rpt_run *run) {
  char *p = rt_tmppath(".json"), err[RPT_ERRLEN];
  if (p && rpt_run_write_json(run, p, err) != RPT_OK) {
    free(p);
    return NULL;
  }
  return p;
}

static int same_file(const char *a, const char *b) {
  size_t la = 0, lb = 0;
  char *x = rt_slurp(a, &la), *y = rt_slurp(b, &lb);
  int same = x && y && la == lb && memcmp(x, y, la) == 0;
  free(x);
  free(y);
  return same;
}

static void test_round_trip(void) {
  /* The sample run: a pass, two failures (one hostile text), an error. */
  rpt_run *run = rt_sample_run();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  char *j1 = json_of(run);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j1);
  rpt_run *back = rpt_run_new();
  char err[RPT_ERRLEN];
  const char *paths[1] = {j1};
  CU_ASSERT_EQUAL(rpt_run_merge_json(back, paths, 1, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_run_count(back), rpt_run_count(run));
  CU_ASSERT_EQUAL(rpt_run_failed(back), rpt_run_failed(run));
  char *j2 = json_of(back);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j2);
  CU_ASSERT(same_file(j1, j2));
  /* The other writers too. */
  char *h1 = rt_tmppath(".html"), *h2 = rt_tmppath(".html");
  char *x1 = rt_tmppath(".xml"), *x2 = rt_tmppath(".xml");
  CU_ASSERT_EQUAL(rpt_run_write_html(run, h1, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_run_write_html(back, h2, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_run_write_junit(run, x1, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_run_write_junit(back, x2, err), RPT_OK);
  CU_ASSERT(same_file(h1, h2));
  CU_ASSERT(same_file(x1, x2));
  char *files[] = {j1, j2, h1, h2, x1, x2};
  for (int i = 0; i < 6; i++) {
    unlink(files[i]);
    free(files[i]);
  }
  rpt_run_free(run);
  rpt_run_free(back);
}

/* A one-scenario shard report: shard k of 2, the scenario at index idx. */
static char *shard_json(int k, int idx, const char *name, const char *set) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"fusebox_report\": 1, \"shard\": {\"k\": %d, \"n\": 2, \"total\": 2, \"set\": \"%s\"},\n"
           " \"results\": [{\"name\": \"%s\", \"file\": \"lib/%s.lua\", \"index\": %d,\n"
           "   \"status\": \"pass\", \"time_ms\": 5, \"time_scale\": 1, \"complete\": true,\n"
           "   \"verdicts\": [{\"name\": \"attempts\", \"status\": \"pass\", \"evidence\": \"1\"},\n"
           "                {\"name\": \"served\", \"status\": \"pass\", \"evidence\": \"\"}],\n"
           "   \"attempts\": [{\"id\": 1, \"key\": \"k\", \"attempt\": 1, \"arrive_ms\": 0,\n"
           "                 \"end_ms\": 2, \"status\": 200, \"how\": \"complete\"}]}]}\n",
           k, set, name, name, idx);
  return rt_tmpfile(text, strlen(text));
}

static void test_shards_in_suite_order(void) {
  char *a = shard_json(1, 1, "second", "00000000000000aa");
  char *b = shard_json(2, 0, "first", "00000000000000aa");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN];
  const char *paths[2] = {a, b};
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, paths, 2, err), RPT_OK);
  rpt_result r;
  CU_ASSERT_EQUAL(rpt_run_count(run), 2);
  CU_ASSERT_EQUAL(rpt_run_result(run, 0, &r), 0);
  CU_ASSERT_STRING_EQUAL(r.name, "first");
  CU_ASSERT_STRING_EQUAL(r.status, "pass");
  CU_ASSERT_EQUAL(r.attempts, 1);
  CU_ASSERT_EQUAL(rpt_run_result(run, 1, &r), 0);
  CU_ASSERT_STRING_EQUAL(r.name, "second");
  rpt_run_free(run);

  /* Refusals: the same shard twice, one missing, another suite. */
  char *c = shard_json(2, 1, "other", "00000000000000bb");
  const char *twice[2] = {a, a}, *one[1] = {a}, *mixed[2] = {a, c};
  run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, twice, 2, err), RPT_ETRACE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "both shard 1/2"));
  rpt_run_free(run);
  run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, one, 1, err), RPT_ETRACE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "shard 2/2 is missing"));
  rpt_run_free(run);
  run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, mixed, 2, err), RPT_ETRACE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "different suites"));
  rpt_run_free(run);
  /* Two shards that both claim place 0 of the suite. */
  char *d = shard_json(2, 1, "dup", "00000000000000aa");
  char *e = shard_json(1, 1, "dup", "00000000000000aa");
  const char *dup[2] = {e, d};
  run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, dup, 2, err), RPT_ETRACE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "given twice"));
  rpt_run_free(run);
  char *all[] = {a, b, c, d, e};
  for (int i = 0; i < 5; i++) {
    unlink(all[i]);
    free(all[i]);
  }
}

static void test_bad_inputs(void) {
  char err[RPT_ERRLEN];
  struct {
    const char *text, *want;
  } cases[] = {
      {"{\"fusebox_report\": 1,\n \"results\": [\n  {\"name\": nope}]}\n", ":3:12: not JSON"},
      {"", ":1:1: not JSON"},
      {"[1, 2]\n", "not a fusebox JSON report"},
      {"{\"fusebox_report\": 2, \"results\": []}\n", "not a fusebox JSON report"},
      {"{\"fusebox_report\": 1, \"results\": [{\"name\": \"x\"}]}\n", "not a scenario result"},
      /* A pass whose verdicts say fail: an edited report. */
      {"{\"fusebox_report\": 1, \"results\": [{\"name\": \"x\", \"status\": \"pass\",\n"
       " \"verdicts\": [{\"name\": \"attempts\", \"status\": \"fail\", \"evidence\": \"3\"}]}]}\n",
       "does not follow from its verdicts"},
      {"{\"fusebox_report\": 1, \"results\": [{\"name\": \"x\", \"status\": \"pass\",\n"
       " \"verdicts\": [{\"name\": \"attempts\", \"status\": \"maybe\"}]}]}\n",
       "verdicts[0]: a verdict needs a name and a status"},
      /* A shard's result without its place in the suite. */
      {"{\"fusebox_report\": 1, \"shard\": {\"k\": 1, \"n\": 1, \"total\": 1, \"set\": \"a\"},\n"
       " \"results\": [{\"name\": \"x\", \"status\": \"error\", \"error\": \"boom\", \"verdicts\": []}]}\n",
       "needs its \"index\""},
      {"{\"fusebox_report\": 1, \"shard\": {\"k\": 3, \"n\": 2, \"total\": 1, \"set\": \"a\"},\n"
       " \"results\": []}\n", "a bad \"shard\" block"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = rt_tmpfile(cases[i].text, strlen(cases[i].text));
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    rpt_run *run = rpt_run_new();
    const char *paths[1] = {p};
    err[0] = '\0';
    int rc = rpt_run_merge_json(run, paths, 1, err);
    CU_ASSERT_EQUAL(rc, RPT_ETRACE);
    if (strstr(err, cases[i].want) == NULL)
      fprintf(stderr, "\ncase %zu: want \"%s\" in \"%s\"\n", i, cases[i].want, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, p)); /* names the file */
    rpt_run_free(run);
    unlink(p);
    free(p);
  }
  rpt_run *run = rpt_run_new();
  const char *missing[1] = {"/nonexistent/report.json"};
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, missing, 1, err), RPT_EIO);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/report.json"));
  CU_ASSERT_EQUAL(rpt_run_merge_json(run, missing, 0, err), RPT_EINVAL);
  rpt_run_free(run);
}

#define ADD(s, name, fn) \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_report_merge(void) {
  CU_pSuite s = CU_add_suite("report_merge", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "a report read back writes the same bytes", test_round_trip);
  ADD(s, "shards in the suite's order; refusals", test_shards_in_suite_order);
  ADD(s, "bad inputs name the file and the line", test_bad_inputs);
  return 0;
}
