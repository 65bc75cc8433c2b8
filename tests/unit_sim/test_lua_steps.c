/* test_lua_steps.c - the step constructors: each field converted into the
   sim_step, and each wrong field refused at the scenario's line. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include "test_lua_util.h"

/* The step the one-provider scenario `provider = {<steps>}` plays to
   attempt 1. */
static sim_step *first_step(const char *steps) {
  char list[4096];
  snprintf(list, sizeof list, "{ %s }", steps);
  char *text = tl_provider_text(list);
  char err[SIM_ERRLEN];
  sim_step *st = tl_decide_once(text, 0, 1, err);
  free(text);
  return st;
}

static void test_chat(void) {
  sim_step *s = first_step("chat { content = 'hi', model = 'm-1', "
                           "usage = { input = 3, output = 4 }, "
                           "headers = { ['x-b'] = 'v', ['X-A'] = 2, ['x-f'] = 1.5 } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_CHAT);
  TL_ASSERT_STR(s->content, "hi");
  TL_ASSERT_STR(s->model, "m-1");
  CU_ASSERT_EQUAL(s->usage_in, 3);
  CU_ASSERT_EQUAL(s->usage_out, 4);
  CU_ASSERT_EQUAL_FATAL(s->nheaders, 3);
  TL_ASSERT_STR(s->headers[0].name, "X-A");
  TL_ASSERT_STR(s->headers[0].value, "2");
  TL_ASSERT_STR(s->headers[1].name, "x-b");
  TL_ASSERT_STR(s->headers[2].value, "1.5");
  sim__step_free(s);

  s = first_step("chat { usage = { prompt_tokens = 10, completion_tokens = 0 } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->usage_in, 10);
  CU_ASSERT_EQUAL(s->usage_out, 0);
  CU_ASSERT_PTR_NULL(s->content);
  CU_ASSERT_PTR_NULL(s->model);
  sim__step_free(s);

  s = first_step("chat { usage = { input_tokens = 5 } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->usage_in, 5);
  CU_ASSERT_EQUAL(s->usage_out, -1);
  sim__step_free(s);
}

static void test_tool_calls(void) {
  sim_step *s = first_step("chat { tool_calls = { { name = 'get_weather', arguments = { city = 'Paris' } },"
                           " { name = 'f', arguments = '{\"a\": ', id = 'tc_9' }, { name = 'g' } },"
                           " incomplete = 'content_filter' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL_FATAL(s->ntool_calls, 3);
  TL_ASSERT_STR(s->tool_calls[0].id, "call_1");
  TL_ASSERT_STR(s->tool_calls[0].name, "get_weather");
  TL_ASSERT_STR(s->tool_calls[0].arguments, "{\"city\":\"Paris\"}");
  TL_ASSERT_STR(s->tool_calls[1].id, "tc_9");
  TL_ASSERT_STR(s->tool_calls[1].arguments, "{\"a\": "); /* sent as written */
  TL_ASSERT_STR(s->tool_calls[2].id, "call_3");
  TL_ASSERT_STR(s->tool_calls[2].arguments, "{}");
  CU_ASSERT_EQUAL(s->finish, SIM_FINISH_FILTER);
  CU_ASSERT_PTR_NULL(s->content);
  sim__step_free(s);
  s = first_step("stream { content = 'a b', tool_calls = { { name = 'f' } }, incomplete = 'max_output_tokens' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->ntool_calls, 1);
  CU_ASSERT_EQUAL(s->finish, SIM_FINISH_LENGTH);
  sim__step_free(s);
}

static void test_stream(void) {
  sim_step *s = first_step("stream { chunks = { 'a', 'b', 'c' }, interval = 0.25, "
                           "drop_after = 2, model = 'm', no_end = true }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL_FATAL(s->nchunks, 3);
  TL_ASSERT_STR(s->chunks[0], "a");
  TL_ASSERT_STR(s->chunks[2], "c");
  CU_ASSERT_DOUBLE_EQUAL(s->interval, 0.25, 1e-12);
  CU_ASSERT_EQUAL(s->drop_after, 2);
  CU_ASSERT_EQUAL(s->stall_after, -1);
  CU_ASSERT_EQUAL(s->error_after, -1);
  CU_ASSERT_EQUAL(s->no_end, 1);
  sim__step_free(s);

  s = first_step("stream { content = 'one two', stall_after = 1, stall = 0.5 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  TL_ASSERT_STR(s->content, "one two");
  CU_ASSERT_PTR_NULL(s->chunks);
  CU_ASSERT_EQUAL(s->stall_after, 1);
  CU_ASSERT_DOUBLE_EQUAL(s->stall, 0.5, 1e-12);
  CU_ASSERT_EQUAL(s->no_end, 0);
  sim__step_free(s);

  s = first_step("stream { stall_after = 0, stall = -3 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->stall_after, 0);
  CU_ASSERT(s->stall < 0);
  sim__step_free(s);

  s = first_step("stream { stall_after = 2 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(s->stall < 0);
  sim__step_free(s);

  s = first_step("stream { error_after = 1, error = { status = 500, code = "
                 "'server_error', type = 'api_error', message = 'oops' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->error_after, 1);
  CU_ASSERT_EQUAL(s->status, 500);
  TL_ASSERT_STR(s->code, "server_error");
  TL_ASSERT_STR(s->type, "api_error");
  TL_ASSERT_STR(s->message, "oops");
  sim__step_free(s);

  /* error without error_after: after the last chunk */
  s = first_step("stream { chunks = { 'a', 'b' }, error = { message = 'x' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->error_after, 2);
  CU_ASSERT_EQUAL(s->status, 0);
  sim__step_free(s);

  s = first_step("stream { chunks = {} , usage = { output = 7 } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->nchunks, 0);
  CU_ASSERT_EQUAL(s->usage_out, 7);
  sim__step_free(s);
}

static void test_fail(void) {
  sim_step *s = first_step("fail { status = 429, code = 'rate_limit_exceeded', "
                           "type = 'requests', message = 'slow down', "
                           "retry_after = 1.5, retry_after_ms = 1500, "
                           "headers = { ['x-should-retry'] = 'true' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->status, 429);
  TL_ASSERT_STR(s->code, "rate_limit_exceeded");
  TL_ASSERT_STR(s->type, "requests");
  TL_ASSERT_STR(s->message, "slow down");
  CU_ASSERT_EQUAL(s->has_retry_after, 1);
  CU_ASSERT_DOUBLE_EQUAL(s->retry_after, 1.5, 1e-12);
  CU_ASSERT_PTR_NULL(s->retry_after_raw);
  CU_ASSERT_EQUAL(s->has_retry_after_ms, 1);
  CU_ASSERT_DOUBLE_EQUAL(s->retry_after_ms, 1500, 1e-12);
  CU_ASSERT_EQUAL(s->has_retry_after_date, 0);
  CU_ASSERT_EQUAL_FATAL(s->nheaders, 1);
  TL_ASSERT_STR(s->headers[0].value, "true");
  sim__step_free(s);

  s = first_step("fail { status = 503, retry_after = 'soon' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->has_retry_after, 0);
  TL_ASSERT_STR(s->retry_after_raw, "soon");
  sim__step_free(s);

  s = first_step("fail { status = 429, retry_after_date = 2 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->has_retry_after, 0);
  CU_ASSERT_EQUAL(s->has_retry_after_date, 1);
  CU_ASSERT_DOUBLE_EQUAL(s->retry_after_date, 2, 1e-12);
  CU_ASSERT_PTR_NULL(s->code);
  sim__step_free(s);

  s = first_step("fail { status = 500.0 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->status, 500);
  sim__step_free(s);
}

static void test_bare(void) {
  static const struct {
    const char *src;
    sim_step_kind kind;
  } cases[] = {
    {"hang {}", SIM_STEP_HANG},   {"hang()", SIM_STEP_HANG},
    {"drop {}", SIM_STEP_DROP},   {"reset {}", SIM_STEP_RESET},
    {"garbage {}", SIM_STEP_GARBAGE},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sim_step *s = first_step(cases[i].src);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->kind, cases[i].kind);
    CU_ASSERT_PTR_NULL(s->next);
    CU_ASSERT_PTR_NULL(s->body);
    sim__step_free(s);
  }
  sim_step *s = first_step("garbage { body = '<html>502</html>' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  TL_ASSERT_STR(s->body, "<html>502</html>");
  sim__step_free(s);
  s = first_step("drop { headers = { ['x-a'] = 'b' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->nheaders, 1);
  sim__step_free(s);
}

static void test_delay(void) {
  sim_step *s = first_step("delay { 2, chat { content = 'late' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT_DOUBLE_EQUAL(s->seconds, 2, 1e-12);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s->next);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_CHAT);
  TL_ASSERT_STR(s->next->content, "late");
  sim__step_free(s);

  s = first_step("delay { seconds = 0.5, step = fail { status = 500 } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_DOUBLE_EQUAL(s->seconds, 0.5, 1e-12);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->next->status, 500);
  sim__step_free(s);

  s = first_step("delay { hang {}, seconds = 1 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_HANG);
  sim__step_free(s);

  s = first_step("delay { seconds = 1 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_CHAT);
  sim__step_free(s);

  s = first_step("delay { 1, delay { 2, truncate { garbage {}, at = 3 } } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_DELAY);
  CU_ASSERT_EQUAL(s->next->next->kind, SIM_STEP_TRUNCATE);
  CU_ASSERT_EQUAL(s->next->next->next->kind, SIM_STEP_GARBAGE);
  CU_ASSERT_PTR_NULL(s->next->next->next->next);
  sim__step_free(s);
}

static void test_truncate(void) {
  sim_step *s = first_step("truncate { chat { content = 'abc' }, at = 10 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_TRUNCATE);
  CU_ASSERT_EQUAL(s->at, 10);
  CU_ASSERT_EQUAL(s->early_close, 0);
  TL_ASSERT_STR(s->next->content, "abc");
  sim__step_free(s);

  s = first_step("truncate { step = fail { status = 500 }, at = 0, mode = 'early-close' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->at, 0);
  CU_ASSERT_EQUAL(s->early_close, 1);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_FAIL);
  sim__step_free(s);

  s = first_step("truncate { at = 5, mode = 'short-body' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->early_close, 0);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_CHAT);
  sim__step_free(s);
}

/* The HTTP/2 steps: each one's fault and code; h2_window's bytes before
   the window shuts (`after`, into `at`), its hold and its body. */
static void test_h2(void) {
  sim_step *s = first_step("h2_reset {}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_H2);
  CU_ASSERT_EQUAL(s->h2_fault, SIM_H2_RST);
  CU_ASSERT_EQUAL(s->h2_code, 7u); /* refused_stream */
  sim__step_free(s);
  s = first_step("h2_goaway { code = 'enhance_your_calm' }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->h2_fault, SIM_H2_GOAWAY);
  CU_ASSERT_EQUAL(s->h2_code, 11u);
  sim__step_free(s);

  s = first_step("h2_window {}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_H2);
  CU_ASSERT_EQUAL(s->h2_fault, SIM_H2_WINDOW);
  CU_ASSERT_EQUAL(s->at, 0);
  CU_ASSERT(s->stall < 0); /* forever */
  CU_ASSERT_PTR_NOT_NULL_FATAL(s->next);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_CHAT);
  sim__step_free(s);
  s = first_step("h2_window { fail { status = 503 }, after = 12, stall = 1.5, headers = { ['x-a'] = 'b' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->h2_fault, SIM_H2_WINDOW);
  CU_ASSERT_EQUAL(s->at, 12);
  CU_ASSERT_DOUBLE_EQUAL(s->stall, 1.5, 1e-9);
  CU_ASSERT_EQUAL(s->nheaders, 1);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->next->status, 503);
  sim__step_free(s);
  s = first_step("h2_window { step = chat { content = 'x' }, stall = -3 }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT(s->stall < 0);
  TL_ASSERT_STR(s->next->content, "x");
  sim__step_free(s);
}

static void test_effect(void) {
  const char *text =
      "return scenario { name = 'e', effects = {\n"
      "  effect {},\n"
      "  effect { apply = false, respond = 'drop' },\n"
      "  effect { apply = true, respond = 'reset' },\n"
      "  effect { respond = 'hang' },\n"
      "  effect { respond = 'ok' },\n"
      "  effect { respond = fail { status = 500 } },\n"
      "  delay { 1, effect { respond = delay { 2, chat{} } } },\n"
      "} }";
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(tl_load(text, &sc, &path, err), 0);
  sim_step *s[7];
  for (int i = 0; i < 7; i++) {
    sim_req r = tl_req(i + 1);
    r.dialect = SIM_DIALECT_EFFECT;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, -1, &r, &s[i], err), 0);
  }
  CU_ASSERT_EQUAL(s[0]->kind, SIM_STEP_EFFECT);
  CU_ASSERT_EQUAL(s[0]->apply, 1);
  CU_ASSERT_PTR_NULL(s[0]->next);
  CU_ASSERT_EQUAL(s[1]->apply, 0);
  CU_ASSERT_EQUAL(s[1]->next->kind, SIM_STEP_DROP);
  CU_ASSERT_EQUAL(s[2]->apply, 1);
  CU_ASSERT_EQUAL(s[2]->next->kind, SIM_STEP_RESET);
  CU_ASSERT_EQUAL(s[3]->next->kind, SIM_STEP_HANG);
  CU_ASSERT_PTR_NULL(s[4]->next);
  CU_ASSERT_EQUAL(s[5]->next->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s[5]->next->status, 500);
  CU_ASSERT_EQUAL(s[6]->kind, SIM_STEP_DELAY);
  CU_ASSERT_EQUAL(s[6]->next->kind, SIM_STEP_EFFECT);
  CU_ASSERT_EQUAL(s[6]->next->next->kind, SIM_STEP_DELAY);
  for (int i = 0; i < 7; i++) sim__step_free(s[i]);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* Wrong fields: the message and the line of the constructor call (line 3
   of the one-provider scenario). */
static const struct {
  const char *src;
  const char *msg;
} bad_steps[] = {
  {"chat { contnet = 'x' }", "chat: unknown field 'contnet' (did you mean 'content'?)"},
  {"chat { colour = 'x' }", "chat: unknown field 'colour'"},
  {"chat { content = 1 }", "chat: field 'content' must be a string, got number"},
  {"chat { model = true }", "chat: field 'model' must be a string, got boolean"},
  {"chat { 'x' }", "chat: takes named fields only, got a value at [1]"},
  {"chat 'x'", "chat: expected a table of fields, as in chat{...}, got string"},
  {"chat({}, {})", "chat: takes one table, as in chat{...}"},
  {"chat { usage = 3 }", "chat: field 'usage' must be a table, got number"},
  {"chat { usage = { input = -1 } }", "chat: usage.input must be a non-negative integer"},
  {"chat { usage = { input = 1.5 } }", "chat: usage.input must be a non-negative integer"},
  {"chat { usage = { inputs = 1 } }", "chat: usage: unknown field 'inputs' (did you mean 'input'?)"},
  {"chat { [true] = 1 }", "chat: unexpected boolean key"},
  {"chat { headers = 'x' }", "chat: field 'headers' must be a table, got string"},
  {"chat { headers = { 'x' } }", "chat: headers: names must be header names as strings"},
  {"chat { headers = { ['bad name'] = 'x' } }", "chat: headers: names must be header names as strings"},
  {"chat { headers = { ['x-a'] = {} } }", "chat: headers: value of 'x-a' must be a string, got table"},
  {"chat { headers = { ['x-a'] = 'a\\r\\nb: c' } }", "chat: headers: value of 'x-a' has a line break or is too long"},
  {"chat { headers = { ['Content-Length'] = '5' } }", "chat: headers: 'Content-Length' is set by the server"},
  {"stream { chunks = 'x' }", "stream: field 'chunks' must be a list of strings, got string"},
  {"stream { chunks = { 1 } }", "stream: chunks[1] must be a string, got number"},
  {"stream { chunks = { a = 'x' } }", "stream: chunks must be a list of strings"},
  {"stream { chunks = { [1] = 'a', [3] = 'c' } }", "stream: chunks must be a list without holes"},
  {"stream { chunks = { 'a' }, content = 'b' }", "stream: give chunks or content, not both"},
  {"stream { interval = -1 }", "stream: field 'interval' must be a number of seconds >= 0, got -1.0"},
  {"stream { interval = 'fast' }", "stream: field 'interval' must be a number of seconds >= 0, got string"},
  {"stream { drop_after = -1 }", "stream: field 'drop_after' must be between 0 and 2147483647, got -1"},
  {"stream { drop_after = 1.5 }", "stream: field 'drop_after' must be an integer, got number"},
  {"stream { stall = 1 }", "stream: 'stall' needs 'stall_after' (the chunk count after which the stream stalls)"},
  {"stream { stall_after = 1, stall = 'long' }", "stream: field 'stall' must be a number of seconds (negative: forever), got string"},
  {"stream { error = { status = 500 } }", "stream: 'error' needs 'error_after' (the chunk count after which the error event is sent)"},
  {"stream { error_after = 1, error = 'x' }", "stream: field 'error' must be a table, got string"},
  {"stream { error_after = 1, error = { code = 'x', bogus = 1 } }", "stream: error: unknown field 'bogus'"},
  {"stream { error_after = 1, error = { status = 99 } }", "stream: error: field 'status' must be between 100 and 599, got 99"},
  {"stream { no_end = 1 }", "stream: field 'no_end' must be true or false, got number"},
  {"stream { stal_after = 1 }", "stream: unknown field 'stal_after' (did you mean 'stall_after'?)"},
  {"chat { tool_calls = 'x' }", "chat: field 'tool_calls' must be a list of tables, got string"},
  {"chat { tool_calls = {} }", "chat: tool_calls must list 1 to 64 calls"},
  {"chat { tool_calls = { name = 'f' } }", "chat: tool_calls must list 1 to 64 calls"},
  {"chat { tool_calls = { 'f' } }", "chat: tool_calls[1] must be a table"},
  {"chat { tool_calls = { { arguments = {} } } }", "chat: tool_calls[1]: 'name' must be a non-empty string"},
  {"chat { tool_calls = { { name = '' } } }", "chat: tool_calls[1]: 'name' must be a non-empty string"},
  {"chat { tool_calls = { { name = 'f', argument = {} } } }", "chat: tool_calls[1]: unknown field 'argument' (did you mean 'arguments'?)"},
  {"chat { tool_calls = { { name = 'f', arguments = 3 } } }", "chat: tool_calls[1]: 'arguments' must be a table or a string of JSON text"},
  {"chat { tool_calls = { { name = 'f', id = 7 } } }", "chat: tool_calls[1]: 'id' must be a string"},
  {"stream { tool_calls = { { name = 'f' }, 5 } }", "stream: tool_calls[2] must be a table"},
  {"chat { incomplete = 'length' }", "chat: 'incomplete' must be \"max_output_tokens\" or \"content_filter\""},
  {"stream { incomplete = true }", "stream: 'incomplete' must be \"max_output_tokens\" or \"content_filter\""},
  {"fail {}", "fail: field 'status' is required, as in fail{status = 503}"},
  {"fail { status = 600 }", "fail: field 'status' must be between 200 and 599, got 600"},
  /* issue 11: a 1xx is an interim answer, the client would hang waiting. */
  {"fail { status = 100 }", "fail: field 'status' must be between 200 and 599, got 100"},
  {"fail { status = 103 }", "fail: field 'status' must be between 200 and 599, got 103"},
  /* issue 11: a date past year 9999 was formatted from uninitialised memory. */
  {"fail { status = 429, retry_after_date = 1e17 }", "fail: field 'retry_after_date' must be a number of seconds ahead, between -1e9 and 1e9, got 1e+17"},
  {"fail { status = 429, retry_after_date = -1e17 }", "fail: field 'retry_after_date' must be a number of seconds ahead, between -1e9 and 1e9, got -1e+17"},
  {"fail { status = 429, retry_after_date = 0/0 }", "fail: field 'retry_after_date' must be a number of seconds ahead, between -1e9 and 1e9, got *"},
  /* issue 11: NaN stalled forever; it is refused as in every number field. */
  {"stream { stall_after = 1, stall = 0/0 }", "stream: field 'stall' must be a number of seconds (negative: forever), got nan"},
  {"fail { status = '429' }", "fail: field 'status' must be an integer, got string"},
  {"fail { status = 429, retry_after = -1 }", "fail: field 'retry_after' must be a number of seconds >= 0 (or a string sent as is), got -1.0"},
  {"fail { status = 429, retry_after = {} }", "fail: field 'retry_after' must be a number of seconds >= 0 (or a string sent as is), got table"},
  {"fail { status = 429, retry_after = 'a\\nb' }", "fail: retry_after has a line break or is too long"},
  {"fail { status = 429, retry_after = 1, retry_after_date = 1 }", "fail: give retry_after or retry_after_date, not both (both are the Retry-After header)"},
  {"fail { status = 429, retry_after_ms = -5 }", "fail: field 'retry_after_ms' must be a number of milliseconds >= 0, got -5.0"},
  {"fail { status = 429, code = 5 }", "fail: field 'code' must be a string, got number"},
  {"fail { status = 429, retry = 1 }", "fail: unknown field 'retry'"},
  {"hang { seconds = 1 }", "hang: unknown field 'seconds'"},
  {"drop { 1 }", "drop: takes named fields only, got a value at [1]"},
  {"reset { now = true }", "reset: unknown field 'now'"},
  {"delay {}", "delay: the seconds are required, as in delay{2, chat{}}"},
  {"delay { -1, chat{} }", "delay: the seconds must be a number >= 0, got -1.0"},
  {"delay { 'x', chat{} }", "delay: [1] must be the seconds or the step, got string"},
  {"delay { 1, 'x' }", "delay: the wrapped step must be a step such as chat{...}, got string"},
  {"delay { 1, chat{}, seconds = 2 }", "delay: the seconds are given twice (at [1] and as 'seconds')"},
  {"delay { 1, chat{}, step = chat{} }", "delay: the step is given twice (at [2] and as 'step')"},
  {"delay { chat{}, chat{}, seconds = 1 }", "delay: unexpected value at [2]"},
  {"delay { 1, chat{}, 3 }", "delay: unexpected value at [3]"},
  {"delay { 1, { content = 'x' } }", "delay: the wrapped step must be a step such as chat{...}, got table"},
  {"truncate { chat{} }", "truncate: field 'at' (bytes of the body sent) is required"},
  {"truncate { chat{}, at = -1 }", "truncate: field 'at' must be between 0 and 2147483647, got -1"},
  {"truncate { hang{}, at = 1 }", "truncate: can cut chat, fail or garbage, not hang"},
  {"truncate { stream{}, at = 1 }", "truncate: can cut chat, fail or garbage, not stream"},
  {"truncate { chat{}, at = 1, mode = 'cut' }", "truncate: mode must be \"short-body\" or \"early-close\""},
  {"h2_reset { code = 'nope' }", "h2_reset: unknown code 'nope' (no_error, protocol_error, internal_error, refused_stream, cancel, enhance_your_calm)"},
  {"h2_goaway { code = 7 }", "h2_goaway: code must be a string (refused_stream, internal_error, ...)"},
  {"h2_window { after = -1 }", "h2_window: field 'after' must be between 0 and 2147483647, got -1"},
  {"h2_window { after = 1.5 }", "h2_window: field 'after' must be an integer, got number"},
  {"h2_window { stall = 'long' }", "h2_window: field 'stall' must be a number of seconds (negative: forever), got string"},
  {"h2_window { stall = 0/0 }", "h2_window: field 'stall' must be a number of seconds (negative: forever), got number"},
  {"h2_window { hang{} }", "h2_window: can hold back chat, fail or garbage, not hang"},
  {"h2_window { stream{} }", "h2_window: can hold back chat, fail or garbage, not stream"},
  {"h2_window { aftr = 1 }", "h2_window: unknown field 'aftr' (did you mean 'after'?)"},
  {"garbage { body = 1 }", "garbage: field 'body' must be a string, got number"},
  {"garbage { status = 502 }", "garbage: unknown field 'status'"},
  {"delay{1,delay{1,delay{1,delay{1,delay{1,delay{1,delay{1,delay{1,chat{}}}}}}}}}", "delay: steps nest deeper than 8"},
};

/* issue 11: a large body is one shared copy, not one per decision: two
   arrivals playing the same 1 MB string (made per request or at load) see
   the same bytes at the same address. */
static void test_large_bodies_shared(void) {
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  int rc = tl_load("local big = string.rep('ab\"c', 1 << 18)\n"
                   "local page = string.rep('<p>', 1 << 18)\n"
                   "return scenario { name = 'big', providers = {\n"
                   "  { name = 'a', fn = function(req) return chat { content = big } end },\n"
                   "  { name = 'b', garbage { body = page }, garbage { body = page } },\n"
                   "  { name = 'c', fn = function(req) return chat { content = 'small' } end } } }",
                   &sc, &path, err);
  CU_ASSERT_EQUAL_FATAL(rc, SIM_OK);
  for (int p = 0; p < 2; p++) {
    sim_req r1 = tl_req(1), r2 = tl_req(2);
    sim_step *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL(sim__scenario_decide(sc, p, &r1, &s1, err), SIM_OK);
    CU_ASSERT_EQUAL(sim__scenario_decide(sc, p, &r2, &s2, err), SIM_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s2);
    const char *t1 = p == 0 ? s1->content : s1->body, *t2 = p == 0 ? s2->content : s2->body;
    CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
    CU_ASSERT_EQUAL(strlen(t1), (size_t)(p == 0 ? 4 : 3) << 18);
    CU_ASSERT(t1 == t2); /* one copy */
    sim__step_free(s1);
    sim__step_free(s2);
  }
  /* Small texts stay private copies. */
  sim_req r = tl_req(1);
  sim_step *s = NULL;
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, 2, &r, &s, err), SIM_OK);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  TL_ASSERT_STR(s->content, "small");
  CU_ASSERT_PTR_NULL(s->content_blob);
  sim__step_free(s);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* issue 30: a content under SIM_BLOB_MIN is copied into the step's own
   block (one allocation), one of SIM_BLOB_MIN bytes is the shared blob; a
   wrapped step's content too, and a NUL inside is kept as the Lua string
   has it. Freeing each is checked by the ASan run. */
static void test_short_content_inline(void) {
  char src[256];
  snprintf(src, sizeof src, "chat { content = string.rep('x', %zu) }", SIM_BLOB_MIN - 1);
  sim_step *s = first_step(src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->content_inline, 1);
  CU_ASSERT_PTR_NULL(s->content_blob);
  CU_ASSERT(s->content == (char *)(s + 1));
  CU_ASSERT_EQUAL(strlen(s->content), SIM_BLOB_MIN - 1);
  sim__step_free(s);

  snprintf(src, sizeof src, "chat { content = string.rep('x', %zu) }", SIM_BLOB_MIN);
  s = first_step(src);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->content_inline, 0);
  CU_ASSERT_PTR_NOT_NULL(s->content_blob);
  CU_ASSERT_EQUAL(strlen(s->content), SIM_BLOB_MIN);
  sim__step_free(s);

  s = first_step("delay { 1, chat { content = 'in\\0side' } }");
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s->next);
  CU_ASSERT_EQUAL(s->content_inline, 0); /* delay{} has no content */
  CU_ASSERT_PTR_NULL(s->content);
  CU_ASSERT_EQUAL(s->next->content_inline, 1);
  CU_ASSERT_EQUAL(memcmp(s->next->content, "in\0side", 8), 0);
  sim__step_free(s);
}

static void test_bad_steps(void) {
  for (size_t i = 0; i < sizeof bad_steps / sizeof bad_steps[0]; i++) {
    char list[512];
    snprintf(list, sizeof list, "{\n %s }", bad_steps[i].src);
    char *text = tl_provider_text(list);
    int ok = tl_load_fails(text, 4, bad_steps[i].msg);
    if (!ok) fprintf(stderr, "  (case %zu: %s)\n", i, bad_steps[i].src);
    CU_ASSERT(ok);
    free(text);
  }
}

static const struct {
  const char *src;
  const char *msg;
} bad_effects[] = {
  {"effect { respond = 'explode' }", "effect: respond must be \"ok\", \"drop\", \"reset\", \"hang\" or a step, got \"explode\""},
  {"effect { respond = 5 }", "effect: field 'respond' must be \"ok\", \"drop\", \"reset\", \"hang\" or a step, got number"},
  {"effect { respond = effect{} }", "effect: respond cannot be another effect{}"},
  {"effect { apply = 'yes' }", "effect: field 'apply' must be true or false, got string"},
  {"effect { aply = true }", "effect: unknown field 'aply' (did you mean 'apply'?)"},
  {"effect { applied = true }", "effect: unknown field 'applied'"},
  {"truncate { effect{}, at = 1 }", "truncate: can cut chat, fail or garbage, not effect"},
};

static void test_bad_effects(void) {
  for (size_t i = 0; i < sizeof bad_effects / sizeof bad_effects[0]; i++) {
    char text[512];
    snprintf(text, sizeof text, "return scenario {\n name = 'e',\n effects = {\n"
             "  %s } }", bad_effects[i].src);
    int ok = tl_load_fails(text, 4, bad_effects[i].msg);
    if (!ok) fprintf(stderr, "  (case %zu: %s)\n", i, bad_effects[i].src);
    CU_ASSERT(ok);
  }
}

/* Steps are read-only values with a readable kind; a wrong field inside a
   provider function points at the function's line. */
static void test_step_values(void) {
  CU_ASSERT(tl_load_fails("local s = chat{}\ns.content = 'x'", 2,
                          "steps are read-only: build a new one instead"));
  CU_ASSERT(tl_load_fails("local s = chat{}\nsetmetatable(s, {})", 2,
                          "bad argument #1 to 'setmetatable' (table expected, "
                          "got fusebox.step)"));
  const char *text =
      "local s = stream { chunks = {'a', 'b'} }\n"
      "assert(getmetatable(s) == 'step')\n"
      "assert(tostring(s) == 'stream{...}')\n"
      "local c = s.chunks; c[1] = 'changed'\n"
      "return scenario { name = 'x', provider = function(req)\n"
      "  if req.attempt == 2 then\n"
      "    return chat { bogus = 1 }\n"
      "  end\n"
      "  return chat { content = s.kind .. ':' .. s.chunks[1] .. tostring(s.nothing) } end }";
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(tl_load(text, &sc, &path, err), 0);
  sim_req r = tl_req(1);
  sim_step *st;
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  TL_ASSERT_STR(st->content, "stream:anil");
  sim__step_free(st);
  r.attempt = 2;
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, &r, &st, err), SIM_ELUA);
  CU_ASSERT_PTR_NULL(st);
  CU_ASSERT(tl_err_is(err, path, 7, "chat: unknown field 'bogus'"));
  sim__scenario_free(sc);
  tl_remove(path);
}

int suite_lua_steps(void) {
  CU_pSuite s = CU_add_suite("lua_steps", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "chat", test_chat) ||
      !CU_add_test(s, "tool calls and incomplete endings", test_tool_calls) ||
      !CU_add_test(s, "stream", test_stream) ||
      !CU_add_test(s, "fail", test_fail) ||
      !CU_add_test(s, "hang_drop_reset_garbage", test_bare) ||
      !CU_add_test(s, "delay", test_delay) ||
      !CU_add_test(s, "truncate", test_truncate) ||
      !CU_add_test(s, "h2_reset_goaway_window", test_h2) ||
      !CU_add_test(s, "effect", test_effect) ||
      !CU_add_test(s, "bad_steps", test_bad_steps) ||
      !CU_add_test(s, "large_bodies_shared", test_large_bodies_shared) ||
      !CU_add_test(s, "short_content_inline", test_short_content_inline) ||
      !CU_add_test(s, "bad_effects", test_bad_effects) ||
      !CU_add_test(s, "step_values", test_step_values))
    return CU_get_error();
  return 0;
}
