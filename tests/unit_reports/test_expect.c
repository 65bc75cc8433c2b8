/*
 * test_expect.c - the expectations engine: unknown keys and bad values are
 * errors (never a silent pass), `rpt_expect_check` without a trace, the
 * fixed verdict order, tables from the trace's session line, and the
 * implicit `scenario_ran` verdict.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpt_test.h"

static void test_expect_data(void) {
  rt_check_prefix("expect_");
  rt_check_prefix("scenario_");
}

/* Each bad table and the message it must give. */
static void test_bad_values(void) {
  static const struct {
    const char *expect, *client, *want;
  } cases[] = {
      {"{\"atempts\":2}", NULL, "expect.atempts: unknown expectation"},
      {"{\"attempts\":-1}", NULL, "expect.attempts: expected a whole number"},
      {"{\"attempts\":1.5}", NULL, "expect.attempts"},
      {"{\"attempts\":\"two\"}", NULL, "expect.attempts"},
      {"{\"attempts\":{\"min\":3,\"max\":1}}", NULL, "min 3 is over max 1"},
      {"{\"attempts\":{\"mn\":1}}", NULL, "expect.attempts.mn: unknown key"},
      {"{\"attempts\":{}}", NULL, "give min, max or both"},
      {"{\"max_requests\":true}", NULL, "expect.max_requests"},
      {"{\"no_retry_after\":[]}", NULL, "empty list"},
      {"{\"no_retry_after\":[99]}", NULL, "100..599"},
      {"{\"no_retry_after\":[{}]}", NULL, "expect.no_retry_after"},
      {"{\"retry_after_honoured\":1}", NULL, "expected true or false"},
      {"{\"backoff\":true}", NULL, "expect.backoff: expected {min_gap="},
      {"{\"backoff\":{}}", NULL, "nothing to check"},
      {"{\"backoff\":{\"min_gap\":-1}}", NULL, "expect.backoff.min_gap: must be a number >= 0"},
      {"{\"backoff\":{\"min_gap\":2,\"max_gap\":1}}", NULL, "min_gap is over max_gap"},
      {"{\"backoff\":{\"growth\":\"yes\"}}", NULL, "expected true or false"},
      {"{\"backoff\":{\"base\":1}}", NULL, "expect.backoff.base: unknown key"},
      {"{\"within_deadline\":\"soon\"}", NULL, "expected true or false"},
      {"{\"within_deadline\":-3}", NULL, "seconds > 0"},
      {"{\"within_deadline\":true}", "{\"attempts\":3}", "needs a deadline in the client table"},
      {"{\"within_deadline\":true}", "{\"deadline\":\"8s\"}", "client.deadline must be a number"},
      {"{\"herd\":{\"window\":1}}", NULL, "max (a whole number >= 0) is required"},
      {"{\"herd\":{\"max\":1}}", NULL, "window (seconds > 0) is required"},
      {"{\"outcome\":\"fine\"}", NULL, "unknown outcome 'fine'"},
      {"{\"outcome\":[]}", NULL, "expect.outcome"},
      {"{\"side_effects\":{\"at_least_once\":true}}", NULL, "expect.side_effects.at_least_once: unknown key"},
      {"{\"no_stream_splice\":\"yes\"}", NULL, "expected true or false"},
      {"{\"cost\":{}}", NULL, "give max_ratio, max_billed or both"},
      {"{\"cost\":{\"max_ratio\":\"2\"}}", NULL, "expect.cost.max_ratio: must be a number"},
      {"{\"attempts\":1,\"attempts\":2}", NULL, "expect.attempts: given twice"},
      {"[1]", NULL, "expect table must be a JSON object"},
      {"{not json", NULL, "expect table is not valid JSON"},
      {"{}", "[3]", "client table must be a JSON object"},
  };
  const char *tr = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[RPT_ERRLEN] = "";
    int rc;
    rpt_judgement *j = rt_judge_text(tr, cases[i].expect, cases[i].client, &rc, err);
    CU_ASSERT_PTR_NULL(j);
    CU_ASSERT_EQUAL(rc, RPT_EEXPECT);
    if (!rt_has(err, cases[i].want)) {
      fprintf(stderr, "\n  judge %s: wanted \"%s\", got \"%s\"\n", cases[i].expect, cases[i].want, err);
      CU_FAIL("judge message");
    }
    rpt_judgement_free(j);
    /* The same without a trace, as `fusebox check` does. */
    err[0] = '\0';
    rc = rpt_expect_check(cases[i].expect, cases[i].client, err);
    CU_ASSERT_EQUAL(rc, RPT_EEXPECT);
    if (!rt_has(err, cases[i].want)) {
      fprintf(stderr, "\n  check %s: wanted \"%s\", got \"%s\"\n", cases[i].expect, cases[i].want, err);
      CU_FAIL("check message");
    }
  }
}

static void test_check_good(void) {
  char err[RPT_ERRLEN];
  const char *all =
      "{\"attempts\":{\"min\":1,\"max\":3},\"max_requests\":9,\"no_retry_after\":[401,\"permanent\"],"
      "\"retry_after_honoured\":true,\"backoff\":{\"min_gap\":0.5,\"growth\":true,\"jitter\":true},"
      "\"within_deadline\":true,\"herd\":{\"window\":1,\"max\":10},\"outcome\":\"ok\","
      "\"side_effects\":true,\"no_stream_splice\":true,\"cost\":{\"max_ratio\":2}}";
  CU_ASSERT_EQUAL(rpt_expect_check(all, "{\"deadline\":8}", err), 0);
  /* Without a client table a deadline cannot be checked yet: not an error. */
  CU_ASSERT_EQUAL(rpt_expect_check(all, NULL, err), 0);
  CU_ASSERT_EQUAL(rpt_expect_check(NULL, NULL, err), 0);
  /* An empty Lua table may come as [] */
  CU_ASSERT_EQUAL(rpt_expect_check("[]", NULL, err), 0);
}

/* Verdicts come in the engine's order, not the table's. */
static void test_fixed_order(void) {
  const char *tr = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *a =
      rt_judge_text(tr, "{\"outcome\":\"ok\",\"max_requests\":1,\"attempts\":0}", NULL, &rc, err);
  rpt_judgement *b =
      rt_judge_text(tr, "{\"attempts\":0,\"outcome\":\"ok\",\"max_requests\":1}", NULL, &rc, err);
  /* three asked for, then answer, served and exercised, which every
     judgement carries */
  CU_ASSERT_EQUAL_FATAL(rpt_judgement_count(a), 6);
  CU_ASSERT_EQUAL_FATAL(rpt_judgement_count(b), 6);
  for (int i = 0; i < 6; i++)
    CU_ASSERT_STRING_EQUAL(rpt_judgement_verdict(a, i)->name, rpt_judgement_verdict(b, i)->name);
  CU_ASSERT_STRING_EQUAL(rpt_judgement_verdict(a, 0)->name, "attempts");
  CU_ASSERT_STRING_EQUAL(rpt_judgement_verdict(a, 3)->name, "answer");
  CU_ASSERT_STRING_EQUAL(rpt_judgement_verdict(a, 4)->name, "served");
  CU_ASSERT_STRING_EQUAL(rpt_judgement_verdict(a, 5)->name, "exercised");
  CU_ASSERT_PTR_NULL(rpt_judgement_verdict(a, 6));
  CU_ASSERT_PTR_NULL(rpt_judgement_find(a, "nope"));
  rpt_judgement_free(a);
  rpt_judgement_free(b);
}

/* No expect given and none in the trace: an error, not zero verdicts. */
static void test_no_expect(void) {
  const char *t = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"done\",\"t\":1}\n";
  char *p = rt_tmpfile(t, strlen(t));
  rpt_judgement *j = NULL;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(rpt_judge_trace_file(p, NULL, NULL, NULL, &j, err), RPT_EEXPECT);
  CU_ASSERT(rt_has(err, "no expect table"));
  /* Given explicitly, it wins over the trace's. */
  CU_ASSERT_EQUAL(rpt_judge_trace_file(p, "{\"attempts\":0}", NULL, NULL, &j, err), 0);
  CU_ASSERT_EQUAL(rt_status(j, "attempts"), RPT_PASS);
  rpt_judgement_free(j);
  remove(p);
  free(p);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_expect(void) {
  CU_pSuite s = CU_add_suite("expect", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "data: expect_*.jsonl, scenario_*.jsonl", test_expect_data);
  ADD(s, "bad values are errors", test_bad_values);
  ADD(s, "a good table checks", test_check_good);
  ADD(s, "fixed verdict order", test_fixed_order);
  ADD(s, "no expect table", test_no_expect);
  return 0;
}
