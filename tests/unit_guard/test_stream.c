/*
 * test_stream.c - streamed answers in both dialects: end markers, in-stream
 * errors, idle timeouts, and a broken stream's partial text reported but
 * never joined to the retry's text.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SSE_HDR "content-type: text/event-stream\n"
#define OAI_CHUNK(t) "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" t "\"},\"finish_reason\":null}]}\n\n"
#define OAI_USAGE "data: {\"id\":\"c\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}\n\n"
#define OAI_DONE "data: [DONE]\n\n"

#define ANT_START "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":7,\"output_tokens\":1}}}\n\n"
#define ANT_DELTA(t) "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" t "\"}}\n\n"
#define ANT_MDELTA "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
#define ANT_STOP "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
#define ANT_PING "event: ping\ndata: {\"type\":\"ping\"}\n\n"

static guard_result *stream_call(fake *f, int nprov, unsigned flags) {
  guard_config cfg;
  fake_config(&cfg, f);
  cfg.nproviders = nprov;
  cfg.policy.flags = flags;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  req.stream = 1;
  guard_result *r = NULL;
  CU_ASSERT_EQUAL(guard_chat(g, &req, &r), GUARD_OK);
  guard_free(g);
  return r;
}

static void test_openai_stream(void) {
  for (int split = 0; split <= 7; split++) {
    fake f;
    fake_init(&f);
    f.split = split;
    fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR,
                             .body = OAI_CHUNK("hel") OAI_CHUNK("lo") OAI_USAGE OAI_DONE});
    guard_result *r = stream_call(&f, 1, 0);
    CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
    CU_ASSERT_STRING_EQUAL(r->text, "hello");
    CU_ASSERT_EQUAL(r->tokens, 11);
    CU_ASSERT_PTR_NOT_NULL(strstr(f.req[0].body, "\"stream\":true"));
    CU_ASSERT_PTR_NOT_NULL(strstr(f.req[0].body, "\"include_usage\":true"));
    CU_ASSERT_DOUBLE_EQUAL(f.req[0].idle_ms, 15000, 1e-9);
    guard_result_free(r);
    fake_free(&f);
  }
}

static void test_anthropic_stream(void) {
  fake f;
  fake_init(&f);
  f.split = 3;
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 401});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .headers = SSE_HDR,
                           .body = ANT_START ANT_PING ANT_DELTA("hi ") ANT_DELTA("there")
                                   ANT_MDELTA ANT_STOP});
  guard_result *r = stream_call(&f, 2, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "hi there");
  CU_ASSERT_EQUAL(r->tokens_in, 7);
  CU_ASSERT_EQUAL(r->tokens_out, 5);
  guard_result_free(r);
  fake_free(&f);
}

static void test_partial_not_spliced(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .tx = GUARD_TX_CUT,
                           .body = OAI_CHUNK("The answer is 4") OAI_CHUNK("2, bec")});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR,
                           .body = OAI_CHUNK("The answer is ") OAI_CHUNK("42.") OAI_DONE});
  guard_result *r = stream_call(&f, 1, 0);
  CU_ASSERT_EQUAL(f.nreq, 2);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "The answer is 42.");
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_SHAPE);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "stream_cut");
  CU_ASSERT_STRING_EQUAL(r->attempts[0].partial, "The answer is 42, bec");
  CU_ASSERT_PTR_NULL(r->attempts[1].partial);
  char *json = guard_result_json(r, "guard", 0, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"partial\":\"The answer is 42, bec\""));
  free(json);
  guard_result_free(r);
  fake_free(&f);
}

static void test_splice_knob(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .tx = GUARD_TX_IDLE,
                           .body = OAI_CHUNK("Hel")});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = OAI_CHUNK("Hello") OAI_DONE});
  guard_result *r = stream_call(&f, 1, GUARD_SPLICE_PARTIAL);
  CU_ASSERT_STRING_EQUAL(r->text, "HelHello");
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "idle_timeout");
  CU_ASSERT_DOUBLE_EQUAL(r->attempts[0].elapsed_ms, 15000, 1e-9); /* the idle timeout */
  guard_result_free(r);
  fake_free(&f);
}

static void test_no_end_marker(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = OAI_CHUNK("x")});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = ANT_START ANT_DELTA("y")});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = ""});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = "data: {not json\n\n" OAI_DONE});
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR, .body = OAI_CHUNK("ok") OAI_DONE});
  guard_config cfg;
  fake_config(&cfg, &f);
  cfg.policy.attempts = 5;
  guard *g;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  guard_chat_request req = fake_request();
  req.stream = 1;
  guard_result *r;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "no_end_marker");
  /* OpenAI dialect: Anthropic-shaped events are not OpenAI chunks. */
  CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "bad_chunk");
  CU_ASSERT_STRING_EQUAL(r->attempts[2].error, "no_end_marker");
  CU_ASSERT_STRING_EQUAL(r->attempts[3].error, "bad_chunk");
  CU_ASSERT_STRING_EQUAL(r->text, "ok");
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

static void test_in_stream_errors(void) {
  /* Anthropic: overloaded mid-stream is transient; the partial is kept. */
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.url_has = "/v1/chat", .status = 401});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .headers = SSE_HDR,
                           .body = ANT_START ANT_DELTA("par")
                           "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"m\"}}\n\n"});
  fake_add(&f, (fake_step){.url_has = "/backup/", .status = 200, .headers = SSE_HDR,
                           .body = ANT_START ANT_DELTA("full") ANT_STOP});
  guard_result *r = stream_call(&f, 2, 0);
  CU_ASSERT_EQUAL(r->attempts[1].kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[1].error, "overloaded_error");
  CU_ASSERT_STRING_EQUAL(r->attempts[1].partial, "par");
  CU_ASSERT_STRING_EQUAL(r->text, "full");
  guard_result_free(r);
  fake_free(&f);
  /* OpenAI: an error chunk of a permanent type stops the provider. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR,
                           .body = OAI_CHUNK("a") "data: " ERR_OPENAI("invalid_request_error", "context_length_exceeded") "\n\n",
                           .sticky = 1});
  r = stream_call(&f, 1, 0);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_PERMANENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "context_length_exceeded");
  guard_result_free(r);
  fake_free(&f);
}

static void test_refusal_and_json_answer(void) {
  fake f;
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = SSE_HDR,
                           .body = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n" OAI_DONE});
  guard_result *r = stream_call(&f, 1, 0);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_EQUAL(r->attempts[0].kind, GUARD_KIND_PERMANENT);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "content_refusal");
  guard_result_free(r);
  fake_free(&f);
  /* A JSON answer to a stream request is read as JSON. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 200, .headers = "content-type: application/json\n", .body = OK_OPENAI});
  r = stream_call(&f, 1, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "hello");
  guard_result_free(r);
  fake_free(&f);
  /* An error status to a stream request is read as an error body. */
  fake_init(&f);
  fake_add(&f, (fake_step){.status = 429, .headers = SSE_HDR,
                           .body = ERR_OPENAI("insufficient_quota", "insufficient_quota")});
  r = stream_call(&f, 1, 0);
  CU_ASSERT_EQUAL(f.nreq, 1);
  CU_ASSERT_STRING_EQUAL(r->attempts[0].error, "insufficient_quota");
  guard_result_free(r);
  fake_free(&f);
}

/* Registers the streaming suite. */
int suite_stream(void) {
  CU_pSuite s = CU_add_suite("stream", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "OpenAI stream, any chunking", test_openai_stream) ||
      !CU_add_test(s, "Anthropic stream", test_anthropic_stream) ||
      !CU_add_test(s, "a broken stream's partial is not spliced", test_partial_not_spliced) ||
      !CU_add_test(s, "the splice knob splices", test_splice_knob) ||
      !CU_add_test(s, "a stream without its end marker is shape", test_no_end_marker) ||
      !CU_add_test(s, "in-stream errors by their type", test_in_stream_errors) ||
      !CU_add_test(s, "refusal, JSON answer, error status", test_refusal_and_json_answer))
    return CU_get_error();
  return 0;
}
