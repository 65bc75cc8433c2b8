/*
 * test_dialects.c - every step kind in every API the fake provider speaks,
 * at the paths real SDKs call: the answer in the API's shape, its errors,
 * its stream endings, its tool calls, and the API named in the trace.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "e2e_util.h"

#define CHAT_BODY "{\"model\":\"m1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
#define RESP_BODY "{\"model\":\"m1\",\"input\":\"hi\""
#define GEM_BODY "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}]}"
#define BEDROCK_BODY "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}"
#define OLLAMA_GEN_BODY "{\"model\":\"llama3.2\",\"prompt\":\"hi\""

/* One API at one path, with what its answers look like. */
typedef struct api {
  const char *dialect;      /* as the trace names it */
  const char *method;
  const char *path;
  const char *stream_path;  /* NULL: same path, "stream":true in the body */
  const char *body;         /* without the closing brace (stream is added) */
  int streams;              /* 1: answers with SSE when asked */
  const char *done;         /* in a clean stream, absent with no_end */
  const char *err;          /* in a stream ended by error_after */
  const char *cut;          /* in an answer cut at max tokens */
  const char *tool;         /* in an answer with a tool call (NULL: no tools) */
  const char *tool_delta;   /* in a streamed tool call */
  const char *filter;       /* in an answer cut by the content filter */
  const char *ctype;        /* the stream's content type (NULL: text/event-stream) */
  const char *unstream;     /* added to the body of a call that does not stream
                               (Ollama streams unless told not to) */
} api;

static const api APIS[] = {
    {"openai-chat", "POST", "/v1/chat/completions", NULL, CHAT_BODY, 1, "[DONE]",
     "\"error\"", "\"length\"", "\"tool_calls\"", "\"arguments\":\"{\\\"city\\\"",
     "content_filter", NULL, NULL},
    {"openai-chat", "POST", "/openai/v1/chat/completions", NULL, CHAT_BODY, 1, "[DONE]",
     "\"error\"", "\"length\"", "\"tool_calls\"", "\"arguments\":\"{\\\"city\\\"",
     "content_filter", NULL, NULL},
    {"openai-chat", "POST", "/openai/deployments/dep1/chat/completions?api-version=2024-10-21",
     NULL, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]", 1, "[DONE]", "\"error\"",
     "\"length\"", "\"tool_calls\"", "\"arguments\":\"{\\\"city\\\"", "content_filter", NULL, NULL},
    {"openai-responses", "POST", "/v1/responses", NULL, RESP_BODY, 1, "response.completed",
     "response.failed", "response.incomplete", "\"function_call\"",
     "response.function_call_arguments.delta", "content_filter", NULL, NULL},
    {"openai-responses", "POST", "/openai/v1/responses", NULL, RESP_BODY, 1,
     "response.completed", "response.failed", "response.incomplete", "\"function_call\"",
     "response.function_call_arguments.delta", "content_filter", NULL, NULL},
    {"anthropic", "POST", "/v1/messages", NULL, CHAT_BODY, 1, "message_stop",
     "event: error", "max_tokens", "\"tool_use\"", "input_json_delta", "refusal", NULL, NULL},
    {"anthropic", "POST", "/messages", NULL, CHAT_BODY, 1, "message_stop", "event: error",
     "max_tokens", "\"tool_use\"", "input_json_delta", "refusal", NULL, NULL},
    {"openai-completions", "POST", "/v1/completions", NULL,
     "{\"model\":\"m1\",\"prompt\":\"hi\"", 1, "[DONE]", "\"error\"", "\"length\"", NULL, NULL,
     "content_filter", NULL, NULL},
    {"embeddings", "POST", "/v1/embeddings", NULL, "{\"model\":\"e1\",\"input\":[\"a\",\"b\"]", 0,
     NULL, NULL, NULL, NULL, NULL, "content_filter", NULL, NULL},
    {"models", "GET", "/v1/models", NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL,
     "content_filter", NULL, NULL},
    {"gemini", "POST", "/v1beta/models/gemini-2.0-flash:generateContent",
     "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", GEM_BODY, 1,
     "\"finishReason\":\"STOP\"", "\"error\"", "MAX_TOKENS", "\"functionCall\"",
     "\"functionCall\"", "SAFETY", NULL, NULL},
    {"ollama-chat", "POST", "/api/chat", NULL, CHAT_BODY, 1, "\"done\":true", "{\"error\":",
     "\"done_reason\":\"length\"", "\"tool_calls\"", "\"arguments\":{\"city\"", "\"stop\"",
     "application/x-ndjson", ",\"stream\":false"},
    {"ollama-generate", "POST", "/api/generate", NULL, OLLAMA_GEN_BODY, 1, "\"done\":true",
     "{\"error\":", "\"done_reason\":\"length\"", NULL, NULL, "\"stop\"",
     "application/x-ndjson", ",\"stream\":false"},
    {"cohere", "POST", "/v2/chat", NULL, CHAT_BODY, 1, "\"finish_reason\":\"COMPLETE\"",
     "\"finish_reason\":\"ERROR\"", "\"MAX_TOKENS\"", "\"tool_calls\"", "tool-call-delta",
     "\"ERROR\"", NULL, NULL},
    {"bedrock-converse", "POST", "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
     "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream", BEDROCK_BODY, 1,
     "messageStop", ":exception-type", "\"max_tokens\"", "\"toolUse\"",
     "\"toolUse\":{\"input\"", "\"content_filtered\"", "application/vnd.amazon.eventstream",
     NULL},
};
#define NAPIS (sizeof APIS / sizeof APIS[0])

/* Where needle is in r's body, read by its length (Bedrock's binary event
   stream holds NUL bytes); NULL when absent. */
static const char *has(const e2e_resp *r, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; r->body != NULL && n <= r->body_len && i <= r->body_len - n; i++)
    if (memcmp(r->body + i, needle, n) == 0) return r->body + i;
  return NULL;
}

static e2e_server *serve(const char *steps) {
  char lua[4096];
  snprintf(lua, sizeof lua, "return scenario { name = 't', provider = { %s } }", steps);
  return e2e_start(lua, 1.0);
}

/* One request to the API, streaming or not. */
static void call(e2e_server *s, const api *a, int stream, long timeout_ms, e2e_resp *r) {
  char body[512];
  const char *path = a->path;
  const char *b = NULL;
  if (a->body != NULL) {
    if (a->stream_path != NULL) {
      if (stream) path = a->stream_path;
      snprintf(body, sizeof body, "%s", a->body);
    } else {
      snprintf(body, sizeof body, "%s%s}", a->body,
               stream ? ",\"stream\":true" : a->unstream ? a->unstream : "");
    }
    b = body;
  }
  e2e_request(s, a->method, path, b, NULL, timeout_ms, r);
}

/* The answer's text (or, for embeddings and models, a marker of their
   shape) from a non-streaming body; NULL when the shape is wrong. */
static const char *text_of(const api *a, cJSON *j) {
  static char buf[256];
  const char *d = a->dialect;
  cJSON *v = NULL;
  if (strcmp(d, "openai-chat") == 0)
    v = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "message"), "content");
  else if (strcmp(d, "openai-completions") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "choices"), 0), "text");
  else if (strcmp(d, "openai-responses") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "output"), 0), "content"), 0), "text");
  else if (strcmp(d, "anthropic") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "content"), 0), "text");
  else if (strcmp(d, "gemini") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "candidates"), 0), "content"), "parts"), 0), "text");
  else if (strcmp(d, "ollama-chat") == 0)
    v = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "message"), "content");
  else if (strcmp(d, "ollama-generate") == 0)
    v = cJSON_GetObjectItem(j, "response");
  else if (strcmp(d, "bedrock-converse") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "output"), "message"), "content"), 0), "text");
  else if (strcmp(d, "cohere") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "message"), "content"), 0), "text");
  else if (strcmp(d, "embeddings") == 0) {
    cJSON *data = cJSON_GetObjectItem(j, "data");
    snprintf(buf, sizeof buf, "%d vectors of %d", cJSON_GetArraySize(data),
             cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(data, 1), "embedding")));
    return buf;
  } else if (strcmp(d, "models") == 0)
    v = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "data"), 0), "id");
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* 1 when body is an error body in the API's shape for status. */
static int is_error_shape(const api *a, const char *body, int status) {
  cJSON *j = cJSON_Parse(body);
  cJSON *e = cJSON_GetObjectItem(j, "error");
  int ok = cJSON_IsObject(e);
  if (strncmp(a->dialect, "ollama", 6) == 0) /* {"error":"..."} and nothing else */
    ok = cJSON_IsString(e) && cJSON_GetArraySize(j) == 1;
  else if (strcmp(a->dialect, "cohere") == 0 || strcmp(a->dialect, "bedrock-converse") == 0)
    /* {"message":"..."} */
    ok = e == NULL && cJSON_IsString(cJSON_GetObjectItem(j, "message"));
  else if (strcmp(a->dialect, "anthropic") == 0)
    ok = ok && cJSON_IsString(cJSON_GetObjectItem(j, "type")) &&
         cJSON_IsString(cJSON_GetObjectItem(e, "type"));
  else if (strcmp(a->dialect, "gemini") == 0)
    ok = ok && cJSON_GetObjectItem(e, "code") != NULL &&
         (int)cJSON_GetObjectItem(e, "code")->valuedouble == status &&
         cJSON_IsString(cJSON_GetObjectItem(e, "status"));
  else
    ok = ok && cJSON_IsString(cJSON_GetObjectItem(e, "message")) &&
         cJSON_GetObjectItem(e, "type") != NULL;
  cJSON_Delete(j);
  return ok;
}

static void check_dialect(e2e_server *s, const api *a) {
  e2e_stop(s);
  const char *d = e2e_str(e2e_event(s, "arrive", 0), "dialect");
  CU_ASSERT_PTR_NOT_NULL(d);
  if (d != NULL && strcmp(d, a->dialect) != 0) {
    fprintf(stderr, "\n  %s: trace names %s\n", a->path, d);
    CU_FAIL("dialect in the trace");
  }
}

#define EXPECT(cond) do { if (!(cond)) { fprintf(stderr, "\n  %s %s: %s\n", a->method, a->path, #cond); CU_FAIL(#cond); } } while (0)

static void test_chat_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    e2e_server *s = serve("chat { content = 'hello there', model = 'm9' }");
    e2e_resp r;
    call(s, a, 0, 2000, &r);
    EXPECT(r.status == 200);
    cJSON *j = cJSON_Parse(r.body);
    const char *t = text_of(a, j);
    if (strcmp(a->dialect, "embeddings") == 0) EXPECT(t && strcmp(t, "2 vectors of 8") == 0);
    else if (strcmp(a->dialect, "models") == 0) EXPECT(t && strcmp(t, "m9") == 0);
    else EXPECT(t && strcmp(t, "hello there") == 0);
    cJSON_Delete(j);
    e2e_resp_clear(&r);
    check_dialect(s, a);
    e2e_free(s);
  }
}

static void test_fail_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    e2e_server *s = serve("fail { status = 429, retry_after = 2 }");
    e2e_resp r;
    call(s, a, 0, 2000, &r);
    EXPECT(r.status == 429);
    EXPECT(is_error_shape(a, r.body, 429));
    if (strcmp(a->dialect, "gemini") == 0) {
      EXPECT(has(&r, "\"RESOURCE_EXHAUSTED\"") != NULL);
      EXPECT(has(&r, "\"retryDelay\":\"2s\"") != NULL);
      EXPECT(has(&r, "google.rpc.RetryInfo") != NULL);
      EXPECT(e2e_header(&r, "retry-after") == NULL);
    } else {
      const char *ra = e2e_header(&r, "retry-after");
      EXPECT(ra && strcmp(ra, "2") == 0);
    }
    e2e_resp_clear(&r);
    check_dialect(s, a);
    EXPECT(e2e_num(e2e_end_of(s, 0), "retry_after_ms") == 2000);
    e2e_free(s);
  }
}

/* The first row of the API named dialect. */
static const api *api_named(const char *dialect) {
  for (size_t i = 0; i < NAPIS; i++)
    if (strcmp(APIS[i].dialect, dialect) == 0) return &APIS[i];
  CU_FAIL_FATAL("no such API row");
  return NULL;
}

static void test_gemini_statuses(void) {
  const api *a = api_named("gemini");
  static const struct { int status; const char *name; } rows[] = {
      {503, "UNAVAILABLE"}, {400, "INVALID_ARGUMENT"}, {403, "PERMISSION_DENIED"},
      {401, "UNAUTHENTICATED"}, {500, "INTERNAL"}, {404, "NOT_FOUND"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char step[64];
    snprintf(step, sizeof step, "fail { status = %d }", rows[i].status);
    e2e_server *s = serve(step);
    e2e_resp r;
    call(s, a, 0, 2000, &r);
    EXPECT(r.status == rows[i].status);
    char want[64];
    snprintf(want, sizeof want, "\"status\":\"%s\"", rows[i].name);
    EXPECT(has(&r, want) != NULL);
    EXPECT(has(&r, "retryDelay") == NULL);
    e2e_resp_clear(&r);
    e2e_free(s);
  }
  /* retry_after_ms and retry_after_date advise a wait too */
  e2e_server *s = serve("fail { status = 429, retry_after_ms = 1500 }");
  e2e_resp r;
  call(s, a, 0, 2000, &r);
  EXPECT(has(&r, "\"retryDelay\":\"1.5s\"") != NULL);
  e2e_resp_clear(&r);
  e2e_stop(s);
  EXPECT(e2e_num(e2e_end_of(s, 0), "retry_after_ms") == 1500);
  e2e_free(s);
}

/* hang, delay, drop, reset, truncate (both), garbage: the same on every API. */
static void test_transport_steps_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    e2e_server *s = serve("hang {}, delay { 0.2, chat { content = 'late' } }, drop {}, reset {},"
                          " truncate { chat {}, at = 20 },"
                          " truncate { chat {}, at = 20, mode = 'early-close' }, garbage {}");
    e2e_resp r;
    call(s, a, 0, 300, &r); /* hang */
    EXPECT(r.rc == CURLE_OPERATION_TIMEDOUT);
    e2e_resp_clear(&r);
    call(s, a, 0, 3000, &r); /* delay: the whole answer, late */
    if (!(r.rc == CURLE_OK && r.status == 200 && r.elapsed_ms >= 150))
      fprintf(stderr, "\n  delay: rc %d status %ld after %.0f ms, %zu body bytes\n", (int)r.rc,
              r.status, r.elapsed_ms, r.body_len);
    EXPECT(r.rc == CURLE_OK && r.status == 200 && r.elapsed_ms >= 150);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r); /* drop */
    EXPECT(r.rc != CURLE_OK);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r); /* reset */
    EXPECT(r.rc != CURLE_OK);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r); /* truncate, short body */
    EXPECT(r.rc == CURLE_OK && r.status == 200 && r.body_len == 20);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r); /* truncate, early close */
    EXPECT(r.rc != CURLE_OK);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r); /* garbage */
    cJSON *j = cJSON_Parse(r.body);
    EXPECT(r.status == 200 && j == NULL);
    cJSON_Delete(j);
    e2e_resp_clear(&r);
    e2e_stop(s);
    static const char *hows[] = {NULL, "complete", "dropped", "reset", "complete", "early_close", "complete"};
    for (int k = 1; k < 7; k++) {
      const char *how = e2e_str(e2e_end_of(s, k), "how");
      if (!(how && strcmp(how, hows[k]) == 0))
        fprintf(stderr, "\n  step %d: trace says how=%s, want %s\n", k, how ? how : "(none)", hows[k]);
      EXPECT(how && strcmp(how, hows[k]) == 0);
    }
    e2e_free(s);
  }
}

/* Every stream option, in each API's own stream (or its one-body
   equivalent where the API never streams). */
static void test_stream_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    e2e_server *s = serve(
        "stream { content = 'one two three four' },"
        " stream { content = 'one two three four', drop_after = 2 },"
        " stream { content = 'one two three four', stall_after = 1, stall = 0.2 },"
        " stream { content = 'one two three four', error_after = 1, error = { status = 503 } },"
        " stream { content = 'one two three four', no_end = true },"
        " stream { content = 'one two three four', incomplete = 'max_output_tokens' },"
        " stream { content = 'one two', interval = 0.1 }");
    e2e_resp r;
    call(s, a, 1, 2000, &r); /* clean */
    EXPECT(r.rc == CURLE_OK && r.status == 200);
    if (a->streams) {
      EXPECT(has(&r, a->done) != NULL);
      EXPECT(has(&r, " three") != NULL);
      const char *ct = e2e_header(&r, "content-type");
      const char *want = a->ctype ? a->ctype : "text/event-stream";
      EXPECT(ct && strncmp(ct, want, strlen(want)) == 0);
    } else {
      cJSON *j = cJSON_Parse(r.body);
      EXPECT(text_of(a, j) != NULL);
      cJSON_Delete(j);
    }
    e2e_resp_clear(&r);
    call(s, a, 1, 2000, &r); /* drop_after */
    EXPECT(r.rc != CURLE_OK);
    if (a->streams) EXPECT(has(&r, " two") != NULL && has(&r, " three") == NULL);
    e2e_resp_clear(&r);
    call(s, a, 1, 3000, &r); /* stall_after */
    EXPECT(r.rc == CURLE_OK && r.elapsed_ms >= 150);
    e2e_resp_clear(&r);
    call(s, a, 1, 2000, &r); /* error_after */
    if (a->streams) {
      EXPECT(r.status == 200 && has(&r, a->err) != NULL);
      EXPECT(has(&r, a->done) == NULL);
    } else {
      EXPECT(r.status == 503 && is_error_shape(a, r.body, 503));
    }
    e2e_resp_clear(&r);
    call(s, a, 1, 2000, &r); /* no_end */
    EXPECT(r.rc == CURLE_OK);
    if (a->streams) EXPECT(has(&r, a->done) == NULL && has(&r, " four") != NULL);
    e2e_resp_clear(&r);
    call(s, a, 1, 2000, &r); /* incomplete */
    if (a->streams) EXPECT(has(&r, a->cut) != NULL && has(&r, " four") != NULL);
    e2e_resp_clear(&r);
    call(s, a, 1, 3000, &r); /* interval */
    EXPECT(r.rc == CURLE_OK);
    if (a->streams) EXPECT(r.elapsed_ms >= 80);
    e2e_resp_clear(&r);
    e2e_stop(s);
    if (a->streams) {
      EXPECT(strcmp(e2e_str(e2e_end_of(s, 1), "how"), "dropped") == 0);
      EXPECT(e2e_num(e2e_end_of(s, 1), "chunks") == 2);
      EXPECT(cJSON_IsTrue(cJSON_GetObjectItem(e2e_end_of(s, 2), "stalled")));
      EXPECT(cJSON_IsFalse(cJSON_GetObjectItem(e2e_end_of(s, 4), "end_marker")));
    }
    e2e_free(s);
  }
}

/* incomplete on a non-streaming answer, in each API's words. */
static void test_incomplete_body_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    if (a->cut == NULL) continue;
    e2e_server *s = serve("chat { content = 'cut', incomplete = 'max_output_tokens' },"
                          " chat { content = 'filtered', incomplete = 'content_filter' }");
    e2e_resp r;
    call(s, a, 0, 2000, &r);
    EXPECT(r.status == 200);
    if (strcmp(a->dialect, "openai-responses") == 0)
      EXPECT(has(&r, "\"status\":\"incomplete\"") && has(&r, "max_output_tokens"));
    else
      EXPECT(has(&r, a->cut) != NULL);
    e2e_resp_clear(&r);
    call(s, a, 0, 2000, &r);
    EXPECT(has(&r, a->filter) != NULL);
    e2e_resp_clear(&r);
    e2e_free(s);
  }
}

/* One step played to one call: the response (the caller clears it). */
static void one(const api *a, const char *step, int stream, e2e_resp *r) {
  e2e_server *s = serve(step);
  call(s, a, stream, 2000, r);
  e2e_free(s);
}

#define PARIS "tool_calls = { { name = 'get_weather', arguments = { city = 'Paris' } } }"

/* Tool calls, answered whole and streamed, a stream cut inside the
   arguments, and arguments that are not JSON. */
static void test_tool_calls_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    if (a->tool == NULL) continue;
    e2e_resp r;
    /* Cohere's message-end says TOOL_CALL when the answer calls tools */
    const char *done = strcmp(a->dialect, "cohere") == 0 ? "\"finish_reason\":\"TOOL_CALL\""
                                                         : a->done;
    one(a, "chat { " PARIS " }", 0, &r);
    EXPECT(r.status == 200 && has(&r, a->tool) && has(&r, "get_weather") &&
           has(&r, "Paris"));
    EXPECT(has(&r, "call_1") != NULL);
    e2e_resp_clear(&r);
    one(a, "stream { " PARIS " }", 1, &r);
    EXPECT(r.rc == CURLE_OK && has(&r, a->tool_delta) && has(&r, done));
    e2e_resp_clear(&r);
    one(a, "stream { content = 'Looking.', " PARIS " }", 1, &r);
    EXPECT(r.rc == CURLE_OK && has(&r, a->tool_delta) && has(&r, "Looking."));
    e2e_resp_clear(&r);
    int whole = strcmp(a->dialect, "gemini") == 0 || strcmp(a->dialect, "ollama-chat") == 0;
    if (!whole) { /* Gemini and Ollama send a call whole */
      one(a, "stream { " PARIS ", drop_after = 1 }", 1, &r);
      EXPECT(r.rc != CURLE_OK);
      EXPECT(has(&r, "Paris") == NULL && has(&r, "city") != NULL);
      EXPECT(has(&r, done) == NULL);
      e2e_resp_clear(&r);
    }
    one(a, "chat { tool_calls = { { name = 'get_weather', arguments = '{\"city\": \"Par' } } }",
        0, &r);
    if (strcmp(a->dialect, "openai-chat") == 0 || strcmp(a->dialect, "openai-responses") == 0)
      EXPECT(has(&r, "\\\"Par\"") != NULL); /* the broken text, as sent */
    e2e_resp_clear(&r);
    one(a, "stream { tool_calls = { { name = 'get_weather', arguments = '{\"city\": \"Par' } } }",
        1, &r);
    if (!whole) EXPECT(has(&r, "Par") != NULL);
    e2e_resp_clear(&r);
  }
}

/* The trace says, per tool call, whether its arguments arrived whole and
   valid and whether the request offered the tool. */
static void test_tool_calls_traced(void) {
  static const struct { const char *step; int stream; const char *args; } rows[] = {
      {"chat { " PARIS " }", 0, "valid"},
      {"stream { " PARIS " }", 1, "valid"},
      {"stream { " PARIS ", drop_after = 1 }", 1, "cut"},
      {"stream { " PARIS ", error_after = 1 }", 1, "cut"},
      {"stream { content = 'a b', " PARIS ", drop_after = 2 }", 1, "cut"},
      {"truncate { chat { " PARIS " }, at = 30 }", 0, "cut"},
      {"chat { tool_calls = { { name = 'get_weather', arguments = '{\"city\":' } } }", 0, "invalid"},
  };
  const char *body = "{\"model\":\"m1\",\"messages\":[],\"tools\":[{\"type\":\"function\","
                     "\"function\":{\"name\":\"get_weather\"}}]%s}";
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    e2e_server *s = serve(rows[i].step);
    char b[512];
    snprintf(b, sizeof b, body, rows[i].stream ? ",\"stream\":true" : "");
    e2e_resp r;
    e2e_request(s, "POST", "/v1/chat/completions", b, NULL, 2000, &r);
    e2e_resp_clear(&r);
    e2e_request(s, "POST", "/v1/messages", "{\"tools\":[{\"name\":\"other\"}]}", NULL, 2000, &r);
    e2e_resp_clear(&r);
    e2e_stop(s);
    cJSON *tc = cJSON_GetArrayItem(cJSON_GetObjectItem(e2e_end_of(s, 0), "tool_calls"), 0);
    CU_ASSERT_PTR_NOT_NULL(tc);
    if (tc != NULL) {
      CU_ASSERT_STRING_EQUAL(e2e_str(tc, "args"), rows[i].args);
      CU_ASSERT_STRING_EQUAL(e2e_str(tc, "id"), "call_1");
      CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(tc, "offered")));
    }
    cJSON *tc2 = cJSON_GetArrayItem(cJSON_GetObjectItem(e2e_end_of(s, 1), "tool_calls"), 0);
    CU_ASSERT(tc2 == NULL || cJSON_IsFalse(cJSON_GetObjectItem(tc2, "offered")));
    e2e_free(s);
  }
}

/* Keys in Azure's api-key, Gemini's x-goog-api-key and ?key= never reach
   the trace; the deployment names the model. */
static void test_keys_and_paths(void) {
  e2e_server *s = serve("chat {}");
  static const char *const az[] = {"api-key: az-SECRET-1", NULL};
  static const char *const gg[] = {"x-goog-api-key: goog-SECRET-2", NULL};
  e2e_resp r;
  e2e_request(s, "POST", "/openai/deployments/dep7/chat/completions?api-version=2024-10-21",
              "{\"messages\":[]}", az, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(has(&r, "\"model\":\"dep7\"") != NULL);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1beta/models/gemini-x:generateContent?key=goog-SECRET-3", GEM_BODY,
              gg, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1beta/models/gemini-x:countTokens", GEM_BODY, NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1/models", "{}", NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 405);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/nope/v1/responses", "{}", NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404);
  e2e_resp_clear(&r);
  e2e_stop(s);
  FILE *f = fopen(s->trace_path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char line[8192];
  while (fgets(line, sizeof line, f)) CU_ASSERT(strstr(line, "SECRET") == NULL);
  fclose(f);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 0), "model"), "dep7");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 1), "model"), "gemini-x");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 1), "dialect"), "gemini");
  e2e_free(s);
}

/* Bedrock names each error in x-amzn-errortype (a step's type names its
   own), its body {"message"}; a stream's error is an exception message. */
static void test_bedrock_errors(void) {
  const api *a = api_named("bedrock-converse");
  static const struct { const char *step; int status; const char *type; } rows[] = {
      {"fail { status = 429 }", 429, "ThrottlingException"},
      {"fail { status = 503 }", 503, "ServiceUnavailableException"},
      {"fail { status = 408 }", 408, "ModelTimeoutException"},
      {"fail { status = 400 }", 400, "ValidationException"},
      {"fail { status = 403 }", 403, "AccessDeniedException"},
      {"fail { status = 500 }", 500, "InternalServerException"},
      {"fail { status = 429, type = 'ModelNotReadyException' }", 429, "ModelNotReadyException"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    e2e_resp r;
    one(a, rows[i].step, 0, &r);
    EXPECT(r.status == rows[i].status);
    const char *t = e2e_header(&r, "x-amzn-errortype");
    if (!(t && strcasecmp(t, rows[i].type) == 0)) /* e2e_resp lower-cases headers */
      fprintf(stderr, "\n  %s: x-amzn-errortype %s, want %s\n", rows[i].step, t ? t : "(none)",
              rows[i].type);
    EXPECT(t && strcasecmp(t, rows[i].type) == 0);
    EXPECT(is_error_shape(a, r.body, rows[i].status));
    e2e_resp_clear(&r);
  }
  e2e_resp r;
  one(a, "chat {}", 0, &r);
  EXPECT(r.status == 200 && e2e_header(&r, "x-amzn-errortype") == NULL);
  e2e_resp_clear(&r);
  static const struct { int status; const char *exc; } ex[] = {
      {429, "throttlingException"}, {500, "internalServerException"},
      {424, "modelStreamErrorException"}, {503, "serviceUnavailableException"}};
  for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
    char step[128];
    snprintf(step, sizeof step, "stream { content = 'a b c', error_after = 1, error = { status = %d } }",
             ex[i].status);
    one(a, step, 1, &r);
    EXPECT(r.status == 200 && has(&r, ex[i].exc) && has(&r, "exception") && !has(&r, "messageStop"));
    e2e_resp_clear(&r);
  }
}

/* Ollama streams a request that does not say "stream" (its default), answers
   whole only on "stream":false, and ends a stream cut by no_end with no
   done:true line; its errors are {"error":"..."} with the status. */
static void test_ollama_default_stream(void) {
  /* the nth arrival plays the nth step, whatever its request */
  e2e_server *s = e2e_start(
      "local steps = { chat { content = 'a b' }, chat { content = 'a b' },"
      " stream { content = 'a b', no_end = true }, fail { status = 404,"
      " message = 'model \"x\" not found, try pulling it first' } }\n"
      "return scenario { name = 't', provider = function(req) return steps[req.n] end }",
      1.0);
  e2e_resp r;
  e2e_request(s, "POST", "/api/chat", "{\"model\":\"x\",\"messages\":[]}", NULL, 2000, &r);
  const char *ct = e2e_header(&r, "content-type");
  CU_ASSERT(ct && strcmp(ct, "application/x-ndjson") == 0);
  CU_ASSERT(has(&r, "\"done\":false}\n") != NULL && has(&r, "\"done\":true") != NULL);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/api/chat", "{\"model\":\"x\",\"messages\":[],\"stream\":false}",
              NULL, 2000, &r);
  ct = e2e_header(&r, "content-type");
  CU_ASSERT(ct && strcmp(ct, "application/json") == 0);
  CU_ASSERT(has(&r, "\"content\":\"a b\"") != NULL && strchr(r.body, '\n') == NULL);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/api/generate", "{\"model\":\"x\",\"prompt\":\"hi\"}", NULL, 2000, &r);
  CU_ASSERT(has(&r, "\"response\":\" b\"") != NULL);
  CU_ASSERT(has(&r, "\"done\":true") == NULL);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/api/chat", "{\"model\":\"x\",\"messages\":[]}", NULL, 2000, &r);
  CU_ASSERT_EQUAL(r.status, 404);
  CU_ASSERT_STRING_EQUAL(r.body, "{\"error\":\"model \\\"x\\\" not found, try pulling it first\"}");
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "state"), "complete");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 2), "state"), "no_end");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 2), "dialect"), "ollama-generate");
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 3), "state"), "error_status");
  e2e_free(s);
}

int suite_dialects(void) {
  CU_pSuite s = CU_add_suite("e2e_dialects", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "chat in every API", test_chat_every_api);
  CU_add_test(s, "fail with Retry-After / RetryInfo in every API", test_fail_every_api);
  CU_add_test(s, "Gemini error statuses", test_gemini_statuses);
  CU_add_test(s, "hang, delay, drop, reset, truncate, garbage in every API",
              test_transport_steps_every_api);
  CU_add_test(s, "every stream option in every API", test_stream_every_api);
  CU_add_test(s, "incomplete answers in every API", test_incomplete_body_every_api);
  CU_add_test(s, "tool calls in every API", test_tool_calls_every_api);
  CU_add_test(s, "tool calls in the trace", test_tool_calls_traced);
  CU_add_test(s, "keys redacted, paths of real SDKs", test_keys_and_paths);
  CU_add_test(s, "Ollama streams unless told not to", test_ollama_default_stream);
  CU_add_test(s, "Bedrock error types and stream exceptions", test_bedrock_errors);
  return CU_get_error();
}
