/*
 * test_verdict_client.c - `outcome`, `side_effects`, `answer`,
 * `no_stream_splice` (the same rule) and `cost`: pass, fail and n/a cases on
 * hand-written traces (tests/data/traces/{outcome,fx,answer,splice,cost}_*
 * .jsonl), and a final text longer than the trace's 4 KiB cap.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_outcome_data(void) { rt_check_prefix("outcome_"); }
static void test_fx_data(void) { rt_check_prefix("fx_"); }
static void test_splice_data(void) { rt_check_prefix("splice_"); }
static void test_answer_data(void) { rt_check_prefix("answer_"); }

/* The server's end.state wins over what the other fields say, and a word
   it has not told reports about is never complete. */
static void test_answer_state_wins(void) {
  static const char *const states[] = {"error_event", "no_end", "cut", "stalled", "unparsable",
                                       "no_response", "aborted", "incomplete", "error_status",
                                       "some_new_word", NULL};
  for (int i = 0; states[i]; i++) {
    char tr[1024], err[RPT_ERRLEN];
    snprintf(tr, sizeof tr,
             "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"
             "{\"ev\":\"arrive\",\"t\":0,\"id\":1,\"key\":\"k\",\"attempt\":1}\n"
             "{\"ev\":\"end\",\"t\":1,\"id\":1,\"step\":\"chat\",\"status\":200,"
             "\"how\":\"complete\",\"state\":\"%s\",\"text\":\"hello\"}\n"
             "{\"ev\":\"client\",\"t\":2,\"call\":0,\"outcome\":\"ok\",\"text\":\"hello\"}\n"
             "{\"ev\":\"done\",\"t\":3}\n",
             states[i]);
    int rc;
    rpt_judgement *j = rt_judge_text(tr, "{}", NULL, &rc, err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(rt_status(j, "answer"), RPT_FAIL);
    CU_ASSERT(rt_has(rt_evidence(j, "answer"), "no attempt completed"));
    rpt_judgement_free(j);
  }
}

/* Past the 4 KiB cap the client's text only has to start with what the
   server kept; a text shorter than the kept part is not the answer. */
static void test_answer_long_text(void) {
  static char tr[20000], sent[4097], full[6001];
  memset(sent, 'a', 4096);
  sent[4096] = '\0';
  const char *fmt = "{\"ev\":\"session\",\"t\":0,\"time_scale\":1}\n"
                    "{\"ev\":\"arrive\",\"t\":0,\"id\":1,\"key\":\"k\",\"attempt\":1}\n"
                    "{\"ev\":\"end\",\"t\":1,\"id\":1,\"status\":200,\"step\":\"chat\","
                    "\"text\":\"%s\"}\n"
                    "{\"ev\":\"client\",\"t\":2,\"call\":0,\"outcome\":\"ok\",\"text\":\"%s\"}\n"
                    "{\"ev\":\"done\",\"t\":3}\n";
  const int lens[2] = {6000, 3000};
  const int want[2] = {RPT_PASS, RPT_FAIL};
  for (int i = 0; i < 2; i++) {
    memset(full, 'a', (size_t)lens[i]);
    full[lens[i]] = '\0';
    snprintf(tr, sizeof tr, fmt, sent, full);
    char err[RPT_ERRLEN];
    int rc;
    rpt_judgement *j = rt_judge_text(tr, "{}", NULL, &rc, err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(rt_status(j, "answer"), want[i]);
    rpt_judgement_free(j);
  }
}
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
  CU_ASSERT_EQUAL(rt_status(j, "answer"), RPT_PASS);
  rpt_judgement_free(j);
}

/* `false` turns a verdict off: nothing is judged, nothing is listed but
   the three verdicts every judgement carries (answer, served, exercised). */
static void test_false_is_off(void) {
  const char *tr = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(
      tr, "{\"side_effects\":false,\"no_stream_splice\":false,\"retry_after_honoured\":false}", NULL,
      &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rpt_judgement_count(j), 3);
  CU_ASSERT_PTR_NULL(rpt_judgement_find(j, "side_effects"));
  CU_ASSERT_PTR_NULL(rpt_judgement_find(j, "no_stream_splice"));
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

int suite_verdict_answer(void) {
  CU_pSuite s = CU_add_suite("verdict_answer", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: answer_*.jsonl", test_answer_data);
  ADD(s, "end.state wins over the other fields", test_answer_state_wins);
  ADD(s, "a text over the 4 KiB cap", test_answer_long_text);
  return 0;
}

int suite_verdict_cost(void) {
  CU_pSuite s = CU_add_suite("verdict_cost", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: cost_*.jsonl", test_cost_data);
  return 0;
}
