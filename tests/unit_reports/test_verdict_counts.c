/*
 * test_verdict_counts.c - `attempts`, `max_requests`, `no_retry_after` and
 * `herd`: each a pass case and a fail case on hand-written traces
 * (tests/data/traces/{attempts,max_requests,nra,herd}_*.jsonl), a pair at
 * every numeric boundary (*_boundary_*: at the limit passes, one past it
 * fails), plus edge cases inline.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_attempts_data(void) { rt_check_prefix("attempts_"); }
static void test_max_requests_data(void) { rt_check_prefix("max_requests_"); }
static void test_nra_data(void) { rt_check_prefix("nra_"); }
static void test_herd_data(void) { rt_check_prefix("herd_"); }

#define SESSION "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"

/* A retry that started before the first attempt ended is concurrent (a
   hedge), not a retry after the 401. */
static void test_nra_concurrent_is_not_a_retry(void) {
  const char *tr = SESSION
      "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\",\"attempt\":1,\"method\":\"POST\"}\n"
      "{\"ev\":\"arrive\",\"t\":2,\"id\":2,\"key\":\"k\",\"attempt\":2,\"method\":\"POST\"}\n"
      "{\"ev\":\"end\",\"t\":3,\"id\":1,\"status\":401,\"how\":\"complete\"}\n"
      "{\"ev\":\"end\",\"t\":4,\"id\":2,\"status\":200,\"how\":\"complete\"}\n"
      "{\"ev\":\"done\",\"t\":5}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(tr, "{\"no_retry_after\":401}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "no_retry_after"), RPT_PASS);
  rpt_judgement_free(j);
}

/* An effect's ledger lookup that finds nothing (GET, 404) is an answer,
   not a permanent error: asking again later is no retry after a 404 (hunt
   found this false failure on the guard). A POST retried after a 404 still
   fails, and a GET 401 too. */
static void test_nra_lookup_404_is_an_answer(void) {
  const char *tr = SESSION
      "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\",\"attempt\":1,\"method\":\"GET\"}\n"
      "{\"ev\":\"end\",\"t\":2,\"id\":1,\"status\":404,\"how\":\"complete\"}\n"
      "{\"ev\":\"arrive\",\"t\":3,\"id\":2,\"key\":\"k\",\"attempt\":2,\"method\":\"GET\"}\n"
      "{\"ev\":\"end\",\"t\":4,\"id\":2,\"status\":404,\"how\":\"complete\"}\n"
      "{\"ev\":\"done\",\"t\":5}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(tr, "{\"no_retry_after\":[\"permanent\"]}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "no_retry_after"), RPT_NA);
  rpt_judgement_free(j);
  static const char *const cases[][2] = {{"POST", "404"}, {"GET", "401"}};
  for (int i = 0; i < 2; i++) {
    char t[1024];
    snprintf(t, sizeof t, SESSION
             "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\",\"attempt\":1,\"method\":\"%s\"}\n"
             "{\"ev\":\"end\",\"t\":2,\"id\":1,\"status\":%s,\"how\":\"complete\"}\n"
             "{\"ev\":\"arrive\",\"t\":3,\"id\":2,\"key\":\"k\",\"attempt\":2,\"method\":\"%s\"}\n"
             "{\"ev\":\"end\",\"t\":4,\"id\":2,\"status\":200,\"how\":\"complete\"}\n"
             "{\"ev\":\"done\",\"t\":5}\n", cases[i][0], cases[i][1], cases[i][0]);
    j = rt_judge_text(t, "{\"no_retry_after\":[\"permanent\"]}", NULL, &rc, err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(rt_status(j, "no_retry_after"), RPT_FAIL);
    rpt_judgement_free(j);
  }
}

/* A herd window of many equal timestamps: all of them count. */
static void test_herd_same_instant(void) {
  char tr[8192];
  size_t off = (size_t)snprintf(tr, sizeof tr, SESSION);
  for (int i = 1; i <= 20; i++)
    off += (size_t)snprintf(tr + off, sizeof tr - off,
                            "{\"ev\":\"arrive\",\"t\":100,\"id\":%d,\"key\":\"k%d\",\"attempt\":1}\n",
                            i, i);
  snprintf(tr + off, sizeof tr - off, "{\"ev\":\"done\",\"t\":200}\n");
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(tr, "{\"herd\":{\"window\":0.001,\"max\":19}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "herd"), RPT_FAIL);
  CU_ASSERT(rt_has(rt_evidence(j, "herd"), "peak 20 arrivals"));
  rpt_judgement_free(j);
  j = rt_judge_text(tr, "{\"herd\":{\"window\":0.001,\"max\":20}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rt_status(j, "herd"), RPT_PASS);
  rpt_judgement_free(j);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_attempts(void) {
  CU_pSuite s = CU_add_suite("verdict_attempts", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: attempts_*.jsonl", test_attempts_data);
  return 0;
}

int suite_verdict_max_requests(void) {
  CU_pSuite s = CU_add_suite("verdict_max_requests", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: max_requests_*.jsonl", test_max_requests_data);
  return 0;
}

int suite_verdict_no_retry_after(void) {
  CU_pSuite s = CU_add_suite("verdict_no_retry_after", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: nra_*.jsonl", test_nra_data);
  ADD(s, "a lookup's 404 is an answer, not a permanent error", test_nra_lookup_404_is_an_answer);
  ADD(s, "a concurrent attempt is not a retry", test_nra_concurrent_is_not_a_retry);
  return 0;
}

int suite_verdict_herd(void) {
  CU_pSuite s = CU_add_suite("verdict_herd", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: herd_*.jsonl", test_herd_data);
  ADD(s, "arrivals at the same instant", test_herd_same_instant);
  return 0;
}
