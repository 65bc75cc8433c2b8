/*
 * test_providers.c - step lists, function providers, named providers,
 * logical request keying and routing.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

#define CHAT "/v1/chat/completions"

static void test_list_order_and_last_repeats(void) {
  e2e_server *s = e2e_start("return scenario { name='t', provider = { fail{status=503}, fail{status=502}, chat{} } }", 1);
  long want[] = {503, 502, 200, 200};
  e2e_resp r;
  for (int i = 0; i < 4; i++) {
    e2e_chat(s, CHAT, 0, 2000, &r);
    CU_ASSERT_EQUAL(r.status, want[i]);
    e2e_resp_clear(&r);
  }
  /* Another body is another logical request: it starts at step 1. */
  e2e_request(s, "POST", CHAT, "{\"model\":\"other\"}", NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 503);
  e2e_resp_clear(&r);
  e2e_stop(s);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "arrive", i), "attempt"), i + 1);
  CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "arrive", 4), "attempt"), 1);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 0), "key"), e2e_str(e2e_event(s, "arrive", 3), "key"));
  CU_ASSERT(strncmp(e2e_str(e2e_event(s, "arrive", 0), "key"), "hash:", 5) == 0);
  e2e_free(s);
}

static void test_idempotency_key_is_the_request(void) {
  e2e_server *s = e2e_start("return scenario { name='t', provider = { fail{status=500}, chat{} } }", 1);
  const char *h[] = {"Idempotency-Key: op-42", NULL};
  e2e_resp r;
  e2e_request(s, "POST", CHAT, "{\"a\":1}", h, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 500);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", CHAT, "{\"a\":2}", h, 2000, &r); /* other body, same key */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 1), "key"), "idem:op-42");
  CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "arrive", 1), "attempt"), 2);
  e2e_free(s);
}

static void test_function_provider(void) {
  e2e_server *s = e2e_start(
      "return scenario { name='t', provider = function(req)\n"
      "  if req.attempt == 1 then return fail { status = 500 } end\n"
      "  return chat { content = req.body.model .. '|' .. req.path .. '|' .. req.dialect ..\n"
      "    '|' .. tostring(req.stream) .. '|' .. req.n .. '|' .. req.headers['x-tag'] }\n"
      "end }", 1);
  const char *h[] = {"X-Tag: hello", NULL};
  e2e_resp r;
  e2e_request(s, "POST", CHAT, "{\"model\":\"gpt-x\"}", h, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 500);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", CHAT, "{\"model\":\"gpt-x\"}", h, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "gpt-x|/v1/chat/completions|openai-chat|false|2|hello") != NULL);
  e2e_resp_clear(&r);
  e2e_free(s);
}

static void test_named_providers(void) {
  e2e_server *s = e2e_start(
      "return scenario { name='t', providers = {\n"
      "  { name = 'primary', fail { status = 503 } },\n"
      "  { name = 'backup', chat { content = 'from backup' } } } }", 1);
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 503);
  e2e_resp_clear(&r);
  e2e_chat(s, "/primary/v1/chat/completions", 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 503);
  e2e_resp_clear(&r);
  e2e_chat(s, "/backup/v1/messages", 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "from backup") != NULL);
  e2e_resp_clear(&r);
  e2e_chat(s, "/nope/v1/chat/completions", 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 2), "provider"), "backup");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 2), "dialect"), "anthropic");
  e2e_free(s);
}

static void test_routing_errors(void) {
  e2e_server *s = e2e_start("return scenario { name='t', provider = { chat{} } }", 1);
  e2e_resp r;
  e2e_request(s, "POST", "/v2/chat/completions", "{}", NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404);
  /* Unserved: the body says whose 404 it is, what was asked, what is
     served and which variables to set; not a provider's model_not_found. */
  cJSON *j = cJSON_Parse(r.body);
  cJSON *e = cJSON_GetObjectItem(j, "error");
  CU_ASSERT_STRING_EQUAL(e2e_str(e, "type") ? e2e_str(e, "type") : "", "fusebox_unknown_endpoint");
  CU_ASSERT_STRING_EQUAL(e2e_str(e, "code") ? e2e_str(e, "code") : "", "fusebox_unknown_endpoint");
  const char *msg = e2e_str(e, "message") ? e2e_str(e, "message") : "";
  CU_ASSERT(strstr(msg, "fusebox") != NULL);
  CU_ASSERT(strstr(msg, "/v2/chat/completions") != NULL);
  CU_ASSERT(strstr(msg, "/v1/chat/completions, /v1/messages") != NULL);
  CU_ASSERT(strstr(msg, "OPENAI_BASE_URL=http://") != NULL);
  CU_ASSERT(strstr(msg, "ANTHROPIC_BASE_URL=http://") != NULL);
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_request(s, "GET", CHAT, NULL, NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 405);
  e2e_resp_clear(&r);
  e2e_stop(s);
  /* The trace marks the pair unserved, with the path; a served request
     (the 405) is not marked. */
  cJSON *a0 = e2e_event(s, "arrive", 0);
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(a0, "unserved")));
  CU_ASSERT_STRING_EQUAL(e2e_str(a0, "path") ? e2e_str(a0, "path") : "", "/v2/chat/completions");
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(e2e_end_of(s, 0), "unserved")));
  const char *code = e2e_str(e2e_end_of(s, 0), "code");
  CU_ASSERT_STRING_EQUAL(code ? code : "", "fusebox_unknown_endpoint");
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(e2e_event(s, "arrive", 1), "unserved"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(e2e_end_of(s, 1), "unserved"));
  e2e_free(s);
}

static void test_oversized_body(void) {
  e2e_server *s = e2e_start("return scenario { name='t', provider = { chat{} } }", 1);
  size_t n = 2 * 1024 * 1024;
  char *big = malloc(n + 1);
  memset(big, 'a', n);
  big[n] = '\0';
  e2e_resp r;
  e2e_request(s, "POST", CHAT, big, NULL, 5000, &r);
  CU_ASSERT_EQUAL(r.status, 413);
  e2e_resp_clear(&r);
  free(big);
  e2e_chat(s, CHAT, 0, 2000, &r); /* and it keeps serving */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_free(s);
}

int suite_providers(void) {
  CU_pSuite s = CU_add_suite("e2e_providers", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "step list order, last step repeats", test_list_order_and_last_repeats);
  CU_add_test(s, "Idempotency-Key names the logical request", test_idempotency_key_is_the_request);
  CU_add_test(s, "function provider sees req", test_function_provider);
  CU_add_test(s, "named providers at /NAME/v1", test_named_providers);
  CU_add_test(s, "unknown path and method", test_routing_errors);
  CU_add_test(s, "oversized body gets 413", test_oversized_body);
  return CU_get_error();
}
