/* test_wire_providers.c - Bedrock Converse, Ollama and Cohere on the
   guard's side: request bodies and paths, whole answers and streams as
   sim's writers of those APIs send them (complete, without their end,
   ended by an error), the NDJSON reader, and how their errors classify. */
#include "guard/guard_int.h"
#include "sim/sim_int.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

static guard_message MSG = {.role = "user", .content = "hi"};

static char *body_of(guard_dialect d, int stream) {
  guard_chat_request req = {.messages = &MSG, .nmessages = 1, .max_tokens = 7,
                            .system = "be brief", .stream = stream};
  char *b = NULL;
  size_t n;
  CU_ASSERT_EQUAL(guard__wire_body(d, "m-1", &req, &b, &n), GUARD_OK);
  return b ? b : strdup("");
}

static void test_bodies(void) {
  char *b = body_of(GUARD_BEDROCK, 1);
  CU_ASSERT(strstr(b, "\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"hi\"}]}]") != NULL);
  CU_ASSERT(strstr(b, "\"system\":[{\"text\":\"be brief\"}]") != NULL);
  CU_ASSERT(strstr(b, "\"inferenceConfig\":{\"maxTokens\":7}") != NULL);
  CU_ASSERT(strstr(b, "stream") == NULL && strstr(b, "m-1") == NULL); /* both in the path */
  free(b);
  b = body_of(GUARD_OLLAMA, 0);
  CU_ASSERT(strstr(b, "\"model\":\"m-1\"") != NULL);
  CU_ASSERT(strstr(b, "\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
                      "{\"role\":\"user\",\"content\":\"hi\"}]") != NULL);
  CU_ASSERT(strstr(b, "\"stream\":false") != NULL); /* Ollama streams unless told */
  CU_ASSERT(strstr(b, "\"num_predict\":7") != NULL);
  free(b);
  b = body_of(GUARD_COHERE, 1);
  CU_ASSERT(strstr(b, "\"model\":\"m-1\"") != NULL);
  CU_ASSERT(strstr(b, "{\"role\":\"user\",\"content\":\"hi\"}") != NULL);
  CU_ASSERT(strstr(b, "\"stream\":true") != NULL);
  CU_ASSERT(strstr(b, "\"max_tokens\":7") != NULL);
  free(b);
}

static void test_paths(void) {
  guard_provider p[] = {
      {.name = "b", .base_url = "http://h:1/primary", .dialect = GUARD_BEDROCK,
       .model = "anthropic.claude-3-haiku-20240307-v1:0"},
      {.name = "o", .base_url = "http://h:1/", .dialect = GUARD_OLLAMA, .model = "llama3"},
      {.name = "c", .base_url = "http://h:1", .dialect = GUARD_COHERE, .model = "command-r"}};
  guard_config cfg;
  guard_config_init(&cfg);
  cfg.providers = p;
  cfg.nproviders = 3;
  guard *g = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_new(&cfg, &g, NULL), GUARD_OK);
  CU_ASSERT_STRING_EQUAL(g->prov[0].url,
                         "http://h:1/primary/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
  CU_ASSERT_STRING_EQUAL(g->prov[0].url_stream,
                         "http://h:1/primary/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");
  CU_ASSERT_STRING_EQUAL(g->prov[1].url, "http://h:1/api/chat");
  CU_ASSERT_PTR_NULL(g->prov[1].url_stream);
  CU_ASSERT_STRING_EQUAL(g->prov[2].url, "http://h:1/v2/chat");
  guard_free(g);
  p[0].dialect = (guard_dialect)7;
  CU_ASSERT_EQUAL(guard_new(&cfg, &g, NULL), GUARD_EINVAL);
}

/* sim's whole answer for dialect sd, read by the guard as dialect d. */
static void test_answers(void) {
  static const struct { sim_dialect sd; guard_dialect d; } rows[] = {
      {SIM_DIALECT_BEDROCK, GUARD_BEDROCK},
      {SIM_DIALECT_OLLAMA_CHAT, GUARD_OLLAMA},
      {SIM_DIALECT_COHERE, GUARD_COHERE}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    char *body = sim__answer_body(rows[i].sd, NULL, "id-1", "m-1", "hello there", 5, 3);
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    guard__answer a;
    guard__answer_init(&a, rows[i].d, 4096);
    CU_ASSERT_EQUAL(guard__wire_parse(body, strlen(body), &a), GUARD__BODY_OK);
    CU_ASSERT_STRING_EQUAL(a.text.p ? a.text.p : "", "hello there");
    CU_ASSERT_EQUAL(a.tokens_in, 5);
    CU_ASSERT_EQUAL(a.tokens_out, 3);
    guard__answer_free(&a);
    /* the same answer read as another of the three is not one */
    guard__answer_init(&a, rows[(i + 1) % 3].d, 4096);
    CU_ASSERT_EQUAL(guard__wire_parse(body, strlen(body), &a), GUARD__BODY_MISSING);
    guard__answer_free(&a);
    free(body);
  }
  /* refusals: Bedrock content_filtered, Cohere ERROR without an error */
  guard__answer a;
  guard__answer_init(&a, GUARD_BEDROCK, 4096);
  const char *br = "{\"output\":{\"message\":{\"content\":[]}},\"stopReason\":\"content_filtered\"}";
  CU_ASSERT_EQUAL(guard__wire_parse(br, strlen(br), &a), GUARD__BODY_REFUSAL);
  guard__answer_free(&a);
  guard__answer_init(&a, GUARD_COHERE, 4096);
  const char *co = "{\"finish_reason\":\"ERROR\",\"message\":{\"content\":[]}}";
  CU_ASSERT_EQUAL(guard__wire_parse(co, strlen(co), &a), GUARD__BODY_REFUSAL);
  guard__answer_free(&a);
  /* Ollama without done:true is not a whole answer */
  guard__answer_init(&a, GUARD_OLLAMA, 4096);
  const char *ol = "{\"message\":{\"role\":\"assistant\",\"content\":\"x\"},\"done\":false}";
  CU_ASSERT_EQUAL(guard__wire_parse(ol, strlen(ol), &a), GUARD__BODY_MISSING);
  guard__answer_free(&a);
}

/* Which of sim's frames a stream is made of. */
enum { WHOLE, NO_END, ERROR_AFTER_ONE };

/* Plays sim's stream of dialect sd through a response (the way the
   transport delivers it, `step` bytes at a time) into a, and ends it. */
static guard__body play(sim_dialect sd, guard_dialect d, int form, size_t step, guard__answer *a) {
  sim_step s;
  memset(&s, 0, sizeof s);
  s.status = 429;
  s.usage_out = -1; /* estimated from the text: more than 0 */
  char *texts[] = {"hello ", "from ", "sim"};
  sim_sse st;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(sd, &s, "id-1", "m-1", 4, texts, 3, &st), SIM_OK);
  guard__buf all;
  guard__buf_init(&all, 1 << 20);
  /* the frames in order; binary ones carry their lengths */
  const char *parts[8];
  size_t lens[8];
  int np = 0;
  parts[np] = st.pre, lens[np++] = st.binary ? st.pre_len : strlen(st.pre);
  int nch = form == ERROR_AFTER_ONE ? 1 : st.nchunks;
  for (int i = 0; i < nch && np < 6; i++)
    parts[np] = st.chunk[i], lens[np++] = st.binary ? st.lens[i] : strlen(st.chunk[i]);
  if (form == ERROR_AFTER_ONE) {
    parts[np] = st.error, lens[np++] = st.binary ? st.error_len : strlen(st.error);
  } else {
    parts[np] = st.tail, lens[np++] = st.binary ? st.tail_len : strlen(st.tail);
    if (form == WHOLE) parts[np] = st.marker, lens[np++] = st.binary ? st.marker_len : strlen(st.marker);
  }
  for (int i = 0; i < np; i++) guard__buf_add(&all, parts[i], lens[i]);
  sim__sse_clear(&st);

  guard__answer_init(a, d, 4096);
  guard_http_response r;
  guard__resp_init(&r, 1 << 20, 1, a);
  guard_resp_status(&r, 200);
  const char *ct = sim__dialect_stream_ctype(sd);
  guard_resp_header(&r, "Content-Type", 12, ct, strlen(ct));
  for (size_t i = 0; i < all.len; i += step)
    CU_ASSERT_EQUAL(guard_resp_body(&r, all.p + i, all.len - i < step ? all.len - i : step), GUARD_OK);
  CU_ASSERT_EQUAL(r.sse, 1); /* read as a stream, not a body */
  guard__resp_stream_finish(&r);
  guard__resp_free(&r);
  guard__buf_free(&all);
  return guard__wire_stream_end(a);
}

static void test_streams(void) {
  static const struct { sim_dialect sd; guard_dialect d; const char *err; } rows[] = {
      {SIM_DIALECT_BEDROCK, GUARD_BEDROCK, "throttlingException"},
      {SIM_DIALECT_OLLAMA_CHAT, GUARD_OLLAMA, "stream_error"},
      {SIM_DIALECT_COHERE, GUARD_COHERE, "stream_error"}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    for (size_t step = 1; step <= 4096; step *= 8) {
      guard__answer a;
      CU_ASSERT_EQUAL(play(rows[i].sd, rows[i].d, WHOLE, step, &a), GUARD__BODY_OK);
      CU_ASSERT_STRING_EQUAL(a.text.p ? a.text.p : "", "hello from sim");
      CU_ASSERT_EQUAL(a.tokens_in, 4);
      CU_ASSERT(a.tokens_out > 0);
      guard__answer_free(&a);
      CU_ASSERT_EQUAL(play(rows[i].sd, rows[i].d, NO_END, step, &a), GUARD__BODY_NO_END);
      guard__answer_free(&a);
      CU_ASSERT_EQUAL(play(rows[i].sd, rows[i].d, ERROR_AFTER_ONE, step, &a), GUARD__BODY_ERROR);
      CU_ASSERT_STRING_EQUAL(a.err_type, rows[i].err);
      CU_ASSERT_EQUAL(guard__classify_type(a.err_type), GUARD_KIND_TRANSIENT);
      CU_ASSERT_STRING_EQUAL(a.text.p ? a.text.p : "", "hello ");
      guard__answer_free(&a);
    }
  }
}

/* A Bedrock stream whose bytes changed, or that was cut inside a frame. */
static void test_bedrock_broken(void) {
  size_t n = 0;
  char *m = sim__es_event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"x\"}}", &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  for (int cut = 0; cut < 2; cut++) {
    guard__answer a;
    guard__answer_init(&a, GUARD_BEDROCK, 4096);
    guard_http_response r;
    guard__resp_init(&r, 1 << 20, 1, &a);
    guard_resp_status(&r, 200);
    if (!cut) m[n - 6] ^= 0x20; /* the payload: the message CRC fails */
    CU_ASSERT_EQUAL(guard_resp_body(&r, m, cut ? n - 3 : n), GUARD_OK);
    guard__resp_stream_finish(&r);
    CU_ASSERT_EQUAL(r.es.broken, cut ? GUARD__ES_CUT : GUARD__ES_MESSAGE_CRC);
    CU_ASSERT_EQUAL(guard__wire_stream_end(&a), cut ? GUARD__BODY_TRUNCATED : GUARD__BODY_BAD_CHUNK);
    CU_ASSERT_EQUAL(a.text.len, 0);
    if (!cut) m[n - 6] ^= 0x20;
    guard__resp_free(&r);
    guard__answer_free(&a);
  }
  free(m);
}

/* Lines seen by the NDJSON reader, joined by '|'. */
static int join_line(void *ud, const char *line, size_t len) {
  guard__buf *b = ud;
  if (b->len) guard__buf_add(b, "|", 1);
  guard__buf_add(b, line, len);
  return 0;
}

static void test_ndjson(void) {
  static const struct { const char *in; const char *lines; } rows[] = {
      {"{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}|{\"b\":2}"},
      {"{\"a\":1}\r\n\r\n  \n{\"b\":2}\r\n", "{\"a\":1}|{\"b\":2}"}, /* CRLF, blank lines */
      {"{\"a\":1}\n{\"b\":2}", "{\"a\":1}|{\"b\":2}"},                /* no last newline */
      {"", ""}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    size_t n = strlen(rows[i].in);
    for (size_t step = 1; step <= n + 1; step++) {
      guard__buf got;
      guard__buf_init(&got, 1024);
      guard__ndjson r;
      guard__ndjson_init(&r, 64, join_line, &got);
      for (size_t k = 0; k < n; k += step)
        CU_ASSERT_EQUAL(guard__ndjson_feed(&r, rows[i].in + k, n - k < step ? n - k : step), 0);
      CU_ASSERT_EQUAL(guard__ndjson_finish(&r), 0);
      CU_ASSERT_STRING_EQUAL(got.p ? got.p : "", rows[i].lines);
      guard__ndjson_free(&r);
      guard__buf_free(&got);
    }
  }
  guard__ndjson r;
  guard__ndjson_init(&r, 8, join_line, NULL);
  CU_ASSERT_EQUAL(guard__ndjson_feed(&r, "123456789", 9), GUARD_ETOOBIG); /* bounded */
  guard__ndjson_free(&r);

  /* Ollama's lines: complete only with done:true; a line that is not JSON
     is a bad chunk; an error line a failure. */
  static const struct { const char *in; guard__body want; } ol[] = {
      {"{\"message\":{\"content\":\"a\"},\"done\":false}\n"
       "{\"message\":{\"content\":\"\"},\"done\":true,\"eval_count\":2}\n", GUARD__BODY_OK},
      {"{\"message\":{\"content\":\"a\"},\"done\":false}\n", GUARD__BODY_NO_END},
      {"{\"message\":{\"content\":\"a\"},\"done\":false}\nnot json\n", GUARD__BODY_BAD_CHUNK},
      {"{\"message\":{\"content\":\"a\"},\"done\":false}\n{\"error\":\"boom\"}\n", GUARD__BODY_ERROR},
      {"{\"message\":{\"content\":\"a\"},\"done\":true}", GUARD__BODY_OK}};
  for (size_t i = 0; i < sizeof ol / sizeof ol[0]; i++) {
    guard__answer a;
    guard__answer_init(&a, GUARD_OLLAMA, 4096);
    guard_http_response resp;
    guard__resp_init(&resp, 1 << 20, 1, &a);
    guard_resp_status(&resp, 200);
    guard_resp_header(&resp, "content-type", 12, "application/x-ndjson", 20);
    guard_resp_body(&resp, ol[i].in, strlen(ol[i].in));
    guard__resp_stream_finish(&resp);
    CU_ASSERT_EQUAL(guard__wire_stream_end(&a), ol[i].want);
    guard__resp_free(&resp);
    guard__answer_free(&a);
  }
}

/* Cohere's typed events as SSE text. */
static void test_cohere_events(void) {
#define START "event: message-start\ndata: {\"type\":\"message-start\"}\n\n" \
              "event: content-delta\ndata: {\"type\":\"content-delta\",\"index\":0,"  \
              "\"delta\":{\"message\":{\"content\":{\"text\":\"hi\"}}}}\n\n"
  static const struct { const char *in; guard__body want; const char *text; } rows[] = {
      {START "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":"
             "{\"finish_reason\":\"COMPLETE\"}}\n\n", GUARD__BODY_OK, "hi"},
      {START, GUARD__BODY_NO_END, "hi"},
      {START "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":"
             "{\"finish_reason\":\"ERROR\",\"error\":\"internal\"}}\n\n", GUARD__BODY_ERROR, "hi"},
      {START "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":"
             "{\"finish_reason\":\"ERROR\"}}\n\n", GUARD__BODY_REFUSAL, "hi"},
      {START "event: error\ndata: {\"type\":\"error\"}\n\n", GUARD__BODY_ERROR, "hi"},
      {"event: content-delta\ndata: {\"type\":\"content-delta\",\"delta\":{}}\n\n"
       "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{}}\n\n",
       GUARD__BODY_BAD_CHUNK, ""}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    guard__answer a;
    guard__answer_init(&a, GUARD_COHERE, 4096);
    guard_http_response r;
    guard__resp_init(&r, 1 << 20, 1, &a);
    guard_resp_status(&r, 200);
    guard_resp_body(&r, rows[i].in, strlen(rows[i].in));
    guard__resp_stream_finish(&r);
    CU_ASSERT_EQUAL(guard__wire_stream_end(&a), rows[i].want);
    CU_ASSERT_STRING_EQUAL(a.text.p ? a.text.p : "", rows[i].text);
    guard__resp_free(&r);
    guard__answer_free(&a);
  }
#undef START
}

/* Bedrock's error names (x-amzn-errortype) in the classification table. */
static void test_bedrock_errors(void) {
  static const struct { int status; const char *header; guard_kind want; } rows[] = {
      {429, "ThrottlingException", GUARD_KIND_TRANSIENT},
      {429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", GUARD_KIND_TRANSIENT},
      {429, "ServiceQuotaExceededException", GUARD_KIND_PERMANENT},
      {503, "ServiceUnavailableException", GUARD_KIND_TRANSIENT},
      {408, "ModelTimeoutException", GUARD_KIND_TRANSIENT},
      {400, "ValidationException", GUARD_KIND_PERMANENT},
      {403, "AccessDeniedException", GUARD_KIND_PERMANENT},
      {429, "SomethingNewException", GUARD_KIND_UNKNOWN}}; /* fail closed */
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    guard__answer a;
    guard__answer_init(&a, GUARD_BEDROCK, 64);
    guard__bedrock_error_type(&a, rows[i].header);
    guard__facts f = {.tx = GUARD_TX_OK, .status = rows[i].status, .err_type = a.err_type};
    char sum[64];
    CU_ASSERT_EQUAL(guard__classify(&f, sum, sizeof sum), rows[i].want);
    CU_ASSERT(strchr(sum, ':') == NULL);
    guard__answer_free(&a);
  }
  CU_ASSERT_EQUAL(guard__classify_type("modelStreamErrorException"), GUARD_KIND_TRANSIENT);
  CU_ASSERT_EQUAL(guard__classify_type("internalServerException"), GUARD_KIND_TRANSIENT);
  CU_ASSERT_EQUAL(guard__classify_type("validationException"), GUARD_KIND_PERMANENT);
}

int suite_wire_providers(void) {
  CU_pSuite s = CU_add_suite("wire_providers", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "Bedrock, Ollama and Cohere request bodies", test_bodies) ||
      !CU_add_test(s, "their paths", test_paths) ||
      !CU_add_test(s, "sim's whole answers read back", test_answers) ||
      !CU_add_test(s, "sim's streams read back: whole, no end, error", test_streams) ||
      !CU_add_test(s, "a Bedrock stream with a bad CRC or a cut frame", test_bedrock_broken) ||
      !CU_add_test(s, "NDJSON lines and Ollama's stream endings", test_ndjson) ||
      !CU_add_test(s, "Cohere's typed events", test_cohere_events) ||
      !CU_add_test(s, "Bedrock's error names", test_bedrock_errors))
    return CU_get_error();
  return 0;
}
