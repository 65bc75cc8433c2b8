/*
 * test_steps.c - every step kind seen from the client side: status,
 * headers, body bytes, how the connection ended, and the trace lines.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "e2e_util.h"

#define CHAT "/v1/chat/completions"
#define MSGS "/v1/messages"

static e2e_server *one(const char *steps) {
  char lua[4096];
  snprintf(lua, sizeof lua, "return scenario { name = 't', provider = { %s } }", steps);
  return e2e_start(lua, 1.0);
}

static const char *end_how(e2e_server *s, int nth) { return e2e_str(e2e_end_of(s, nth), "how"); }

static void test_chat_openai(void) {
  e2e_server *s = one("chat { content = 'hello there' }");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT_EQUAL(r.status, 200);
  cJSON *j = cJSON_Parse(r.body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  cJSON *msg = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "message");
  CU_ASSERT_STRING_EQUAL(e2e_str(msg, "content"), "hello there");
  CU_ASSERT_STRING_EQUAL(e2e_str(j, "object"), "chat.completion");
  CU_ASSERT_STRING_EQUAL(e2e_str(j, "model"), "m1");
  CU_ASSERT_PTR_NOT_NULL(e2e_header(&r, "x-request-id"));
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_stop(s);
  cJSON *end = e2e_end_of(s, 0);
  CU_ASSERT_STRING_EQUAL(e2e_str(end, "step"), "chat");
  CU_ASSERT_STRING_EQUAL(e2e_str(end, "how"), "complete");
  CU_ASSERT_STRING_EQUAL(e2e_str(end, "text"), "hello there");
  CU_ASSERT(e2e_num(end, "tokens_out") > 0);
  e2e_free(s);
}

static void test_chat_anthropic(void) {
  e2e_server *s = one("chat { content = 'bonjour' }");
  e2e_resp r;
  e2e_chat(s, MSGS, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  cJSON *j = cJSON_Parse(r.body);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_STRING_EQUAL(e2e_str(j, "type"), "message");
  cJSON *block = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "content"), 0);
  CU_ASSERT_STRING_EQUAL(e2e_str(block, "text"), "bonjour");
  CU_ASSERT_PTR_NOT_NULL(e2e_header(&r, "request-id"));
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_free(s);
}

static void test_fail_shapes(void) {
  e2e_server *s = one("fail { status = 401 }");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 401);
  cJSON *j = cJSON_Parse(r.body);
  CU_ASSERT_STRING_EQUAL(e2e_str(cJSON_GetObjectItem(j, "error"), "code"), "invalid_api_key");
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_chat(s, MSGS, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 401);
  j = cJSON_Parse(r.body);
  CU_ASSERT_STRING_EQUAL(e2e_str(j, "type"), "error");
  CU_ASSERT_STRING_EQUAL(e2e_str(cJSON_GetObjectItem(j, "error"), "type"), "authentication_error");
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_free(s);

  s = one("fail { status = 429, code = 'insufficient_quota', message = 'You exceeded your quota' }");
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 429);
  j = cJSON_Parse(r.body);
  cJSON *e = cJSON_GetObjectItem(j, "error");
  CU_ASSERT_STRING_EQUAL(e2e_str(e, "code"), "insufficient_quota");
  CU_ASSERT_STRING_EQUAL(e2e_str(e, "type"), "insufficient_quota");
  CU_ASSERT_STRING_EQUAL(e2e_str(e, "message"), "You exceeded your quota");
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_free(s);

  s = one("fail { status = 529 }");
  e2e_chat(s, MSGS, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 529);
  j = cJSON_Parse(r.body);
  CU_ASSERT_STRING_EQUAL(e2e_str(cJSON_GetObjectItem(j, "error"), "type"), "overloaded_error");
  cJSON_Delete(j);
  e2e_resp_clear(&r);
  e2e_free(s);
}

static void test_retry_after_forms(void) {
  e2e_server *s = one("fail { status = 429, retry_after = 2 }, fail { status = 429, retry_after = 1.5 },"
                      "fail { status = 429, retry_after_ms = 1500 },"
                      "fail { status = 503, retry_after_date = 3 },"
                      "fail { status = 429, retry_after = 'soon', headers = { ['x-should-retry'] = 'false' } }");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "retry-after"), "2");
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "retry-after"), "1.5");
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "retry-after-ms"), "1500");
  CU_ASSERT_PTR_NULL(e2e_header(&r, "retry-after"));
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 503);
  const char *date = e2e_header(&r, "retry-after");
  CU_ASSERT_PTR_NOT_NULL_FATAL(date);
  time_t when = curl_getdate(date, NULL);
  time_t now = time(NULL);
  CU_ASSERT(when - now >= 2 && when - now <= 5);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "retry-after"), "soon");
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "x-should-retry"), "false");
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 0), "retry_after_ms"), 2000);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 1), "retry_after_ms"), 1500);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 2), "retry_after_ms"), 1500);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 3), "retry_after_ms"), 3000);
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 4), "retry_after_ms"), -1); /* malformed: unknown */
  e2e_free(s);
}

static void test_garbage_and_truncate(void) {
  e2e_server *s = one("garbage {}, truncate { chat { content = 'a long enough answer' }, at = 20 },"
                      "truncate { chat {}, at = 25, mode = 'early-close' }");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  cJSON *j = cJSON_Parse(r.body);
  CU_ASSERT_PTR_NULL(j);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK); /* valid framing */
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT_EQUAL(r.body_len, 20);
  CU_ASSERT_STRING_EQUAL(e2e_header(&r, "content-length"), "20");
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_PARTIAL_FILE); /* Content-Length promised more */
  CU_ASSERT_EQUAL(r.body_len, 25);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "step"), "garbage");
  CU_ASSERT_STRING_EQUAL(end_how(s, 1), "complete");
  CU_ASSERT_STRING_EQUAL(end_how(s, 2), "early_close");
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 2), "bytes"), 25);
  e2e_free(s);
}

static void test_drop_reset(void) {
  e2e_server *s = one("drop {}, reset {}, chat {}");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_GOT_NOTHING);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT(r.rc == CURLE_RECV_ERROR || r.rc == CURLE_SEND_ERROR);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(end_how(s, 0), "dropped");
  CU_ASSERT_STRING_EQUAL(end_how(s, 1), "reset");
  CU_ASSERT_STRING_EQUAL(end_how(s, 2), "complete");
  CU_ASSERT_EQUAL(e2e_num(e2e_event(s, "arrive", 2), "attempt"), 3);
  e2e_free(s);
}

static void test_hang_and_client_abort(void) {
  e2e_server *s = one("hang {}");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 300, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OPERATION_TIMEDOUT);
  CU_ASSERT(r.elapsed_ms >= 250 && r.elapsed_ms < 3000);
  e2e_resp_clear(&r);
  CU_ASSERT(e2e_wait_trace(s, "end", 1, 3000));
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(end_how(s, 0), "client_abort");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "step"), "hang");
  e2e_free(s);
}

static void test_hang_until_shutdown(void) {
  e2e_server *s = one("hang {}");
  /* A client still waiting when the server stops: the trace says shutdown. */
  CURLM *m = curl_multi_init();
  CURL *h = curl_easy_init();
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d" CHAT, s->port);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{}");
  curl_multi_add_handle(m, h);
  int running = 1;
  for (int i = 0; i < 200 && sim_server_arrivals(s->srv) == 0; i++) {
    curl_multi_perform(m, &running);
    curl_multi_poll(m, NULL, 0, 10, NULL);
  }
  CU_ASSERT_EQUAL(sim_server_arrivals(s->srv), 1);
  e2e_stop(s);
  curl_multi_remove_handle(m, h);
  curl_easy_cleanup(h);
  curl_multi_cleanup(m);
  CU_ASSERT_STRING_EQUAL(end_how(s, 0), "shutdown");
  CU_ASSERT_PTR_NOT_NULL(e2e_event(s, "done", 0));
  e2e_free(s);
}

/* Each event loop fires its own connections' timers (sim/loops.c): on
   two loops, every answer comes no earlier than its delay, and in bounds
   wide enough for a loaded machine. Each request is a new connection, so
   both loops serve some. */
static void test_delay_on_each_loop(void) {
  e2e_server *s = e2e_start_loops(
      "return scenario { name='t', provider = { delay { 0.02, chat {} } } }", 1.0, NULL, 2);
  for (int i = 0; i < 6; i++) {
    e2e_resp r;
    e2e_chat(s, CHAT, 0, 5000, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT(r.elapsed_ms >= 20.0 && r.elapsed_ms < 2000);
    e2e_resp_clear(&r);
  }
  e2e_stop(s);
  for (int i = 0; i < 6; i++) {
    CU_ASSERT_STRING_EQUAL(end_how(s, i), "complete");
    CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, i), "delay_ms"), 20);
  }
  e2e_free(s);
}

static void test_delay(void) {
  e2e_server *s = one("delay { 0.3, chat { content = 'late' } }");
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 5000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(r.elapsed_ms >= 280 && r.elapsed_ms < 3000);
  e2e_resp_clear(&r);
  e2e_stop(s);
  cJSON *end = e2e_end_of(s, 0);
  CU_ASSERT_STRING_EQUAL(e2e_str(end, "step"), "chat");
  CU_ASSERT_EQUAL(e2e_num(end, "delay_ms"), 300);
  e2e_free(s);

  /* The time scale shrinks server delays. */
  s = e2e_start("return scenario { name='t', provider = { delay { 2, chat {} } } }", 0.1);
  e2e_chat(s, CHAT, 0, 5000, &r);
  CU_ASSERT(r.elapsed_ms >= 180 && r.elapsed_ms < 1500);
  e2e_resp_clear(&r);
  e2e_free(s);

  /* A client that gives up during a delay is recorded as such, and billed. */
  s = one("delay { 5, chat { content = 'never seen' } }");
  e2e_chat(s, CHAT, 0, 200, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OPERATION_TIMEDOUT);
  e2e_resp_clear(&r);
  CU_ASSERT(e2e_wait_trace(s, "end", 1, 3000));
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(end_how(s, 0), "client_abort");
  CU_ASSERT(e2e_num(e2e_end_of(s, 0), "tokens_out") > 0);
  e2e_free(s);
}

static int count_sub(const char *s, const char *sub) {
  int n = 0;
  for (const char *p = strstr(s, sub); p; p = strstr(p + 1, sub)) n++;
  return n;
}

static void test_stream_openai(void) {
  e2e_server *s = one("stream { chunks = { 'a', 'b', 'c' } }, stream { chunks = { 'a', 'b', 'c' }, drop_after = 2 },"
                      "stream { chunks = { 'a', 'b' }, error_after = 1, error = { status = 500 } },"
                      "stream { chunks = { 'a', 'b' }, no_end = true },"
                      "stream { chunks = { 'a', 'b' }, no_terminator = true }");
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(t_has(e2e_header(&r, "content-type"), "text/event-stream"));
  CU_ASSERT_EQUAL(count_sub(r.body, "\"content\":\""), 4); /* role chunk + 3 */
  CU_ASSERT(strstr(r.body, "data: [DONE]\n\n") != NULL);
  CU_ASSERT(strstr(r.body, "\"finish_reason\":\"stop\"") != NULL);
  e2e_resp_clear(&r);

  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_PARTIAL_FILE);
  CU_ASSERT_EQUAL(count_sub(r.body, "\"content\":\""), 3);
  CU_ASSERT(strstr(r.body, "[DONE]") == NULL);
  e2e_resp_clear(&r);

  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(strstr(r.body, "data: {\"error\"") != NULL);
  CU_ASSERT(strstr(r.body, "[DONE]") == NULL);
  e2e_resp_clear(&r);

  /* no_end: stops before the finish chunk; no finish reason at all. */
  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(strstr(r.body, "[DONE]") == NULL);
  CU_ASSERT(strstr(r.body, "\"finish_reason\":\"stop\"") == NULL);
  CU_ASSERT_EQUAL(count_sub(r.body, "\"content\":\""), 3); /* role chunk + 2 */
  e2e_resp_clear(&r);
  /* no_terminator: the finish reason, but no [DONE]. */
  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(strstr(r.body, "[DONE]") == NULL);
  CU_ASSERT(strstr(r.body, "\"finish_reason\":\"stop\"") != NULL);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(e2e_end_of(s, 3), "end_marker")));
  CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(e2e_end_of(s, 3), "finish")));
  CU_ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(e2e_end_of(s, 4), "end_marker")));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(e2e_end_of(s, 4), "finish"));
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 0), "chunks"), 3);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "text"), "abc");
  CU_ASSERT_STRING_EQUAL(end_how(s, 1), "dropped");
  CU_ASSERT_EQUAL(e2e_num(e2e_end_of(s, 1), "chunks"), 2);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 1), "text"), "ab");
  e2e_free(s);
}

static void test_stream_anthropic(void) {
  e2e_server *s = one("stream { content = 'one two three' }, stream { content = 'x y', error_after = 1 },"
                      "stream { content = 'x y', no_end = true },"
                      "stream { content = 'x y', no_terminator = true }");
  e2e_resp r;
  e2e_chat(s, MSGS, 1, 2000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  const char *order[] = {"event: message_start", "event: content_block_start", "event: ping",
                         "event: content_block_delta", "event: content_block_stop",
                         "event: message_delta", "event: message_stop"};
  const char *at = r.body;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    const char *p = strstr(at, order[i]);
    CU_ASSERT_PTR_NOT_NULL(p);
    if (p) at = p;
  }
  CU_ASSERT_EQUAL(count_sub(r.body, "event: content_block_delta"), 3);
  e2e_resp_clear(&r);
  e2e_chat(s, MSGS, 1, 2000, &r);
  CU_ASSERT(strstr(r.body, "event: error") != NULL);
  CU_ASSERT(strstr(r.body, "overloaded_error") != NULL);
  CU_ASSERT(strstr(r.body, "message_stop") == NULL);
  e2e_resp_clear(&r);
  /* no_end: no stop_reason (message_delta) and no message_stop. */
  e2e_chat(s, MSGS, 1, 2000, &r);
  CU_ASSERT_EQUAL(count_sub(r.body, "event: content_block_delta"), 2);
  CU_ASSERT(strstr(r.body, "stop_reason\":\"end_turn") == NULL);
  CU_ASSERT(strstr(r.body, "message_stop") == NULL);
  e2e_resp_clear(&r);
  /* no_terminator: stop_reason sent, message_stop not. */
  e2e_chat(s, MSGS, 1, 2000, &r);
  CU_ASSERT(strstr(r.body, "stop_reason\":\"end_turn") != NULL);
  CU_ASSERT(strstr(r.body, "message_stop") == NULL);
  e2e_resp_clear(&r);
  e2e_free(s);
}

static void test_stream_timing(void) {
  e2e_server *s = one("stream { chunks = { 'a', 'b', 'c' }, interval = 0.1 },"
                      "stream { chunks = { 'a', 'b', 'c' }, stall_after = 1 },"
                      "stream { chunks = { 'a', 'b' }, stall_after = 1, stall = 0.2 }");
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 3000, &r);
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(r.elapsed_ms >= 180 && r.elapsed_ms < 2500);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 1, 400, &r); /* stalls forever: the client times out */
  CU_ASSERT_EQUAL(r.rc, CURLE_OPERATION_TIMEDOUT);
  CU_ASSERT_EQUAL(count_sub(r.body, "\"content\":\""), 2);
  e2e_resp_clear(&r);
  CU_ASSERT(e2e_wait_trace(s, "end", 2, 3000));
  e2e_chat(s, CHAT, 1, 3000, &r); /* stalls 200 ms, then finishes */
  CU_ASSERT_EQUAL(r.rc, CURLE_OK);
  CU_ASSERT(r.elapsed_ms >= 180);
  CU_ASSERT(strstr(r.body, "[DONE]") != NULL);
  e2e_resp_clear(&r);
  e2e_stop(s);
  cJSON *e1 = e2e_end_of(s, 1);
  CU_ASSERT_STRING_EQUAL(e2e_str(e1, "how"), "client_abort");
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(e1, "stalled")));
  CU_ASSERT_STRING_EQUAL(end_how(s, 2), "complete");
  e2e_free(s);
}

static void test_chat_step_streams_when_asked(void) {
  e2e_server *s = one("chat { content = 'as a stream' }");
  e2e_resp r;
  e2e_chat(s, CHAT, 1, 2000, &r);
  CU_ASSERT(strstr(r.body, "data: [DONE]") != NULL);
  e2e_resp_clear(&r);
  e2e_free(s);
}

int suite_steps(void) {
  CU_pSuite s = CU_add_suite("e2e_steps", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "chat, OpenAI", test_chat_openai);
  CU_add_test(s, "chat, Anthropic", test_chat_anthropic);
  CU_add_test(s, "fail bodies in each dialect", test_fail_shapes);
  CU_add_test(s, "Retry-After in every form", test_retry_after_forms);
  CU_add_test(s, "garbage and truncate", test_garbage_and_truncate);
  CU_add_test(s, "drop and reset", test_drop_reset);
  CU_add_test(s, "hang until the client gives up", test_hang_and_client_abort);
  CU_add_test(s, "hang until the server stops", test_hang_until_shutdown);
  CU_add_test(s, "delay", test_delay);
  CU_add_test(s, "delay: each loop's timers, never early", test_delay_on_each_loop);
  CU_add_test(s, "stream faults, OpenAI", test_stream_openai);
  CU_add_test(s, "stream faults, Anthropic", test_stream_anthropic);
  CU_add_test(s, "stream interval and stall", test_stream_timing);
  CU_add_test(s, "chat asked to stream", test_chat_step_streams_when_asked);
  return CU_get_error();
}
