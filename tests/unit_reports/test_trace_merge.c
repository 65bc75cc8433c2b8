/*
 * test_trace_merge.c - the traces of one fleet merged into one timeline:
 * two servers each saw one attempt of a request (judged alone each fails
 * `attempts = 2`, merged it passes), lone traces stay apart, a cut last
 * line is skipped, a server without `done` leaves the merge incomplete, and
 * a lost shared state makes the run invalid.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

#define SESSION(inst, sess) \
  "{\"ev\":\"session\",\"t\":0,\"scenario\":\"fleet\",\"expect\":{\"attempts\":2}," \
  "\"fleet\":{\"session\":\"" sess "\",\"instance\":\"" inst "\",\"state\":\"redis\"}}\n"

static const char trace_a[] =
    SESSION("a", "s/1")
    "{\"ev\":\"arrive\",\"t\":10,\"id\":1,\"key\":\"k1\",\"attempt\":1,\"method\":\"POST\"}\n"
    "{\"ev\":\"end\",\"t\":11,\"id\":1,\"status\":503,\"how\":\"complete\"}\n"
    "{\"ev\":\"arrive\",\"t\":30,\"id\":3,\"key\":\"k2\",\"attempt\":1,\"method\":\"POST\"}\n"
    "{\"ev\":\"end\",\"t\":31,\"id\":3,\"status\":200,\"how\":\"complete\"}\n"
    "{\"ev\":\"done\",\"t\":50,\"arrivals\":2}\n"
    "{\"ev\":\"arr"; /* cut by a kill after done: skipped */

static const char trace_b[] =
    SESSION("b", "s/1")
    "{\"ev\":\"arrive\",\"t\":20,\"id\":2,\"key\":\"k1\",\"attempt\":2,\"method\":\"POST\"}\n"
    "{\"ev\":\"end\",\"t\":21,\"id\":2,\"status\":200,\"how\":\"complete\"}\n"
    "{\"ev\":\"arrive\",\"t\":40,\"id\":4,\"key\":\"k2\",\"attempt\":2,\"method\":\"POST\"}\n"
    "{\"ev\":\"end\",\"t\":41,\"id\":4,\"status\":200,\"how\":\"complete\"}\n"
    "{\"ev\":\"done\",\"t\":60,\"arrivals\":2}\n";

static const char lone[] =
    "{\"ev\":\"session\",\"t\":0,\"scenario\":\"lone\",\"expect\":{\"attempts\":1}}\n"
    "{\"ev\":\"done\",\"t\":1,\"arrivals\":0}\n";

static int judge_text(const char *text, size_t len) {
  rpt_trace *tr = NULL;
  char err[RPT_ERRLEN];
  int st = -2;
  if (rpt_trace_read_mem(text, len, "m", &tr, err) != RPT_OK) return -3;
  rpt_judgement *j = NULL;
  if (rpt_judge(tr, rpt_trace_expect_json(tr), NULL, NULL, &j, err) == RPT_OK) st = rt_status(j, "attempts");
  rpt_judgement_free(j);
  rpt_trace_free(tr);
  return st;
}

static void test_merge_judged_as_one(void) {
  char *a = rt_tmpfile(trace_a, sizeof trace_a - 1);
  char *b = rt_tmpfile(trace_b, sizeof trace_b - 1);
  char *l = rt_tmpfile(lone, sizeof lone - 1);
  const char *paths[] = {a, l, b};
  rpt_group *g = NULL;
  int n = 0;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_traces_group(paths, 3, &g, &n, err), RPT_OK);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g[0].text); /* the fleet, where its first trace was */
  CU_ASSERT_EQUAL(g[0].ntraces, 2);
  CU_ASSERT_PTR_NULL(g[0].invalid);
  CU_ASSERT(rt_has(g[0].name, " + "));
  CU_ASSERT_PTR_NULL(g[1].text); /* the lone trace is read as always */
  CU_ASSERT_STRING_EQUAL(g[1].path, l);
  /* One timeline: ids in time order, each tagged with its server. */
  const char *t = g[0].text;
  const char *p1 = strstr(t, "\"id\":1"), *p2 = strstr(t, "\"id\":2"),
             *p3 = strstr(t, "\"id\":3"), *p4 = strstr(t, "\"id\":4");
  CU_ASSERT(p1 && p2 && p3 && p4 && p1 < p2 && p2 < p3 && p3 < p4);
  CU_ASSERT(rt_has(t, "\"instance\":\"b\""));
  CU_ASSERT(rt_has(t, "\"instances\":[\"a\",\"b\"]"));
  CU_ASSERT(rt_has(t, "\"arrivals\":4"));
  CU_ASSERT(!rt_has(t, "\"ev\":\"arr\n"));
  /* Merged: attempts = 2 holds. Each trace alone: it does not. */
  CU_ASSERT_EQUAL(judge_text(g[0].text, g[0].len), RPT_PASS);
  CU_ASSERT_EQUAL(judge_text(trace_b, sizeof trace_b - 1), RPT_FAIL);
  rpt_trace *tr = NULL;
  CU_ASSERT_EQUAL(rpt_trace_read_mem(g[0].text, g[0].len, "m", &tr, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 1);
  rpt_trace_free(tr);
  rpt_groups_free(g, n);
  rpt_groups_free(NULL, 0);
  unlink(a), unlink(b), unlink(l);
  free(a), free(b), free(l);
}

static void test_incomplete_and_other_sessions(void) {
  /* b without its done line; a third trace of another session. */
  size_t blen = strstr(trace_b, "{\"ev\":\"done\"") - trace_b;
  char other[sizeof trace_b];
  snprintf(other, sizeof other, "%s", trace_b);
  memcpy(strstr(other, "s/1"), "s/2", 3);
  char *a = rt_tmpfile(trace_a, sizeof trace_a - 1);
  char *b = rt_tmpfile(trace_b, blen);
  char *c = rt_tmpfile(other, strlen(other));
  const char *paths[] = {a, b, c};
  rpt_group *g = NULL;
  int n = 0;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_traces_group(paths, 3, &g, &n, err), RPT_OK);
  CU_ASSERT_EQUAL_FATAL(n, 2);
  CU_ASSERT_EQUAL(g[0].ntraces, 2);
  CU_ASSERT_EQUAL(g[1].ntraces, 1);
  CU_ASSERT_PTR_NOT_NULL(g[1].text); /* a fleet of one is still merged */
  CU_ASSERT(!rt_has(g[0].text, "\"ev\":\"done\""));
  rpt_trace *tr = NULL;
  CU_ASSERT_EQUAL(rpt_trace_read_mem(g[0].text, g[0].len, "m", &tr, err), RPT_OK);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 0);
  rpt_trace_free(tr);
  rpt_groups_free(g, n);
  unlink(a), unlink(b), unlink(c);
  free(a), free(b), free(c);
}

static void test_state_lost_is_invalid(void) {
  char bad[sizeof trace_b + 200];
  size_t cut = strstr(trace_b, "{\"ev\":\"arrive\",\"t\":40") - trace_b;
  snprintf(bad, sizeof bad, "%.*s%s%s", (int)cut, trace_b,
           "{\"ev\":\"arrive\",\"t\":40,\"id\":-1,\"key\":\"k2\",\"attempt\":0,\"method\":\"POST\"}\n"
           "{\"ev\":\"error\",\"t\":40,\"id\":-1,\"kind\":\"state\",\"message\":\"Redis down\"}\n",
           "{\"ev\":\"done\",\"t\":60,\"arrivals\":2}\n");
  char *a = rt_tmpfile(trace_a, sizeof trace_a - 1);
  char *b = rt_tmpfile(bad, strlen(bad));
  const char *paths[] = {a, b};
  rpt_group *g = NULL;
  int n = 0;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(rpt_traces_group(paths, 2, &g, &n, err), RPT_OK);
  CU_ASSERT_EQUAL_FATAL(n, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g[0].invalid);
  CU_ASSERT(rt_has(g[0].invalid, "invalid run"));
  CU_ASSERT(rt_has(g[0].invalid, "b: Redis down"));
  rpt_groups_free(g, n);
  /* The same trace without the state error is valid. */
  const char *paths2[] = {a};
  CU_ASSERT_EQUAL(rpt_traces_group(paths2, 1, &g, &n, err), RPT_OK);
  CU_ASSERT_PTR_NULL(g[0].invalid);
  rpt_groups_free(g, n);
  unlink(a), unlink(b);
  free(a), free(b);
}

int suite_trace_merge(void) {
  CU_pSuite s = CU_add_suite("trace_merge", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "a fleet's traces merged and judged as one", test_merge_judged_as_one);
  CU_add_test(s, "incomplete servers, other sessions", test_incomplete_and_other_sessions);
  CU_add_test(s, "a lost shared state makes the run invalid", test_state_lost_is_invalid);
  return CU_get_error();
}
