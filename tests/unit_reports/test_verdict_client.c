/*
 * test_verdict_client.c - `outcome`, `side_effects`, `no_stream_splice` and
 * `cost`: pass and fail cases on hand-written traces
 * (tests/data/traces/{outcome,fx,splice,cost}_*.jsonl), and a final text
 * longer than the trace's 4 KiB cap.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_outcome_data(void) { rt_check_prefix("outcome_"); }
static void test_fx_data(void) { rt_check_prefix("fx_"); }
static void test_splice_data(void) { rt_check_prefix("splice_"); }
static void test_cost_data(void) { rt_check_prefix("cost_"); }

/* The server keeps 4 KiB of an answer: a longer final text matches by prefix. */
static void test_splice_long_text(void) {
  static char tr[20000], sent[4097], full[6001];
  memset(sent, 'a', 4096);
  sent[4096] = '\0';
  memset(full, 'a', 6000);
  full[6000] = '\0';
  snprintf(tr, sizeof tr,
           "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"
           "{\"ev\":\"arrive\",\"t\":0,\"id\":1,\"key\":\"k\",\"attempt\":1,\"stream\":true}\n"
           "{\"ev\":\"end\",\"t\":1,\"id\":1,\"status\":200,\"how\":\"complete\",\"text\":\"%s\"}\n"
           "{\"ev\":\"client\",\"t\":2,\"call\":0,\"outcome\":\"ok\",\"text\":\"%s\"}\n"
           "{\"ev\":\"done\",\"t\":3}\n",
           sent, full);
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(tr, "{\"no_stream_splice\":true}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "no_stream_splice"), RPT_PASS);
  rpt_judgement_free(j);
}

/* `false` turns a verdict off: nothing is judged, nothing is listed but
   the two verdicts every judgement carries (served, exercised). */
static void test_false_is_off(void) {
  const char *tr = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(
      tr, "{\"side_effects\":false,\"no_stream_splice\":false,\"retry_after_honoured\":false}", NULL,
      &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rpt_judgement_count(j), 2);
  CU_ASSERT_PTR_NULL(rpt_judgement_find(j, "side_effects"));
  rpt_judgement_free(j);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_verdict_outcome(void) {
  CU_pSuite s = CU_add_suite("verdict_outcome", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: outcome_*.jsonl", test_outcome_data);
  return 0;
}

int suite_verdict_side_effects(void) {
  CU_pSuite s = CU_add_suite("verdict_side_effects", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: fx_*.jsonl", test_fx_data);
  ADD(s, "false turns verdicts off", test_false_is_off);
  return 0;
}

int suite_verdict_stream_splice(void) {
  CU_pSuite s = CU_add_suite("verdict_stream_splice", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: splice_*.jsonl", test_splice_data);
  ADD(s, "a text over the 4 KiB cap", test_splice_long_text);
  return 0;
}

int suite_verdict_cost(void) {
  CU_pSuite s = CU_add_suite("verdict_cost", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: cost_*.jsonl", test_cost_data);
  return 0;
}
