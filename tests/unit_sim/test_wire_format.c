/* test_wire_format.c - Retry-After values and provider-shaped bodies. */
#include <CUnit/CUnit.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_int.h"

static void test_delta_seconds(void) {
  char b[32];
  sim__format_seconds(2, b);
  CU_ASSERT_STRING_EQUAL(b, "2");
  sim__format_seconds(1.5, b);
  CU_ASSERT_STRING_EQUAL(b, "1.5");
  sim__format_seconds(0, b);
  CU_ASSERT_STRING_EQUAL(b, "0");
  sim__format_seconds(-3, b);
  CU_ASSERT_STRING_EQUAL(b, "-3");
}

static void test_http_date(void) {
  char b[40];
  double now = (double)time(NULL);
  sim__http_date(now, 5, b);
  /* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
  CU_ASSERT_EQUAL(strlen(b), 29);
  CU_ASSERT(strcmp(b + 26, "GMT") == 0);
  time_t when = curl_getdate(b, NULL);
  CU_ASSERT_EQUAL((long)(when - (time_t)now), 5);
  sim__http_date(784111777.2, 0, b); /* rounded up, never early */
  CU_ASSERT_STRING_EQUAL(b, "Sun, 06 Nov 1994 08:49:38 GMT");
  /* Read back by the one parser. */
  double back = 0;
  CU_ASSERT_EQUAL(sim_http_date_parse(b, &back), 0);
  CU_ASSERT_DOUBLE_EQUAL(back, 784111778, 1e-9);
  CU_ASSERT_EQUAL(sim_http_date_parse(" Sun, 06 Nov 1994 08:49:38 GMT  ", &back), 0);
  CU_ASSERT_EQUAL(sim_http_date_parse("Sunday, 06-Nov-94 08:49:37 GMT", &back), -1);
  CU_ASSERT_EQUAL(sim_http_date_parse("Sun, 06 Nov 1994 08:49:38 GMT x", &back), -1);
  CU_ASSERT_EQUAL(sim_http_date_parse("Sun, 06 Foo 1994 08:49:38 GMT", &back), -1);
  /* Tokens: four characters each, rounded up. */
  CU_ASSERT_EQUAL(sim__estimate_tokens(0), 0);
  CU_ASSERT_EQUAL(sim__estimate_tokens(1), 1);
  CU_ASSERT_EQUAL(sim__estimate_tokens(8), 2);
  CU_ASSERT_EQUAL(sim__estimate_tokens(9), 3);
}

static cJSON *err_of(sim_dialect d, int status, const char *code, const char *type) {
  char *s = sim__error_body(d, status, code, type, NULL);
  cJSON *j = cJSON_Parse(s);
  free(s);
  return j;
}

static void test_error_defaults(void) {
  struct { int status; const char *oa_code; const char *an_type; } rows[] = {
      {401, "invalid_api_key", "authentication_error"},
      {429, "rate_limit_exceeded", "rate_limit_error"},
      {529, "overloaded", "overloaded_error"},
      {413, "request_too_large", "request_too_large"},
      {402, "insufficient_balance", "billing_error"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    cJSON *o = err_of(SIM_DIALECT_OPENAI, rows[i].status, NULL, NULL);
    cJSON *e = cJSON_GetObjectItem(o, "error");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(e, "code")->valuestring, rows[i].oa_code);
    CU_ASSERT_PTR_NOT_NULL(cJSON_GetObjectItem(e, "message"));
    cJSON_Delete(o);
    cJSON *a = err_of(SIM_DIALECT_ANTHROPIC, rows[i].status, NULL, NULL);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a, "type")->valuestring, "error");
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "error"), "type")->valuestring,
                           rows[i].an_type);
    cJSON_Delete(a);
  }
  cJSON *q = err_of(SIM_DIALECT_OPENAI, 429, "insufficient_quota", NULL);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(q, "error"), "type")->valuestring,
                         "insufficient_quota");
  cJSON_Delete(q);
}

static void test_split_words(void) {
  char **w;
  int n;
  CU_ASSERT_EQUAL(sim__split_words("Hello big  world", &w, &n), 0);
  CU_ASSERT_EQUAL(n, 3);
  CU_ASSERT_STRING_EQUAL(w[0], "Hello");
  CU_ASSERT_STRING_EQUAL(w[1], " big");
  CU_ASSERT_STRING_EQUAL(w[2], "  world");
  for (int i = 0; i < n; i++) free(w[i]);
  free(w);
  CU_ASSERT_EQUAL(sim__split_words("", &w, &n), 0);
  CU_ASSERT_EQUAL(n, 0);
  free(w);
}

static void test_sse_frames(void) {
  sim_step *s = sim__step_new(SIM_STEP_STREAM);
  char *texts[] = {"a", "b"};
  sim_sse sse;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_OPENAI, s, "id1", "m", 3, texts, 2, &sse), 0);
  CU_ASSERT_EQUAL(sse.nchunks, 2);
  CU_ASSERT(strncmp(sse.chunk[0], "data: {", 7) == 0);
  CU_ASSERT(strcmp(sse.chunk[0] + strlen(sse.chunk[0]) - 2, "\n\n") == 0);
  CU_ASSERT_STRING_EQUAL(sse.marker, "data: [DONE]\n\n");
  sim__sse_clear(&sse);
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_ANTHROPIC, s, "id1", "m", 3, texts, 2, &sse), 0);
  CU_ASSERT(strncmp(sse.pre, "event: message_start\ndata: {", 28) == 0);
  CU_ASSERT(strncmp(sse.marker, "event: message_stop\n", 20) == 0);
  CU_ASSERT(strncmp(sse.error, "event: error\n", 13) == 0);
  sim__sse_clear(&sse);
  sim__step_free(s);
}

int suite_wire_format(void) {
  CU_pSuite s = CU_add_suite("wire_format", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "Retry-After delta-seconds", test_delta_seconds);
  CU_add_test(s, "Retry-After HTTP-date", test_http_date);
  CU_add_test(s, "error bodies per status and dialect", test_error_defaults);
  CU_add_test(s, "stream text split into words", test_split_words);
  CU_add_test(s, "SSE frames", test_sse_frames);
  return CU_get_error();
}
