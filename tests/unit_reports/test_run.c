/*
 * test_run.c - the run API: adding judged traces (by path or parsed),
 * tables from the trace or given, errors that add nothing, error entries,
 * extra verdicts and the totals.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_sample_run_totals(void) {
  rpt_run *run = rt_sample_run();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  rpt_summary s;
  rpt_run_summary(run, &s);
  CU_ASSERT_EQUAL(s.scenarios, 4);
  CU_ASSERT_EQUAL(s.passed, 1);
  CU_ASSERT_EQUAL(s.failed, 2); /* nra_fail_401, hostile (outcome error) */
  CU_ASSERT_EQUAL(s.errors, 1);
  CU_ASSERT_EQUAL(s.verdicts, 3 + 1 + 2 + 3 * 3); /* + answer, served, exercised each */
  CU_ASSERT_EQUAL(s.verdicts_failed, 3); /* no_retry_after, hostile attempts and outcome */
  CU_ASSERT_EQUAL(s.incomplete, 0);
  CU_ASSERT_EQUAL(rpt_run_failed(run), 4);
  rpt_run_free(run);
}

static void test_add_errors(void) {
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN];
  rpt_input in = {.trace_path = "/nonexistent.jsonl"};
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), RPT_EIO);
  in = (rpt_input){0};
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), RPT_EINVAL);
  /* A parsed trace with a bad expect: the run takes (and frees) the trace. */
  const char *t = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  CU_ASSERT_EQUAL(rpt_trace_read_mem(t, strlen(t), "x", &in.trace, err), 0);
  in.expect_json = "{\"bogus\":1}";
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), RPT_EEXPECT);
  rpt_summary s;
  rpt_run_summary(run, &s);
  CU_ASSERT_EQUAL(s.scenarios, 0);
  CU_ASSERT_EQUAL(rpt_run_failed(run), 0);
  CU_ASSERT_EQUAL(rpt_run_add_verdict(run, "x", RPT_PASS, "y"), RPT_EINVAL);
  rpt_run_free(run);
  rpt_run_free(NULL);
}

/* exec adds its own verdict (the command's exit status) to the scenario. */
static void test_add_verdict_and_names(void) {
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN], path[4096];
  rpt_input in = {.trace_path = rt_data_path("attempts_pass_exact.jsonl", path, sizeof path),
                  .name = "my name", .expect_json = "{\"max_requests\":1}"};
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), 0);
  CU_ASSERT_EQUAL(rpt_run_failed(run), 1); /* 2 arrivals > 1: the given table wins */
  CU_ASSERT_EQUAL(rpt_run_add_verdict(run, "command", RPT_FAIL, "CMD exited 3"), 0);
  CU_ASSERT_EQUAL(rpt_run_failed(run), 2);
  rpt_summary s;
  rpt_run_summary(run, &s);
  CU_ASSERT_EQUAL(s.verdicts, 5); /* max_requests, answer, served, exercised, command */
  CU_ASSERT_DOUBLE_EQUAL(s.time_ms, 2030, 1e-9);
  rpt_run_free(run);
}

/* A scenario the client declared it cannot play: n/a, neither pass nor fail,
   shown in every writer without a trace. */
static void test_add_skipped(void) {
  rpt_run *run = rpt_run_new();
  CU_ASSERT_EQUAL(rpt_run_add_skipped(run, NULL, "s/stream.lua", "curl", "capability",
                                      "skipped: the client declared --without stream"), 0);
  CU_ASSERT_EQUAL(rpt_run_add_skipped(run, NULL, "x.lua", NULL, NULL, "r"), RPT_EINVAL);
  rpt_summary s;
  rpt_run_summary(run, &s);
  CU_ASSERT_EQUAL(s.scenarios, 1);
  CU_ASSERT_EQUAL(s.passed, 0);
  CU_ASSERT_EQUAL(s.failed, 0);
  CU_ASSERT_EQUAL(s.not_applicable, 1);
  CU_ASSERT_EQUAL(rpt_run_failed(run), 0);
  char buf[512];
  CU_ASSERT_PTR_NULL(rpt_run_headline(run, buf, sizeof buf)); /* nothing was played */
  FILE *f = tmpfile();
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(rpt_run_write_term(run, f, 0), 0);
  rewind(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--without stream"));
  CU_ASSERT_PTR_NULL(strstr(buf, "PASS"));
  rpt_run_free(run);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_run(void) {
  CU_pSuite s = CU_add_suite("run", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "totals of a sample run", test_sample_run_totals);
  ADD(s, "a failed add appends nothing", test_add_errors);
  ADD(s, "extra verdicts; given tables win", test_add_verdict_and_names);
  ADD(s, "a skipped scenario is n/a", test_add_skipped);
  return 0;
}
