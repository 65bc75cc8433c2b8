/* test_wire_apis.c - the Responses API and Gemini on the guard's side:
   request bodies, answers, errors (Google's RetryInfo) and stream endings. */
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

static guard__body parse(guard_dialect d, const char *body, guard__answer *a) {
  guard__answer_init(a, d, 4096);
  return guard__wire_parse(body, strlen(body), a);
}

static void test_bodies(void) {
  guard_message m = {.role = "user", .content = "hi"};
  guard_chat_request req = {.messages = &m, .nmessages = 1, .max_tokens = 7, .system = "be brief"};
  char *b;
  size_t n;
  CU_ASSERT_EQUAL_FATAL(guard__wire_body(GUARD_RESPONSES, "gpt-x", &req, &b, &n), GUARD_OK);
  CU_ASSERT(strstr(b, "\"input\":[{\"role\":\"user\",\"content\":\"hi\"}]") != NULL);
  CU_ASSERT(strstr(b, "\"instructions\":\"be brief\"") != NULL);
  CU_ASSERT(strstr(b, "\"max_output_tokens\":7") != NULL);
  free(b);
  req.stream = 1;
  CU_ASSERT_EQUAL_FATAL(guard__wire_body(GUARD_GEMINI, "gemini-x", &req, &b, &n), GUARD_OK);
  CU_ASSERT(strstr(b, "\"contents\":[{\"parts\":[{\"text\":\"hi\"}],\"role\":\"user\"}]") != NULL);
  CU_ASSERT(strstr(b, "\"systemInstruction\"") != NULL);
  CU_ASSERT(strstr(b, "\"maxOutputTokens\":7") != NULL);
  CU_ASSERT(strstr(b, "stream") == NULL); /* Gemini streams by path */
  free(b);
}

static void test_answers(void) {
  guard__answer a;
  CU_ASSERT_EQUAL(parse(GUARD_RESPONSES,
                        "{\"status\":\"completed\",\"error\":null,\"output\":[{\"type\":\"message\","
                        "\"content\":[{\"type\":\"output_text\",\"text\":\"hi there\"}]}],"
                        "\"usage\":{\"input_tokens\":3,\"output_tokens\":2}}", &a),
                  GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.text.p, "hi there");
  CU_ASSERT_EQUAL(a.tokens_out, 2);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_RESPONSES,
                        "{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"content_filter\"},"
                        "\"output\":[]}", &a),
                  GUARD__BODY_REFUSAL);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_RESPONSES, "{\"status\":\"failed\",\"output\":[]}", &a),
                  GUARD__BODY_ERROR);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_RESPONSES, "{\"id\":\"x\"}", &a), GUARD__BODY_MISSING);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_GEMINI,
                        "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"ciao\"}]},"
                        "\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":4,"
                        "\"candidatesTokenCount\":1}}", &a),
                  GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.text.p, "ciao");
  CU_ASSERT_EQUAL(a.tokens_in, 4);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_GEMINI, "{\"candidates\":[{\"finishReason\":\"SAFETY\"}]}", &a),
                  GUARD__BODY_REFUSAL);
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_GEMINI, "{\"candidates\":[]}", &a), GUARD__BODY_MISSING);
  guard__answer_free(&a);
}

static void test_google_error(void) {
  guard__answer a;
  guard__answer_init(&a, GUARD_GEMINI, 4096);
  const char *e = "{\"error\":{\"code\":429,\"message\":\"x\",\"status\":\"RESOURCE_EXHAUSTED\","
                  "\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\","
                  "\"retryDelay\":\"2.5s\"}]}}";
  CU_ASSERT_EQUAL(guard__wire_error(e, strlen(e), &a), 1);
  CU_ASSERT_STRING_EQUAL(a.err_type, "RESOURCE_EXHAUSTED");
  CU_ASSERT_STRING_EQUAL(a.retry_delay, "2.5");
  guard__answer_free(&a);
  guard__answer_init(&a, GUARD_GEMINI, 4096);
  e = "{\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"retryDelay\":\"soon\"}]}}";
  guard__wire_error(e, strlen(e), &a);
  CU_ASSERT_STRING_EQUAL(a.retry_delay, ""); /* not seconds: no advice */
  guard__answer_free(&a);
}

#define EV(a, name, json) guard__wire_stream_event(a, name, json, strlen(json))

static void test_streams(void) {
  guard__answer a;
  guard__answer_init(&a, GUARD_RESPONSES, 4096);
  EV(&a, "response.created", "{\"type\":\"response.created\",\"response\":{}}");
  EV(&a, "response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_NO_END);
  EV(&a, "response.completed", "{\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.text.p, "Hi");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_RESPONSES, 4096);
  EV(&a, "response.failed", "{\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"server_error\"}}}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_ERROR);
  CU_ASSERT_STRING_EQUAL(a.err_code, "server_error");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_RESPONSES, 4096);
  EV(&a, "error", "{\"type\":\"error\",\"code\":\"server_error\",\"message\":\"x\"}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_ERROR);
  CU_ASSERT_STRING_EQUAL(a.err_code, "server_error");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_RESPONSES, 4096);
  EV(&a, "response.incomplete", "{\"type\":\"response.incomplete\",\"response\":{\"incomplete_details\":{\"reason\":\"content_filter\"}}}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_REFUSAL);
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_GEMINI, 4096);
  EV(&a, "", "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}}]}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_NO_END);
  EV(&a, "", "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]},\"finishReason\":\"STOP\"}]}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.text.p, "ab");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_GEMINI, 4096);
  EV(&a, "", "{\"error\":{\"code\":503,\"status\":\"UNAVAILABLE\"}}");
  CU_ASSERT_EQUAL(guard__wire_stream_end(&a), GUARD__BODY_ERROR);
  CU_ASSERT_STRING_EQUAL(a.err_type, "UNAVAILABLE");
  guard__answer_free(&a);
}

/* Tool calls, whole and streamed, in every dialect; request tools. */
static void test_tool_calls(void) {
  guard__answer a;
  CU_ASSERT_EQUAL(parse(GUARD_OPENAI,
                        "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,"
                        "\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":"
                        "{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":1}\"}}]},"
                        "\"finish_reason\":\"tool_calls\"}]}", &a),
                  GUARD__BODY_OK);
  CU_ASSERT_EQUAL(a.ntc, 1);
  CU_ASSERT_STRING_EQUAL(a.tc[0].id, "call_1");
  CU_ASSERT_STRING_EQUAL(a.tc[0].name, "get_weather");
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{\"city\":1}");
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_ANTHROPIC,
                        "{\"content\":[{\"type\":\"tool_use\",\"id\":\"tu_1\",\"name\":\"f\","
                        "\"input\":{\"x\":2}}],\"stop_reason\":\"tool_use\"}", &a),
                  GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{\"x\":2}");
  guard__answer_free(&a);
  CU_ASSERT_EQUAL(parse(GUARD_GEMINI,
                        "{\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\","
                        "\"args\":{\"y\":3}}}]},\"finishReason\":\"STOP\"}]}", &a),
                  GUARD__BODY_OK);
  CU_ASSERT_STRING_EQUAL(a.tc[0].id, "f");
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{\"y\":3}");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_OPENAI, 4096);
  EV(&a, "", "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c9\","
             "\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"a\\\"\"}}]}}]}");
  EV(&a, "", "{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,"
             "\"function\":{\"arguments\":\":1}\"}}]}}]}");
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{\"a\":1}");
  CU_ASSERT_STRING_EQUAL(a.tc[0].id, "c9");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_RESPONSES, 4096);
  EV(&a, "response.output_item.added", "{\"type\":\"response.output_item.added\",\"output_index\":1,"
       "\"item\":{\"type\":\"function_call\",\"call_id\":\"call_7\",\"name\":\"h\"}}");
  EV(&a, "response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\","
       "\"output_index\":1,\"delta\":\"{}\"}");
  CU_ASSERT_STRING_EQUAL(a.tc[0].id, "call_7");
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{}");
  guard__answer_free(&a);

  guard__answer_init(&a, GUARD_ANTHROPIC, 4096);
  EV(&a, "content_block_start", "{\"type\":\"content_block_start\",\"index\":1,\"content_block\":"
       "{\"type\":\"tool_use\",\"id\":\"tu_2\",\"name\":\"k\",\"input\":{}}}");
  EV(&a, "content_block_delta", "{\"type\":\"content_block_delta\",\"index\":1,\"delta\":"
       "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"q\\\"\"}}");
  CU_ASSERT_STRING_EQUAL(a.tc[0].name, "k");
  CU_ASSERT_STRING_EQUAL(a.tc[0].arguments, "{\"q\"");
  guard__answer_free(&a);

  guard_message m = {.role = "user", .content = "hi"};
  const char *tools[] = {"get_weather"};
  guard_chat_request req = {.messages = &m, .nmessages = 1, .tools = tools, .ntools = 1};
  static const struct { guard_dialect d; const char *want; } rows[] = {
      {GUARD_OPENAI, "\"function\":{\"name\":\"get_weather\""},
      {GUARD_ANTHROPIC, "\"name\":\"get_weather\",\"input_schema\""},
      {GUARD_RESPONSES, "\"type\":\"function\",\"name\":\"get_weather\""},
      {GUARD_GEMINI, "\"functionDeclarations\":[{\"name\":\"get_weather\""}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char *b;
    size_t n;
    CU_ASSERT_EQUAL_FATAL(guard__wire_body(rows[i].d, "m", &req, &b, &n), GUARD_OK);
    CU_ASSERT(strstr(b, rows[i].want) != NULL);
    free(b);
  }
  const char *bad[] = {NULL};
  req.tools = bad;
  char *b = NULL;
  size_t n;
  CU_ASSERT_EQUAL(guard__wire_body(GUARD_OPENAI, "m", &req, &b, &n), GUARD_EINVAL);
}

int suite_wire_apis(void) {
  CU_pSuite s = CU_add_suite("wire_apis", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "Responses and Gemini request bodies", test_bodies) ||
      !CU_add_test(s, "Responses and Gemini answers", test_answers) ||
      !CU_add_test(s, "Google errors and RetryInfo", test_google_error) ||
      !CU_add_test(s, "Responses and Gemini stream endings", test_streams) ||
      !CU_add_test(s, "tool calls in every dialect", test_tool_calls))
    return CU_get_error();
  return 0;
}
