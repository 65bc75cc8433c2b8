/*
 * test_wire.c - request bodies and the reading of answers in both
 * dialects: each shape of a 2xx body, and the structured errors.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

static void test_bodies(void) {
  guard_message m[] = {{"user", "q\"uote"}, {"assistant", "a"}};
  guard_chat_request req = {.system = "be brief", .messages = m, .nmessages = 2, .max_tokens = 50};
  char *b;
  size_t len;
  CU_ASSERT_EQUAL_FATAL(guard__wire_body(GUARD_OPENAI, "gpt", &req, &b, &len), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(b, "{\"model\":\"gpt\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                            "{\"role\":\"user\",\"content\":\"q\\\"uote\"},{\"role\":\"assistant\",\"content\":\"a\"}],"
                            "\"max_tokens\":50}");
  CU_ASSERT_EQUAL(len, strlen(b));
  free(b);
  req.stream = 1;
  CU_ASSERT_EQUAL_FATAL(guard__wire_body(GUARD_ANTHROPIC, "claude", &req, &b, &len), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(b, "{\"model\":\"claude\",\"max_tokens\":50,\"system\":\"be brief\",\"messages\":["
                            "{\"role\":\"user\",\"content\":\"q\\\"uote\"},{\"role\":\"assistant\",\"content\":\"a\"}],"
                            "\"stream\":true}");
  free(b);
  req.nmessages = 0;
  CU_ASSERT_EQUAL(guard__wire_body(GUARD_OPENAI, "gpt", &req, &b, &len), GUARD_EINVAL);
}

typedef struct row {
  guard_dialect d;
  const char *body;
  guard__body want;
  const char *text;
} row;

static const row ROWS[] = {
    {GUARD_OPENAI, OK_OPENAI, GUARD__BODY_OK, "hello"},
    {GUARD_ANTHROPIC, OK_ANTHROPIC, GUARD__BODY_OK, "hi from backup"},
    {GUARD_ANTHROPIC, "{\"content\":[{\"type\":\"tool_use\",\"id\":\"t\"},{\"type\":\"text\",\"text\":\"b\"}]}", GUARD__BODY_OK, "b"},
    {GUARD_OPENAI, "", GUARD__BODY_NOT_JSON, ""},
    {GUARD_OPENAI, "Bad Gateway", GUARD__BODY_NOT_JSON, ""},
    {GUARD_OPENAI, "  {\"choices\":[{\"mess", GUARD__BODY_TRUNCATED, ""},
    {GUARD_OPENAI, "[1,2]", GUARD__BODY_MISSING, ""},
    {GUARD_OPENAI, "{}", GUARD__BODY_MISSING, ""},
    {GUARD_OPENAI, "{\"choices\":[{\"message\":{\"role\":\"assistant\"}}]}", GUARD__BODY_MISSING, ""},
    {GUARD_OPENAI, "{\"choices\":[{\"message\":{\"content\":5}}]}", GUARD__BODY_MISSING, ""},
    {GUARD_ANTHROPIC, "{\"type\":\"message\"}", GUARD__BODY_MISSING, ""},
    {GUARD_ANTHROPIC, "{\"content\":[{\"type\":\"text\"}]}", GUARD__BODY_MISSING, ""},
    {GUARD_OPENAI, "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":\"no\"}}]}", GUARD__BODY_REFUSAL, ""},
    {GUARD_OPENAI, "{\"choices\":[{\"message\":{\"content\":\"\"},\"finish_reason\":\"content_filter\"}]}", GUARD__BODY_REFUSAL, ""},
    {GUARD_ANTHROPIC, "{\"content\":[],\"stop_reason\":\"refusal\"}", GUARD__BODY_REFUSAL, ""},
    {GUARD_OPENAI, ERR_OPENAI("server_error", ""), GUARD__BODY_ERROR, ""},
    {GUARD_ANTHROPIC, ERR_ANTHROPIC("overloaded_error"), GUARD__BODY_ERROR, ""},
};

static void test_parse(void) {
  for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++) {
    guard__answer a;
    guard__answer_init(&a, ROWS[i].d, 1 << 20);
    guard__body b = guard__wire_parse(ROWS[i].body, strlen(ROWS[i].body), &a);
    CU_ASSERT_EQUAL(b, ROWS[i].want);
    CU_ASSERT_STRING_EQUAL(a.text.p ? a.text.p : "", ROWS[i].text);
    guard__answer_free(&a);
  }
}

static void test_errors(void) {
  guard__answer a;
  guard__answer_init(&a, GUARD_OPENAI, 64);
  const char *b = ERR_OPENAI("insufficient_quota", "insufficient_quota");
  CU_ASSERT_EQUAL(guard__wire_error(b, strlen(b), &a), 1);
  CU_ASSERT_STRING_EQUAL(a.err_type, "insufficient_quota");
  CU_ASSERT_STRING_EQUAL(a.err_code, "insufficient_quota");
  guard__answer_free(&a);
  guard__answer_init(&a, GUARD_ANTHROPIC, 64);
  b = ERR_ANTHROPIC("rate_limit_error");
  CU_ASSERT_EQUAL(guard__wire_error(b, strlen(b), &a), 1);
  CU_ASSERT_STRING_EQUAL(a.err_type, "rate_limit_error");
  CU_ASSERT_STRING_EQUAL(a.err_code, "");
  guard__answer_free(&a);
  guard__answer_init(&a, GUARD_OPENAI, 64);
  CU_ASSERT_EQUAL(guard__wire_error("oops", 4, &a), 0);
  CU_ASSERT_EQUAL(guard__wire_error("{\"error\":\"plain\"}", 17, &a), 1);
  CU_ASSERT_STRING_EQUAL(a.err_type, "");
  guard__answer_free(&a);
}

static void test_text_bounded(void) {
  guard__answer a;
  guard__answer_init(&a, GUARD_OPENAI, 3);
  CU_ASSERT_EQUAL(guard__wire_parse(OK_OPENAI, strlen(OK_OPENAI), &a), GUARD__BODY_TOO_LARGE);
  guard__answer_free(&a);
}

/* Registers the wire-format suite. */
int suite_wire(void) {
  CU_pSuite s = CU_add_suite("wire", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "request bodies of both dialects", test_bodies) ||
      !CU_add_test(s, "each shape of a 2xx body", test_parse) ||
      !CU_add_test(s, "structured errors", test_errors) ||
      !CU_add_test(s, "answer text is bounded", test_text_bounded))
    return CU_get_error();
  return 0;
}
