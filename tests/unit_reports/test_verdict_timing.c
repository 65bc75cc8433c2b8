/*
 * test_verdict_timing.c - `retry_after_honoured`, `backoff` and
 * `within_deadline`: pass and fail cases on hand-written traces
 * (tests/data/traces/{ra,backoff,deadline}_*.jsonl), with a pair at every
 * numeric boundary (at the threshold passes, 1 ms past it fails: growth,
 * shrink, min_gap, max_gap, jitter, Retry-After, deadline, scaled and not),
 * time scale and tolerance options, and jitter that is only noise.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_ra_data(void) { rt_check_prefix("ra_"); }
static void test_backoff_data(void) { rt_check_prefix("backoff_"); }
static void test_deadline_data(void) { rt_check_prefix("deadline_"); }
/* An external command's time counts from its first request (startup_*). */
static void test_startup_data(void) { rt_check_prefix("startup_"); }

static rpt_judgement *judge_data(const char *name, const rpt_opts *o) {
  char path[4096], err[RPT_ERRLEN];
  rpt_judgement *j = NULL;
  rt_data_path(name, path, sizeof path);
  int rc = rpt_judge_trace_file(path, NULL, NULL, o, &j, err);
  CU_ASSERT_EQUAL(rc, 0);
  return j;
}

/* 196 ms for 200 ms passes on the default tolerance, fails without one. */
static void test_ra_tolerance_option(void) {
  rpt_judgement *j = judge_data("ra_scaled_pass.jsonl", NULL);
  CU_ASSERT_EQUAL(rt_status(j, "retry_after_honoured"), RPT_PASS);
  rpt_judgement_free(j);
  rpt_opts tight = {.tol_ms = 1, .slack_ms = -1};
  j = judge_data("ra_scaled_pass.jsonl", &tight);
  CU_ASSERT_EQUAL(rt_status(j, "retry_after_honoured"), RPT_FAIL);
  CU_ASSERT(rt_has(rt_evidence(j, "retry_after_honoured"), "tolerance 0.1 ms"));
  rpt_judgement_free(j);
}

/* Judged as if the run were in real time, the same gap is far too short. */
static void test_ra_time_scale_option(void) {
  rpt_opts real = {.time_scale = 1};
  rpt_judgement *j = judge_data("ra_scaled_pass.jsonl", &real);
  CU_ASSERT_EQUAL(rt_status(j, "retry_after_honoured"), RPT_FAIL);
  rpt_judgement_free(j);
}

/*
 * Eight lock-step clients with one late wake-up: max - min is large, but
 * the interquartile range is not, so this is no jitter; with real spread
 * it is.
 */
static void backoff_herd(char *out, size_t n, const int *gaps) {
  size_t off = (size_t)snprintf(out, n, "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n");
  for (int i = 0; i < 8; i++) {
    off += (size_t)snprintf(out + off, n - off,
                            "{\"ev\":\"arrive\",\"t\":0,\"id\":%d,\"key\":\"c%d\",\"attempt\":1}\n"
                            "{\"ev\":\"end\",\"t\":10,\"id\":%d,\"status\":503}\n"
                            "{\"ev\":\"arrive\",\"t\":%d,\"id\":%d,\"key\":\"c%d\",\"attempt\":2}\n"
                            "{\"ev\":\"end\",\"t\":%d,\"id\":%d,\"status\":200}\n",
                            2 * i + 1, i, 2 * i + 1, 10 + gaps[i], 2 * i + 2, i, 20 + gaps[i],
                            2 * i + 2);
  }
  snprintf(out + off, n - off, "{\"ev\":\"done\",\"t\":5000}\n");
}

static void test_backoff_jitter_noise(void) {
  static const int lockstep[8] = {1000, 1001, 1000, 1002, 1001, 1000, 1001, 1090};
  static const int spread[8] = {760, 1000, 840, 930, 1010, 800, 880, 970};
  char tr[8192], err[RPT_ERRLEN];
  int rc;
  backoff_herd(tr, sizeof tr, lockstep);
  rpt_judgement *j = rt_judge_text(tr, "{\"backoff\":{\"jitter\":true}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "backoff"), RPT_FAIL);
  CU_ASSERT(rt_has(rt_evidence(j, "backoff"), "no jitter at retry 1 across 8"));
  rpt_judgement_free(j);
  backoff_herd(tr, sizeof tr, spread);
  j = rt_judge_text(tr, "{\"backoff\":{\"jitter\":true}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rt_status(j, "backoff"), RPT_PASS);
  rpt_judgement_free(j);
}

/* A Retry-After gap is exempt from max_gap and from growth. */
static void test_backoff_ra_gaps_exempt(void) {
  const char *tr =
      "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"
      "{\"ev\":\"arrive\",\"t\":0,\"id\":1,\"key\":\"k\",\"attempt\":1}\n"
      "{\"ev\":\"end\",\"t\":10,\"id\":1,\"status\":429,\"retry_after_ms\":5000}\n"
      "{\"ev\":\"arrive\",\"t\":5020,\"id\":2,\"key\":\"k\",\"attempt\":2}\n"
      "{\"ev\":\"end\",\"t\":5030,\"id\":2,\"status\":503}\n"
      "{\"ev\":\"arrive\",\"t\":5530,\"id\":3,\"key\":\"k\",\"attempt\":3}\n"
      "{\"ev\":\"end\",\"t\":5540,\"id\":3,\"status\":503}\n"
      "{\"ev\":\"arrive\",\"t\":6540,\"id\":4,\"key\":\"k\",\"attempt\":4}\n"
      "{\"ev\":\"end\",\"t\":6550,\"id\":4,\"status\":200}\n"
      "{\"ev\":\"done\",\"t\":7000}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j =
      rt_judge_text(tr, "{\"backoff\":{\"min_gap\":0.5,\"max_gap\":2,\"growth\":true}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "backoff"), RPT_PASS);
  rpt_judgement_free(j);
}

/* A switch to another provider is a fallback, not a retry gap. */
static void test_backoff_fallback_not_a_gap(void) {
  const char *tr =
      "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"
      "{\"ev\":\"arrive\",\"t\":0,\"id\":1,\"key\":\"idem:x\",\"attempt\":1,\"provider\":\"primary\"}\n"
      "{\"ev\":\"end\",\"t\":10,\"id\":1,\"status\":503}\n"
      "{\"ev\":\"arrive\",\"t\":11,\"id\":2,\"key\":\"idem:x\",\"attempt\":2,\"provider\":\"backup\"}\n"
      "{\"ev\":\"end\",\"t\":20,\"id\":2,\"status\":200}\n"
      "{\"ev\":\"done\",\"t\":30}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(tr, "{\"backoff\":{\"min_gap\":0.5}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rt_status(j, "backoff"), RPT_NA);
  CU_ASSERT(rt_has(rt_evidence(j, "backoff"), "no retry in the trace"));
  rpt_judgement_free(j);
}

/* within_deadline = <seconds> overrides the client table. */
static void test_deadline_number_overrides(void) {
  char path[4096], err[RPT_ERRLEN];
  rpt_judgement *j = NULL;
  rt_data_path("deadline_fail_server.jsonl", path, sizeof path);
  CU_ASSERT_EQUAL(rpt_judge_trace_file(path, "{\"within_deadline\":10}", NULL, NULL, &j, err), 0);
  CU_ASSERT_EQUAL(rt_status(j, "within_deadline"), RPT_PASS);
  rpt_judgement_free(j);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_retry_after(void) {
  CU_pSuite s = CU_add_suite("verdict_retry_after", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: ra_*.jsonl", test_ra_data);
  ADD(s, "tolerance option", test_ra_tolerance_option);
  ADD(s, "time scale option", test_ra_time_scale_option);
  return 0;
}

int suite_verdict_backoff(void) {
  CU_pSuite s = CU_add_suite("verdict_backoff", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: backoff_*.jsonl", test_backoff_data);
  ADD(s, "jitter vs scheduling noise", test_backoff_jitter_noise);
  ADD(s, "Retry-After gaps exempt from max_gap and growth", test_backoff_ra_gaps_exempt);
  ADD(s, "a fallback is not a retry gap", test_backoff_fallback_not_a_gap);
  return 0;
}

int suite_verdict_deadline(void) {
  CU_pSuite s = CU_add_suite("verdict_deadline", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: deadline_*.jsonl", test_deadline_data);
  ADD(s, "data: startup_*.jsonl (time from the first request)", test_startup_data);
  ADD(s, "a number of seconds overrides the client table", test_deadline_number_overrides);
  return 0;
}
