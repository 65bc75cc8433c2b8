/*
 * test_states.c - the terminal state (`state`) of the traced `end` of every
 * step kind and stream option, played to every API: one table, step and
 * request side by side with the state each API must trace; then the
 * answers fusebox makes itself (unserved, scenario error, rate limit,
 * ledger) and a server that stops under an open attempt.
 */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"

#define CHAT_BODY "{\"model\":\"m1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
#define GEM_BODY "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi\"}]}]}"
#define TEXT "content = 'one two three four'"

/* One API: where it is called, and which column of CASES it answers. */
typedef struct api {
  const char *dialect;
  const char *path;
  const char *stream_path; /* NULL: same path, "stream":true in the body */
  const char *body;        /* without the closing brace (stream is added) */
  const char *unstream;    /* added to the body of a call that does not stream
                              (Ollama streams unless told not to) */
} api;

static const api APIS[] = {
    {"openai-chat", "/v1/chat/completions", NULL, CHAT_BODY, NULL},
    {"openai-responses", "/v1/responses", NULL, "{\"model\":\"m1\",\"input\":\"hi\"", NULL},
    {"anthropic", "/v1/messages", NULL, CHAT_BODY, NULL},
    {"gemini", "/v1beta/models/gemini-2.0-flash:generateContent",
     "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse", GEM_BODY, NULL},
    {"ollama-chat", "/api/chat", NULL, CHAT_BODY, ",\"stream\":false"},
    {"ollama-generate", "/api/generate", NULL, "{\"model\":\"m1\",\"prompt\":\"hi\"",
     ",\"stream\":false"},
    {"cohere", "/v2/chat", NULL, CHAT_BODY, NULL},
    {"bedrock-converse", "/model/m1/converse", "/model/m1/converse-stream",
     "{\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]}", NULL},
    {"bedrock-invoke", "/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke",
     "/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke-with-response-stream",
     "{\"anthropic_version\":\"bedrock-2023-05-31\",\"max_tokens\":9,\"messages\":[]}", NULL},
    {"embeddings", "/v1/embeddings", NULL, "{\"model\":\"e1\",\"input\":[\"a\"]", NULL},
};
#define NAPIS (sizeof APIS / sizeof APIS[0])
#define EMBEDDINGS (NAPIS - 1) /* the API that never streams */

/* One step, one request, and the state its `end` must say. */
typedef struct state_case {
  const char *step;      /* the Lua step */
  int stream;            /* the request asks for a stream */
  long timeout_ms;       /* the client gives up after this */
  const char *state;     /* openai-chat, anthropic, gemini, ollama, cohere (and Responses) */
  const char *responses; /* openai-responses, when it differs */
  const char *one_body;  /* embeddings: the step's one-body equivalent */
  int error_event;       /* 1: the end says "error_event":true (streaming APIs) */
} state_case;

static const state_case CASES[] = {
    {"chat { content = 'hello there' }", 0, 2000, "complete", NULL, "complete", 0},
    {"chat { content = 'hello there' }", 1, 2000, "complete", NULL, "complete", 0},
    {"chat { content = 'cut', incomplete = 'max_output_tokens' }", 0, 2000, "complete",
     "incomplete", "complete", 0},
    {"chat { tool_calls = { { name = 'f', arguments = '{\"city\": \"Par' } } }", 0, 2000,
     "complete", NULL, "complete", 0}, /* bad arguments: complete, bad content */
    {"stream { " TEXT " }", 1, 2000, "complete", NULL, "complete", 0},
    {"stream { " TEXT ", drop_after = 2 }", 1, 2000, "cut", NULL, "no_response", 0},
    {"stream { " TEXT ", stall_after = 1 }", 1, 300, "stalled", NULL, "no_response", 0},
    {"stream { " TEXT ", stall_after = 1, stall = 0.2 }", 1, 3000, "complete", NULL, "complete",
     0},
    {"stream { " TEXT ", error_after = 1, error = { status = 503, code = 'overloaded' } }", 1,
     2000, "error_event", NULL, "error_status", 1},
    {"stream { " TEXT ", error_after = 0 }", 1, 2000, "error_event", NULL, "error_status", 1},
    {"stream { " TEXT ", no_end = true }", 1, 2000, "no_end", NULL, "complete", 0},
    {"stream { " TEXT ", no_terminator = true }", 1, 2000, "no_end", NULL, "complete", 0},
    {"stream { " TEXT ", incomplete = 'max_output_tokens' }", 1, 2000, "complete", "incomplete",
     "complete", 0},
    {"stream { " TEXT ", incomplete = 'max_output_tokens', no_terminator = true }", 1, 2000,
     "no_end", NULL, "complete", 0},
    {"stream { " TEXT ", interval = 1 }", 1, 300, "aborted", NULL, "complete", 0},
    {"stream { tool_calls = { { name = 'f', arguments = '{\"city\": \"Par' } } }", 1, 2000,
     "complete", NULL, "complete", 0},
    {"fail { status = 429 }", 0, 2000, "error_status", NULL, "error_status", 0},
    {"fail { status = 500 }", 1, 2000, "error_status", NULL, "error_status", 0},
    {"hang {}", 0, 300, "no_response", NULL, "no_response", 0},
    {"drop {}", 0, 2000, "no_response", NULL, "no_response", 0},
    {"reset {}", 0, 2000, "no_response", NULL, "no_response", 0},
    {"truncate { chat {}, at = 20 }", 0, 2000, "unparsable", NULL, "unparsable", 0},
    {"truncate { chat {}, at = 20, mode = 'early-close' }", 0, 2000, "cut", NULL, "cut", 0},
    {"truncate { chat {}, at = 100000 }", 0, 2000, "complete", NULL, "complete", 0},
    {"truncate { fail { status = 500 }, at = 10 }", 0, 2000, "error_status", NULL,
     "error_status", 0},
    {"garbage {}", 0, 2000, "unparsable", NULL, "unparsable", 0},
    {"delay { 0.1, chat {} }", 0, 2000, "complete", NULL, "complete", 0},
    {"delay { 0.1, stream { " TEXT " } }", 1, 2000, "complete", NULL, "complete", 0},
    {"delay { 5, chat {} }", 0, 300, "no_response", NULL, "no_response", 0},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

/* The state case c must trace at API i. */
static const char *want_state(const state_case *c, size_t i) {
  if (i == EMBEDDINGS) return c->one_body;
  if (strcmp(APIS[i].dialect, "openai-responses") == 0 && c->responses) return c->responses;
  return c->state;
}

/* One request to the API, streaming or not. */
static void call(e2e_server *s, const api *a, int stream, long timeout_ms, e2e_resp *r) {
  char body[512];
  const char *path = a->path;
  if (a->stream_path != NULL) {
    if (stream) path = a->stream_path;
    snprintf(body, sizeof body, "%s", a->body);
  } else {
    snprintf(body, sizeof body, "%s%s}", a->body,
             stream ? ",\"stream\":true" : a->unstream ? a->unstream : "");
  }
  e2e_request(s, "POST", path, body, NULL, timeout_ms, r);
}

/* A scenario whose nth arrival plays CASES[n-1]. */
static e2e_server *serve_cases(void) {
  static char lua[16384];
  size_t off = (size_t)snprintf(lua, sizeof lua, "local steps = {\n");
  for (size_t k = 0; k < NCASES && off < sizeof lua; k++)
    off += (size_t)snprintf(lua + off, sizeof lua - off, "  %s,\n", CASES[k].step);
  if (off < sizeof lua)
    snprintf(lua + off, sizeof lua - off,
             "}\nreturn scenario { name = 't', provider = function(req) "
             "return steps[req.n] end }\n");
  CU_ASSERT_FATAL(off < sizeof lua);
  return e2e_start(lua, 1.0);
}

static void test_every_step_every_api(void) {
  for (size_t i = 0; i < NAPIS; i++) {
    const api *a = &APIS[i];
    e2e_server *s = serve_cases();
    for (size_t k = 0; k < NCASES; k++) {
      e2e_resp r;
      call(s, a, CASES[k].stream, CASES[k].timeout_ms, &r);
      e2e_resp_clear(&r);
    }
    /* the client left some of them: their ends come when the server sees it */
    CU_ASSERT(e2e_wait_trace(s, "end", (int)NCASES, 5000));
    e2e_stop(s);
    for (size_t k = 0; k < NCASES; k++) {
      const state_case *c = &CASES[k];
      cJSON *end = e2e_end_of(s, (int)k);
      const char *got = e2e_str(end, "state"), *want = want_state(c, i);
      if (!(got && strcmp(got, want) == 0))
        fprintf(stderr, "\n  %s %s%s: state %s, want %s (how %s)\n", a->dialect, c->step,
                c->stream ? " (stream)" : "", got ? got : "(none)", want,
                e2e_str(end, "how") ? e2e_str(end, "how") : "(none)");
      CU_ASSERT(got && strcmp(got, want) == 0);
      CU_ASSERT_PTR_NOT_NULL(e2e_str(end, "how")); /* the old field stays */
      int ev = cJSON_IsTrue(cJSON_GetObjectItem(end, "error_event"));
      CU_ASSERT_EQUAL(ev, i == EMBEDDINGS ? 0 : c->error_event);
      if (ev && strstr(c->step, "'overloaded'") != NULL) {
        CU_ASSERT_STRING_EQUAL(e2e_str(end, "code"), "overloaded");
        CU_ASSERT_EQUAL(e2e_num(end, "chunks"), 1); /* the chunks before the error */
      }
    }
    e2e_free(s);
  }
}

/* The answers fusebox makes itself, and the effect endpoint. */
static void test_fusebox_answers(void) {
  e2e_server *s = e2e_start("return scenario { name = 't', provider = function(req)\n"
                            "  if req.n == 2 then error('boom') end\n"
                            "  return chat {}\n"
                            "end, ratelimit = { rpm = 1, burst = 3 } }",
                            1.0);
  e2e_resp r;
  e2e_request(s, "POST", "/nope", "{}", NULL, 2000, &r); /* 1: unserved */
  CU_ASSERT_EQUAL(r.status, 404);
  e2e_resp_clear(&r);
  e2e_chat(s, "/v1/chat/completions", 0, 2000, &r); /* 2: the scenario fails */
  CU_ASSERT_EQUAL(r.status, 500);
  e2e_resp_clear(&r);
  e2e_chat(s, "/v1/chat/completions", 0, 2000, &r); /* 3 */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_chat(s, "/v1/chat/completions", 0, 2000, &r); /* 4 */
  e2e_resp_clear(&r);
  e2e_chat(s, "/v1/chat/completions", 0, 2000, &r); /* 5: the bucket is empty */
  CU_ASSERT_EQUAL(r.status, 429);
  e2e_resp_clear(&r);
  e2e_stop(s);
  static const char *const want[] = {"error_status", "error_status", "complete", "complete",
                                     "error_status"};
  for (int k = 0; k < 5; k++)
    if (want[k] != NULL) CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, k), "state"), want[k]);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 1), "how"), "error");
  e2e_free(s);

  s = e2e_start("return scenario { name = 't', provider = { chat {} },"
                " effects = function(req)\n"
                "  if req.n == 6 then return effect { respond = 'drop' } end\n"
                "  return effect {}\n"
                "end }",
                1.0);
  static const char *const key[] = {"Idempotency-Key: k1", NULL};
  static const char *const key2[] = {"Idempotency-Key: k2", NULL};
  e2e_request(s, "GET", "/v1/models", NULL, NULL, 2000, &r); /* models */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1/effects/send", "{\"to\":\"a\"}", key, 2000, &r); /* applied */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1/effects/send", "{\"to\":\"b\"}", key, 2000, &r); /* conflict */
  CU_ASSERT_EQUAL(r.status, 409);
  e2e_resp_clear(&r);
  e2e_request(s, "GET", "/v1/effects/k1", NULL, NULL, 2000, &r); /* found */
  CU_ASSERT_EQUAL(r.status, 200);
  e2e_resp_clear(&r);
  e2e_request(s, "GET", "/v1/effects/nope", NULL, NULL, 2000, &r); /* not applied */
  CU_ASSERT_EQUAL(r.status, 404);
  e2e_resp_clear(&r);
  e2e_request(s, "POST", "/v1/effects/send", "{}", key2, 2000, &r); /* applied, then dropped */
  e2e_resp_clear(&r);
  e2e_stop(s);
  static const char *const want2[] = {"complete", "complete", "error_status", "complete",
                                      "error_status", "no_response"};
  for (int k = 0; k < 6; k++) {
    const char *got = e2e_str(e2e_end_of(s, k), "state");
    if (!(got && strcmp(got, want2[k]) == 0))
      fprintf(stderr, "\n  effects %d: state %s, want %s\n", k, got ? got : "(none)", want2[k]);
    CU_ASSERT(got && strcmp(got, want2[k]) == 0);
  }
  e2e_free(s);
}

typedef struct pending {
  e2e_server *s;
  const char *path;
  int stream;
} pending;

static void *request_thread(void *arg) {
  pending *p = arg;
  e2e_resp r;
  e2e_chat(p->s, p->path, p->stream, 10000, &r);
  e2e_resp_clear(&r);
  return NULL;
}

/* The server stops under an open attempt: before the answer, in a stall,
   between the chunks of a slow stream. */
static void test_shutdown_under_attempt(void) {
  static const struct {
    const char *step;
    int stream;
    const char *state;
  } rows[] = {
      {"hang {}", 0, "no_response"},
      {"delay { 30, chat {} }", 0, "no_response"},
      {"stream { " TEXT ", stall_after = 0 }", 1, "stalled"},
      {"stream { " TEXT ", interval = 30 }", 1, "cut"},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char lua[512];
    snprintf(lua, sizeof lua, "return scenario { name = 't', provider = { %s } }", rows[i].step);
    e2e_server *s = e2e_start(lua, 1.0);
    pending p = {s, "/v1/messages", rows[i].stream};
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, request_thread, &p) == 0);
    CU_ASSERT(e2e_wait_trace(s, "arrive", 1, 5000));
    e2e_stop(s);
    pthread_join(th, NULL);
    const char *got = e2e_str(e2e_end_of(s, 0), "state");
    if (!(got && strcmp(got, rows[i].state) == 0))
      fprintf(stderr, "\n  shutdown under %s: state %s, want %s\n", rows[i].step,
              got ? got : "(none)", rows[i].state);
    CU_ASSERT(got && strcmp(got, rows[i].state) == 0);
    CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "how"), "shutdown");
    e2e_free(s);
  }
}

int suite_states(void) {
  CU_pSuite s = CU_add_suite("e2e_states", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "every step and stream option, every API: end.state",
              test_every_step_every_api);
  CU_add_test(s, "fusebox's own answers and the effect endpoint: end.state",
              test_fusebox_answers);
  CU_add_test(s, "the server stops under an open attempt: end.state",
              test_shutdown_under_attempt);
  return CU_get_error();
}
