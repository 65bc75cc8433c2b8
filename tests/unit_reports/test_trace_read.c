/*
 * test_trace_read.c - the trace reader: a good trace, a cut last line (at
 * every byte), no `done`, blank lines and unknown events, and what is not a
 * trace: garbage, an empty file, a first line that is not `session`, a line
 * over 1 MiB, a bad line in the middle, a NUL byte, too many events.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

static const char good[] =
    "{\"ev\":\"session\",\"t\":0,\"version\":1,\"scenario\":\"s1\",\"file\":\"scenarios/a/b.lua\","
    "\"time_scale\":0.5,\"expect\":{\"attempts\":2},\"client\":{\"deadline\":8},\"future\":[1,2]}\n"
    "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k1\",\"attempt\":1,\"method\":\"POST\"}\n"
    "\n"
    "   \n"
    "{\"ev\":\"end\",\"t\":2,\"id\":1,\"status\":429,\"how\":\"complete\",\"retry_after_ms\":100}\n"
    "{\"ev\":\"telemetry\",\"t\":2.5,\"what\":\"an event from a newer server\"}\n"
    "{\"ev\":\"arrive\",\"t\":60,\"id\":2,\"key\":\"k1\",\"attempt\":2,\"method\":\"POST\"}\n"
    "{\"ev\":\"end\",\"t\":61,\"id\":2,\"status\":200,\"how\":\"complete\",\"new_field\":true}\n"
    "{\"ev\":\"done\",\"t\":70,\"arrivals\":2}\n";

static rpt_trace *read_text(const char *text, size_t len, int *rc, char err[RPT_ERRLEN]) {
  rpt_trace *tr = NULL;
  err[0] = '\0';
  *rc = rpt_trace_read_mem(text, len, "t.jsonl", &tr, err);
  return tr;
}

static void test_good_trace(void) {
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(good, strlen(good), &rc, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_STRING_EQUAL(rpt_trace_scenario(tr), "s1");
  CU_ASSERT_STRING_EQUAL(rpt_trace_file(tr), "scenarios/a/b.lua");
  CU_ASSERT_DOUBLE_EQUAL(rpt_trace_time_scale(tr), 0.5, 1e-9);
  CU_ASSERT_EQUAL(rpt_trace_arrivals(tr), 2);
  CU_ASSERT_DOUBLE_EQUAL(rpt_trace_duration_ms(tr), 70, 1e-9);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 1);
  CU_ASSERT_STRING_EQUAL(rpt_trace_warning(tr), "");
  CU_ASSERT(rt_has(rpt_trace_expect_json(tr), "\"attempts\":2"));
  CU_ASSERT(rt_has(rpt_trace_client_json(tr), "\"deadline\":8"));
  rpt_trace_free(tr);
}

static void test_read_file(void) {
  char *p = rt_tmpfile(good, strlen(good));
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  rpt_trace *tr = NULL;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(rpt_trace_read_file(p, &tr, err), 0);
  CU_ASSERT_EQUAL(rpt_trace_arrivals(tr), 2);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 1);
  rpt_trace_free(tr);
  unlink(p);
  free(p);
  CU_ASSERT_EQUAL(rpt_trace_read_file("/nonexistent/trace.jsonl", &tr, err), RPT_EIO);
  CU_ASSERT_PTR_NULL(tr);
  CU_ASSERT(rt_has(err, "/nonexistent/trace.jsonl"));
}

/* A killed run: the last line is cut. What completed is judged. */
static void test_cut_last_line(void) {
  const char *cut =
      "{\"ev\":\"session\",\"t\":0}\n"
      "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k1\",\"attempt\":1}\n"
      "{\"ev\":\"end\",\"t\":2,\"id\":1,\"sta";
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(cut, strlen(cut), &rc, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 0);
  CU_ASSERT(rt_has(rpt_trace_warning(tr), "line (3"));
  CU_ASSERT(rt_has(rpt_trace_warning(tr), "cut"));
  CU_ASSERT_EQUAL(rpt_trace_arrivals(tr), 1);
  rpt_judgement *j = NULL;
  CU_ASSERT_EQUAL(rpt_judge(tr, "{\"attempts\":1}", NULL, NULL, &j, err), 0);
  CU_ASSERT_EQUAL(rt_status(j, "attempts"), RPT_PASS);
  rpt_judgement_free(j);
  rpt_trace_free(tr);
}

/* Every prefix of a good trace that keeps the session line reads, with
   arrivals never decreasing, and is complete only when whole. */
static void test_cut_at_every_byte(void) {
  size_t len = strlen(good);
  size_t first = (size_t)(strchr(good, '\n') - good);
  long prev = 0;
  int bad = 0;
  for (size_t n = first + 1; n <= len; n++) {
    char err[RPT_ERRLEN];
    int rc;
    rpt_trace *tr = read_text(good, n, &rc, err);
    if (rc != 0) {
      fprintf(stderr, "\n  prefix %zu: %s\n", n, err);
      bad++;
      continue;
    }
    long a = rpt_trace_arrivals(tr);
    if (a < prev) bad++;
    prev = a;
    int want_complete = n >= len - 1; /* the last newline is optional */
    if (rpt_trace_complete(tr) != want_complete) bad++;
    rpt_trace_free(tr);
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(prev, 2);
}

static void test_no_done(void) {
  const char *t = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\"}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(t, strlen(t), &rc, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(rpt_trace_complete(tr), 0);
  CU_ASSERT(rt_has(rpt_trace_warning(tr), "no `done`"));
  rpt_trace_free(tr);
}

/* Inputs that are not traces, and the message each must give. */
static void test_not_a_trace(void) {
  static const struct {
    const char *text, *want;
    int rc;
  } cases[] = {
      {"", "t.jsonl: empty file", RPT_ETRACE},
      {"\n  \n\n", "t.jsonl: empty file", RPT_ETRACE},
      {"hello world\nthis is a README\n", "t.jsonl:1: not a fusebox trace", RPT_ETRACE},
      {"garbage", "t.jsonl: not a fusebox trace: no line parses", RPT_ETRACE},
      {"[1,2,3]\n", "no line parses", RPT_ETRACE},
      {"{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\"}\n", "t.jsonl:1: not a fusebox trace: the first event is not `session`", RPT_ETRACE},
      {"{\"name\":\"package.json\"}\n", "t.jsonl:1: not a fusebox trace", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{oops\n{\"ev\":\"done\",\"t\":1}\n", "t.jsonl:2: not a JSON object", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"end\",\"t\":1,\"id\":9}\n", "t.jsonl:2: end for unknown arrival id 9", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\"}\n{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"k\"}\n", "t.jsonl:3: arrival id 1 appears twice", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"arrive\",\"t\":1,\"key\":\"k\"}\n", "t.jsonl:2: arrive without a numeric id", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"arrive\",\"id\":1,\"key\":\"k\"}\n", "t.jsonl:2: event without a numeric `t`", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0,\"time_scale\":-1}\n", "t.jsonl:1: session.time_scale", RPT_ETRACE},
      {"{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"client\",\"t\":1}\n", "client event without an outcome", RPT_ETRACE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[RPT_ERRLEN];
    int rc;
    rpt_trace *tr = read_text(cases[i].text, strlen(cases[i].text), &rc, err);
    CU_ASSERT_PTR_NULL(tr);
    CU_ASSERT_EQUAL(rc, cases[i].rc);
    if (!rt_has(err, cases[i].want)) {
      fprintf(stderr, "\n  case %zu: wanted \"%s\", got \"%s\"\n", i, cases[i].want, err);
      CU_FAIL("error message");
    }
    rpt_trace_free(tr);
  }
}

static void test_nul_byte(void) {
  const char t[] = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\0\"done\"}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(t, sizeof t - 1, &rc, err);
  CU_ASSERT_PTR_NULL(tr);
  CU_ASSERT_EQUAL(rc, RPT_ETRACE);
  CU_ASSERT(rt_has(err, "t.jsonl:2:"));
  /* From a file too. */
  char *p = rt_tmpfile(t, sizeof t - 1);
  CU_ASSERT_EQUAL(rpt_trace_read_file(p, &tr, err), RPT_ETRACE);
  CU_ASSERT(rt_has(err, ":2: not a fusebox trace: a NUL byte"));
  unlink(p);
  free(p);
}

/* A line over 1 MiB is refused, from memory and from a file. */
static void test_huge_line(void) {
  size_t n = RPT_MAX_LINE + 100;
  const char *head = "{\"ev\":\"session\",\"t\":0}\n{\"ev\":\"x\",\"t\":1,\"pad\":\"";
  size_t hl = strlen(head);
  char *t = malloc(hl + n + 8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  memcpy(t, head, hl);
  memset(t + hl, 'x', n);
  memcpy(t + hl + n, "\"}\n", 4);
  size_t len = hl + n + 3;
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(t, len, &rc, err);
  CU_ASSERT_PTR_NULL(tr);
  CU_ASSERT_EQUAL(rc, RPT_ETOOBIG);
  CU_ASSERT(rt_has(err, "t.jsonl:2: line longer than"));
  char *p = rt_tmpfile(t, len);
  CU_ASSERT_EQUAL(rpt_trace_read_file(p, &tr, err), RPT_ETOOBIG);
  CU_ASSERT(rt_has(err, ":2: line longer than"));
  unlink(p);
  free(p);
  free(t);
}

/* More events than RPT_MAX_EVENTS is refused. */
static void test_too_many_events(void) {
  const char *line = "{\"ev\":\"x\",\"t\":1}\n";
  size_t ll = strlen(line), count = (size_t)RPT_MAX_EVENTS + 1;
  const char *head = "{\"ev\":\"session\",\"t\":0}\n";
  size_t hl = strlen(head);
  char *t = malloc(hl + ll * count + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  memcpy(t, head, hl);
  for (size_t i = 0; i < count; i++) memcpy(t + hl + i * ll, line, ll);
  char err[RPT_ERRLEN];
  int rc;
  rpt_trace *tr = read_text(t, hl + ll * count, &rc, err);
  CU_ASSERT_PTR_NULL(tr);
  CU_ASSERT_EQUAL(rc, RPT_ETOOBIG);
  CU_ASSERT(rt_has(err, "more than"));
  free(t);
}

/* Groups: by key, ordered by attempt, whatever the arrival order. */
static void test_groups_and_ends(void) {
  const char *t =
      "{\"ev\":\"session\",\"t\":0}\n"
      "{\"ev\":\"arrive\",\"t\":1,\"id\":10,\"key\":\"a\",\"attempt\":2}\n"
      "{\"ev\":\"arrive\",\"t\":2,\"id\":11,\"key\":\"b\",\"attempt\":1}\n"
      "{\"ev\":\"arrive\",\"t\":3,\"id\":7,\"key\":\"a\",\"attempt\":1}\n"
      "{\"ev\":\"end\",\"t\":4,\"id\":7,\"status\":503}\n"
      "{\"ev\":\"end\",\"t\":5,\"id\":10,\"status\":200}\n"
      "{\"ev\":\"done\",\"t\":6}\n";
  char err[RPT_ERRLEN];
  int rc;
  rpt_judgement *j = rt_judge_text(t, "{\"attempts\":{\"min\":1,\"max\":2}}", NULL, &rc, err);
  CU_ASSERT_EQUAL(rc, 0);
  CU_ASSERT_EQUAL(rt_status(j, "attempts"), RPT_PASS);
  CU_ASSERT(rt_has(rt_evidence(j, "attempts"), "2 requests, 1 to 2 attempts"));
  rpt_judgement_free(j);
  /* A second end for the same arrival is an error. */
  const char *t2 =
      "{\"ev\":\"session\",\"t\":0}\n"
      "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"a\",\"attempt\":1}\n"
      "{\"ev\":\"end\",\"t\":2,\"id\":1,\"status\":200}\n"
      "{\"ev\":\"end\",\"t\":3,\"id\":1,\"status\":200}\n";
  rpt_trace *tr = read_text(t2, strlen(t2), &rc, err);
  CU_ASSERT_EQUAL(rc, RPT_ETRACE);
  CU_ASSERT(rt_has(err, ":4: second end for arrival id 1"));
  rpt_trace_free(tr);
}

static void test_bad_args(void) {
  rpt_trace *tr = NULL;
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(rpt_trace_read_mem(NULL, 5, "x", &tr, err), RPT_EINVAL);
  CU_ASSERT_EQUAL(rpt_trace_read_file(NULL, &tr, err), RPT_EINVAL);
  rpt_trace_free(NULL);
  CU_ASSERT_STRING_EQUAL(rpt_strerror(RPT_ETRACE), "not a fusebox trace");
  CU_ASSERT_STRING_EQUAL(rpt_strerror(12345), "unknown error");
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_trace_read(void) {
  CU_pSuite s = CU_add_suite("trace_read", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "a good trace, blank lines, unknown events and fields", test_good_trace);
  ADD(s, "from a file; a missing file", test_read_file);
  ADD(s, "a cut last line", test_cut_last_line);
  ADD(s, "cut at every byte", test_cut_at_every_byte);
  ADD(s, "no done event", test_no_done);
  ADD(s, "not a trace: garbage, empty, wrong first event", test_not_a_trace);
  ADD(s, "a NUL byte", test_nul_byte);
  ADD(s, "a line over 1 MiB", test_huge_line);
  ADD(s, "too many events", test_too_many_events);
  ADD(s, "groups by key, ordered by attempt", test_groups_and_ends);
  ADD(s, "bad arguments, strerror", test_bad_args);
  return 0;
}
