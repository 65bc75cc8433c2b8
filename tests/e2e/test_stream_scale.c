/*
 * test_stream_scale.c - a stream's `interval` and `stall` under a time scale
 * below 1: the server must multiply both by the scale. Each case is timed
 * twice, by the client (curl's elapsed time) and by the trace (arrive to
 * end), with ranges wide enough for a loaded 2-core machine and an upper
 * bound well under what the unscaled step would take (the client's timeout
 * sits below that too), so a server that ignores the scale fails.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "e2e_util.h"

#define CHAT "/v1/chat/completions"
#define MSGS "/v1/messages"

static e2e_server *scaled(const char *step, double scale) {
  char lua[1024];
  snprintf(lua, sizeof lua, "return scenario { name = 'scaled stream', provider = { %s } }", step);
  return e2e_start(lua, scale);
}

/* Milliseconds from the nth arrival to its end, by the trace; -1 if absent. */
static double trace_span(const e2e_server *s, int nth) {
  const cJSON *a = e2e_event(s, "arrive", nth), *e = e2e_end_of(s, nth);
  if (a == NULL || e == NULL) return -1;
  return e2e_num(e, "t") - e2e_num(a, "t");
}

static int count_sub(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = s ? strstr(s, sub) : NULL; p; p = strstr(p + 1, sub)) n++;
  return n;
}

/* 4 chunks, 1 s apart, at x0.1: 3 pauses of 100 ms (unscaled: 3 s). */
static void test_interval_openai(void) {
  e2e_server *s = scaled("stream { chunks = { 'a', 'b', 'c', 'd' }, interval = 1 }", 0.1);
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 2500, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT_EQUAL(count_sub(r.body, "\"content\":\""), 5); /* role chunk + 4 */
  CU_ASSERT(t_has(r.body, "data: [DONE]"));
  fprintf(stderr, " [interval x0.1: client %.0f ms", r.elapsed_ms);
  CU_ASSERT(r.elapsed_ms >= 270 && r.elapsed_ms < 1500);
  e2e_resp_clear(&r);
  e2e_stop(s);
  double span = trace_span(s, 0);
  fprintf(stderr, ", trace %.0f ms; unscaled 3000 ms] ", span);
  CU_ASSERT(span >= 270 && span < 1500);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 0), "chunks"), 4);
  e2e_free(s);
}

/* Another scale and dialect: 3 chunks 1 s apart at x0.2, 2 x 200 ms
   (unscaled: 2 s; a scale stuck at 0.1: 200 ms). */
static void test_interval_anthropic(void) {
  e2e_server *s = scaled("stream { chunks = { 'x', 'y', 'z' }, interval = 1 }", 0.2);
  e2e_resp r;
  e2e_chat(s, MSGS, 1, 1900, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(t_has(r.body, "message_stop"));
  fprintf(stderr, " [interval x0.2: client %.0f ms", r.elapsed_ms);
  CU_ASSERT(r.elapsed_ms >= 360 && r.elapsed_ms < 1500);
  e2e_resp_clear(&r);
  e2e_stop(s);
  double span = trace_span(s, 0);
  fprintf(stderr, ", trace %.0f ms; unscaled 2000 ms] ", span);
  CU_ASSERT(span >= 360 && span < 1500);
  e2e_free(s);
}

/* A 2 s stall after the first chunk at x0.1: 200 ms (unscaled: 2 s). */
static void test_stall(void) {
  e2e_server *s = scaled("stream { chunks = { 'a', 'b' }, stall_after = 1, stall = 2 }", 0.1);
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 1800, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(t_has(r.body, "data: [DONE]"));
  fprintf(stderr, " [stall x0.1: client %.0f ms", r.elapsed_ms);
  CU_ASSERT(r.elapsed_ms >= 180 && r.elapsed_ms < 1200);
  e2e_resp_clear(&r);
  e2e_stop(s);
  double span = trace_span(s, 0);
  fprintf(stderr, ", trace %.0f ms; unscaled 2000 ms] ", span);
  CU_ASSERT(span >= 180 && span < 1200);
  const cJSON *end = e2e_end_of(s, 0);
  CU_ASSERT_STRING_EQUAL(e2e_str(end, "how"), "complete");
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(end, "stalled")));
  CU_ASSERT_EQUAL(e2e_num(end, "chunks"), 2);
  e2e_free(s);
}

/* Both at once: a 1 s interval and a 3 s stall at x0.1; the 100 ms interval
   runs out during the 300 ms stall (unscaled: 3 s). */
static void test_interval_and_stall(void) {
  e2e_server *s =
      scaled("stream { chunks = { 'a', 'b' }, interval = 1, stall_after = 1, stall = 3 }", 0.1);
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 2500, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  fprintf(stderr, " [interval+stall x0.1: client %.0f ms; unscaled 3000 ms] ", r.elapsed_ms);
  CU_ASSERT(r.elapsed_ms >= 270 && r.elapsed_ms < 2000);
  e2e_resp_clear(&r);
  e2e_free(s);
}

int suite_stream_scale(void) {
  CU_pSuite s = CU_add_suite("e2e_stream_scale", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "interval x0.1, OpenAI", test_interval_openai);
  CU_add_test(s, "interval x0.2, Anthropic", test_interval_anthropic);
  CU_add_test(s, "stall x0.1", test_stall);
  CU_add_test(s, "interval and stall x0.1", test_interval_and_stall);
  return CU_get_error();
}
