/*
 * test_result_json.c - a result rendered as the `client` trace event.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static void test_client_event(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 429, .headers = "retry-after: 2\nx-request-id: req_1\n",
                           .body = ERR_OPENAI("requests", "rate_limit_exceeded"), .ms = 3});
  fake_add(&f, STEP_OK);
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  char *s = guard_result_json(r, "guard", 4, 950.5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_PTR_NULL(strchr(s, '\n'));
  cJSON *o = cJSON_Parse(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "ev")->valuestring, "client");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(o, "t")->valuedouble, 950.5, 1e-9);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "client")->valuestring, "guard");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "call")->valueint, 4);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "outcome")->valuestring, "ok");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(o, "total_ms")->valuedouble, 2008, 1e-9);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "tokens")->valueint, 15);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "text")->valuestring, "hello");
  CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "reason")));
  cJSON *at = cJSON_GetObjectItem(o, "attempts");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(at), 2);
  cJSON *a0 = cJSON_GetArrayItem(at, 0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a0, "n")->valueint, 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "provider")->valuestring, "primary");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(a0, "start_ms")->valuedouble, 0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(a0, "elapsed_ms")->valuedouble, 3, 1e-9);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "kind")->valuestring, "transient");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a0, "status")->valueint, 429);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "error")->valuestring, "rate_limit_exceeded");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(a0, "wait_ms")->valuedouble, 2000, 1e-9);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "wait_why")->valuestring, "retry_after");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "partial")->valuestring, "");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "request_id")->valuestring, "req_1");
  cJSON *a1 = cJSON_GetArrayItem(at, 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a1, "kind")->valuestring, "ok");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a1, "wait_why")->valuestring, "none");
  cJSON_Delete(o);
  free(s);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_degraded_event(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 401, .sticky = 1});
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  char *s = guard_result_json(r, NULL, 0, 0);
  cJSON *o = cJSON_Parse(s);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "outcome")->valuestring, "degraded");
  CU_ASSERT(cJSON_IsString(cJSON_GetObjectItem(o, "reason")));
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "client")->valuestring, "guard");
  cJSON_Delete(o);
  free(s);
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
  CU_ASSERT_PTR_NULL(guard_result_json(NULL, "guard", 0, 0));
}

/* Registers the result-JSON suite. */
int suite_result_json(void) {
  CU_pSuite s = CU_add_suite("result_json", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "the client event of a retried call", test_client_event) ||
      !CU_add_test(s, "the client event of a degraded call", test_degraded_event))
    return CU_get_error();
  return 0;
}
