/* test_import.c - fusebox import: JSON Lines, HAR and trace inputs become
   scenarios that load and decide the recorded steps; credentials never
   reach the output; hostile strings come back byte for byte; bad input is
   "file:line: message"; every prefix of an input is handled. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import/import.h"
#include "unit_sim/test_lua_util.h"

/* ------------------------------------------------------------ helpers */

/* The source tree: $FUSEBOX_SRC (set by ctest), else from this file's path. */
static void data_path(const char *name, char *out, size_t cap) {
  char src[2048];
  const char *env = getenv("FUSEBOX_SRC");
  if (env != NULL && *env != '\0') {
    snprintf(src, sizeof src, "%s", env);
  } else {
    snprintf(src, sizeof src, "%s", __FILE__);
    char *p = strstr(src, "/tests/unit_import/");
    if (p != NULL) *p = '\0';
  }
  snprintf(out, cap, "%s/tests/data/import/%s", src, name);
}

/* Imports text as "log.jsonl" dated 2024-05-01; returns the Lua text
   (caller frees) or NULL with err set. */
static char *imp_with(const char *text, size_t len, imp_opts *o, imp_stats *st,
                      char err[SIM_ERRLEN]) {
  char *lua = NULL;
  if (o->source == NULL) o->source = "log.jsonl";
  if (o->date == NULL) o->date = "2024-05-01";
  int rc = imp_buffer(text, len, o, &lua, st, err);
  if (rc != SIM_OK) {
    CU_ASSERT_PTR_NULL(lua);
    return NULL;
  }
  return lua;
}

static char *imp(const char *text, imp_stats *st, char err[SIM_ERRLEN]) {
  imp_opts o = {0};
  return imp_with(text, strlen(text), &o, st, err);
}

/* Loads Lua text as a scenario; NULL (and a message) when it does not. */
static sim_scenario *load(const char *lua) {
  char *path = tl_write(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(path);
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  if (sim__scenario_load(path, 1, &sc, err) != 0) {
    fprintf(stderr, "\n  the import does not load: %s\n%s\n", err, lua);
    sc = NULL;
  }
  /* What `fusebox check` and `list` use must accept it too. */
  sim_scenario_info info;
  if (sc != NULL) {
    CU_ASSERT_EQUAL(sim_scenario_inspect(path, &info, err), 0);
    sim_scenario_info_clear(&info);
  }
  tl_remove(path);
  return sc;
}

/* Imports text and loads the result; frees the text. */
static sim_scenario *imp_load(const char *text, imp_stats *st) {
  char err[SIM_ERRLEN];
  char *lua = imp(text, st, err);
  if (lua == NULL) fprintf(stderr, "\n  import failed: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  return sc;
}

/* Asks provider prov (-1: effects) about an arrival of request `key`. */
static sim_step *decide(sim_scenario *sc, int prov, const char *key, int attempt) {
  sim_req r = tl_req(attempt);
  r.key = key;
  if (prov < 0) {
    r.dialect = SIM_DIALECT_EFFECT;
    r.path = "/v1/effects/send_email";
  }
  sim_step *st = NULL;
  char err[SIM_ERRLEN];
  if (sim__scenario_decide(sc, prov, &r, &st, err) != 0) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL(st);
  return st;
}

/* The header value a step sends, or NULL. */
static const char *step_header(const sim_step *s, const char *name) {
  for (int i = 0; s && i < s->nheaders; i++)
    if (strcmp(s->headers[i].name, name) == 0) return s->headers[i].value;
  return NULL;
}

static int close_to(double a, double b) { return a - b < 1e-9 && b - a < 1e-9; }

/* Reads a data file into memory (caller frees). */
static char *slurp(const char *name, size_t *len) {
  char path[4096];
  data_path(name, path, sizeof path);
  FILE *f = fopen(path, "rb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_EQUAL((long)fread(b, 1, (size_t)n, f), n);
  b[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* ------------------------------------------------------------ JSON Lines */

static void test_jsonl_basic(void) {
  const char *log =
      "{\"t\":0,\"status\":429,\"latency_ms\":120,\"request_id\":\"req_1\",\n"
      "  \"headers\":{\"Retry-After\":\"2\",\"x-ratelimit-remaining-requests\":0,"
      "\"authorization\":\"Bearer sk-XSECRET123456789\"},"
      "\"body\":{\"error\":{\"code\":\"rate_limit_exceeded\",\"type\":\"requests\","
      "\"message\":\"slow down\"}}}\n";
  /* One object per line: the line break above is an error... */
  char err[SIM_ERRLEN];
  CU_ASSERT_PTR_NULL(imp(log, NULL, err));
  TL_ASSERT_STR(err, "log.jsonl:1: not valid JSON (near column 58): expected JSON Lines (one "
                     "attempt object per line), a HAR file or a fusebox trace");
  /* ...so here it is on one line, with a 200 after it. */
  const char *ok =
      "{\"t\":0,\"status\":429,\"latency_ms\":120,\"request_id\":\"req_1\","
      "\"headers\":{\"Retry-After\":\"2\",\"x-ratelimit-remaining-requests\":0,"
      "\"authorization\":\"Bearer sk-XSECRET123456789\"},"
      "\"body\":{\"error\":{\"code\":\"rate_limit_exceeded\",\"type\":\"requests\","
      "\"message\":\"slow down\"}}}\n"
      "\r\n"
      "{\"t\":2100,\"status\":200,\"latency_ms\":800,\"body\":\"{\\\"choices\\\":[{\\\"message\\\":"
      "{\\\"content\\\":\\\"hello\\\"}}],\\\"usage\\\":{\\\"prompt_tokens\\\":3,"
      "\\\"completion_tokens\\\":1}}\"}\r\n";
  imp_stats st;
  char *lua = imp(ok, &st, err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NULL(strstr(lua, "XSECRET"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "Imported from log.jsonl on 2024-05-01: 2 attempts of 1 "
                                     "logical request (json-lines)"));
  CU_ASSERT_PTR_NULL(strstr(lua, "local function replay")); /* one request: a plain list */
  CU_ASSERT_EQUAL(st.format, IMP_JSONL);
  CU_ASSERT_EQUAL(st.attempts, 2);
  CU_ASSERT_EQUAL(st.requests, 1);
  CU_ASSERT_EQUAL(st.providers, 1);
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  TL_ASSERT_STR(sim__scenario_name(sc), "Imported from log.jsonl");

  sim_step *s = decide(sc, 0, "k", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT(close_to(s->seconds, 0.12));
  const sim_step *f = s->next;
  CU_ASSERT_EQUAL_FATAL(f->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(f->status, 429);
  CU_ASSERT(f->has_retry_after && close_to(f->retry_after, 2));
  CU_ASSERT_PTR_NULL(f->retry_after_raw);
  TL_ASSERT_STR(f->code, "rate_limit_exceeded");
  TL_ASSERT_STR(f->type, "requests");
  TL_ASSERT_STR(f->message, "slow down");
  TL_ASSERT_STR(step_header(f, "x-ratelimit-remaining-requests"), "0");
  CU_ASSERT_PTR_NULL(step_header(f, "authorization"));
  CU_ASSERT_EQUAL(f->nheaders, 1);
  sim__step_free(s);

  for (int attempt = 2; attempt <= 4; attempt++) { /* the last step repeats */
    s = decide(sc, 0, "k", attempt);
    CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
    CU_ASSERT(close_to(s->seconds, 0.8));
    CU_ASSERT_EQUAL_FATAL(s->next->kind, SIM_STEP_CHAT);
    TL_ASSERT_STR(s->next->content, "hello");
    CU_ASSERT_EQUAL(s->next->usage_in, 3);
    CU_ASSERT_EQUAL(s->next->usage_out, 1);
    sim__step_free(s);
  }
  sim__scenario_free(sc);
}

static void test_jsonl_requests_and_outcomes(void) {
  const char *log =
      "{\"t\":\"2024-05-01T12:00:00Z\",\"key\":\"a\",\"status\":0,\"error\":\"timeout\","
      "\"latency_ms\":30000}\n"
      "{\"t\":\"2024-05-01T12:00:01Z\",\"key\":\"b\",\"error\":\"reset\",\"latency_ms\":40}\n"
      "{\"t\":\"2024-05-01T14:00:31+02:00\",\"key\":\"a\",\"status\":503,"
      "\"headers\":{\"retry-after-ms\":\"1500\"}}\n"
      "{\"t\":\"2024-05-01T12:00:02.5Z\",\"key\":\"b\",\"status\":200,\"stream\":true,"
      "\"chunks\":[\"x\",\"y\",\"z\"],\"error\":\"closed\",\"latency_ms\":100,\"duration_ms\":300}\n"
      "{\"time\":\"2024-05-01 12:00:33.000\",\"request\":\"a\",\"status\":null,\"error\":\"closed\"}\n"
      "{\"t\":\"2024-05-01T12:00:40Z\",\"key\":7,\"status\":200,\"stream\":true,"
      "\"chunks\":[\"p\",\"q\"],\"error\":\"timeout\",\"interval_ms\":50}\n";
  imp_stats st;
  sim_scenario *sc = imp_load(log, &st);
  CU_ASSERT_EQUAL(st.attempts, 6);
  CU_ASSERT_EQUAL(st.requests, 3);
  /* The first request to arrive replays "a", whatever its key. */
  sim_step *s = decide(sc, 0, "hash:first", 1);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_HANG);
  sim__step_free(s);
  s = decide(sc, 0, "hash:second", 1); /* "b" */
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT(close_to(s->seconds, 0.04));
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_RESET);
  sim__step_free(s);
  s = decide(sc, 0, "hash:first", 2);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->status, 503);
  CU_ASSERT(s->has_retry_after_ms && close_to(s->retry_after_ms, 1500));
  CU_ASSERT(!s->has_retry_after);
  sim__step_free(s);
  s = decide(sc, 0, "hash:second", 2);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  const sim_step *x = s->next;
  CU_ASSERT_EQUAL_FATAL(x->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL_FATAL(x->nchunks, 3);
  TL_ASSERT_STR(x->chunks[2], "z");
  CU_ASSERT_EQUAL(x->drop_after, 3);
  CU_ASSERT(close_to(x->interval, 0.1)); /* (300 - 100) ms over 2 gaps */
  sim__step_free(s);
  s = decide(sc, 0, "hash:first", 3);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_DROP);
  sim__step_free(s);
  s = decide(sc, 0, "hash:first", 4); /* the last step repeats */
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_DROP);
  sim__step_free(s);
  s = decide(sc, 0, "hash:third", 1); /* key 7: a stream that stalls */
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL(s->stall_after, 2);
  CU_ASSERT(s->stall < 0);
  CU_ASSERT(close_to(s->interval, 0.05));
  sim__step_free(s);
  s = decide(sc, 0, "hash:fourth", 1); /* beyond the log: the last request */
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_STREAM);
  sim__step_free(s);
  sim__scenario_free(sc);
}

static void test_jsonl_bodies(void) {
  const char *log =
      /* an Anthropic error body */
      "{\"status\":529,\"body\":\"{\\\"type\\\":\\\"error\\\",\\\"error\\\":{\\\"type\\\":"
      "\\\"overloaded_error\\\",\\\"message\\\":\\\"Overloaded\\\"}}\"}\n"
      /* a 200 that is not JSON */
      "{\"status\":200,\"body\":\"<html>502 Bad Gateway</html>\"}\n"
      /* a 200 excerpt cut short: not garbage */
      "{\"status\":200,\"body\":\"{\\\"id\\\":\\\"chatcmpl-1\\\",\\\"choi\"}\n"
      /* an Anthropic message, and an SSE body */
      "{\"status\":200,\"body\":{\"content\":[{\"type\":\"text\",\"text\":\"one \"},"
      "{\"type\":\"text\",\"text\":\"two\"}],\"usage\":{\"input_tokens\":4,\"output_tokens\":2}}}\n"
      "{\"status\":200,\"headers\":{\"content-type\":\"text/event-stream\"},\"body\":\"event: "
      "content_block_delta\\ndata: {\\\"type\\\":\\\"content_block_delta\\\",\\\"delta\\\":"
      "{\\\"text\\\":\\\"hi\\\"}}\\n\\ndata: {\\\"type\\\":\\\"error\\\",\\\"error\\\":"
      "{\\\"type\\\":\\\"overloaded_error\\\",\\\"message\\\":\\\"Overloaded\\\"}}\\n\\n\"}\n"
      /* an early close, and top-level error fields */
      "{\"status\":200,\"error\":\"truncated\",\"bytes\":17}\n"
      "{\"status\":400,\"code\":\"context_length_exceeded\",\"message\":\"too long\"}\n"
      "{\"status\":503,\"error\":\"upstream connect error\"}\n";
  sim_scenario *sc = imp_load(log, NULL);
  sim_step *s = decide(sc, 0, "k", 1);
  CU_ASSERT_EQUAL(s->status, 529);
  TL_ASSERT_STR(s->type, "overloaded_error");
  TL_ASSERT_STR(s->message, "Overloaded");
  sim__step_free(s);
  s = decide(sc, 0, "k", 2);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_GARBAGE);
  TL_ASSERT_STR(s->body, "<html>502 Bad Gateway</html>");
  sim__step_free(s);
  s = decide(sc, 0, "k", 3);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_CHAT);
  CU_ASSERT_PTR_NULL(s->content);
  sim__step_free(s);
  s = decide(sc, 0, "k", 4);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_CHAT);
  TL_ASSERT_STR(s->content, "one two");
  CU_ASSERT_EQUAL(s->usage_in, 4);
  sim__step_free(s);
  s = decide(sc, 0, "k", 5);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL(s->nchunks, 1);
  CU_ASSERT_EQUAL(s->error_after, 1);
  TL_ASSERT_STR(s->type, "overloaded_error");
  sim__step_free(s);
  s = decide(sc, 0, "k", 6);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_TRUNCATE);
  CU_ASSERT_EQUAL(s->at, 17);
  CU_ASSERT_EQUAL(s->early_close, 1);
  CU_ASSERT_EQUAL(s->next->kind, SIM_STEP_CHAT);
  sim__step_free(s);
  s = decide(sc, 0, "k", 7);
  TL_ASSERT_STR(s->code, "context_length_exceeded");
  TL_ASSERT_STR(s->message, "too long");
  sim__step_free(s);
  s = decide(sc, 0, "k", 8);
  CU_ASSERT_EQUAL(s->status, 503);
  TL_ASSERT_STR(s->message, "upstream connect error");
  sim__step_free(s);
  sim__scenario_free(sc);
}

static void test_retry_after_forms(void) {
  const char *log =
      "{\"status\":429,\"headers\":{\"retry-after\":\"1.5\"}}\n"
      "{\"status\":429,\"headers\":{\"retry-after\":\"2.0\"}}\n"
      "{\"status\":429,\"headers\":{\"retry-after\":\"soon\"}}\n"
      "{\"status\":429,\"headers\":{\"retry-after\":\"Wed, 01 May 2024 12:00:31 GMT\","
      "\"date\":\"Wed, 01 May 2024 12:00:01 GMT\"}}\n"
      "{\"status\":429,\"headers\":{\"retry-after\":\"Wed, 01 May 2024 11:00:00 GMT\","
      "\"date\":\"Wed, 01 May 2024 12:00:01 GMT\"}}\n"
      "{\"status\":429,\"t\":\"2024-05-01T12:00:00Z\",\"latency_ms\":1000,"
      "\"headers\":{\"retry-after\":\"Wed, 01 May 2024 12:00:11 GMT\"}}\n"
      "{\"status\":503,\"headers\":{\"retry-after\":\"0\",\"retry-after-ms\":\"250.5\","
      "\"x-should-retry\":\"true\"}}\n"
      "{\"status\":429,\"headers\":{\"retry-after-ms\":\"-3\"}}\n";
  for (int raw = 0; raw <= 1; raw++) {
    imp_opts o = {.raw_dates = raw};
    char err[SIM_ERRLEN];
    char *lua = imp_with(log, strlen(log), &o, NULL, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
    sim_scenario *sc = load(lua);
    free(lua);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    sim_step *s = decide(sc, 0, "k", 1);
    CU_ASSERT(s->has_retry_after && close_to(s->retry_after, 1.5));
    sim__step_free(s);
    s = decide(sc, 0, "k", 2); /* "2.0" would come back as "2": kept raw */
    TL_ASSERT_STR(s->retry_after_raw, "2.0");
    sim__step_free(s);
    s = decide(sc, 0, "k", 3);
    TL_ASSERT_STR(s->retry_after_raw, "soon");
    sim__step_free(s);
    s = decide(sc, 0, "k", 4); /* 30 s ahead of the Date header */
    if (raw) {
      TL_ASSERT_STR(s->retry_after_raw, "Wed, 01 May 2024 12:00:31 GMT");
    } else {
      CU_ASSERT(s->has_retry_after_date && close_to(s->retry_after_date, 30));
      CU_ASSERT_PTR_NULL(s->retry_after_raw);
    }
    sim__step_free(s);
    s = decide(sc, 0, "k", 5); /* a date in the past: kept as sent */
    TL_ASSERT_STR(s->retry_after_raw, "Wed, 01 May 2024 11:00:00 GMT");
    sim__step_free(s);
    s = decide(sc, 0, "k", 6); /* no Date header: from t + latency */
    CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
    if (!raw) CU_ASSERT(s->next->has_retry_after_date && close_to(s->next->retry_after_date, 10));
    sim__step_free(s);
    s = decide(sc, 0, "k", 7);
    CU_ASSERT(s->has_retry_after && close_to(s->retry_after, 0));
    CU_ASSERT(s->has_retry_after_ms && close_to(s->retry_after_ms, 250.5));
    TL_ASSERT_STR(step_header(s, "x-should-retry"), "true");
    sim__step_free(s);
    s = decide(sc, 0, "k", 8); /* not a number: sent as a header, as it was */
    CU_ASSERT(!s->has_retry_after_ms);
    TL_ASSERT_STR(step_header(s, "retry-after-ms"), "-3");
    sim__step_free(s);
    sim__scenario_free(sc);
  }
}

/* ------------------------------------------------------------ secrets */

static void test_secrets_stripped(void) {
  const char *log =
      "{\"status\":401,\"headers\":{\"Authorization\":\"Bearer AUTHSECRET1\",\"x-api-key\":"
      "\"APIKEYSECRET2\",\"api-key\":\"AZURESECRET3\",\"Cookie\":\"c=COOKIESECRET4\","
      "\"set-cookie\":\"s=SETCOOKIESECRET5\",\"proxy-authorization\":\"Basic PROXYSECRET6\","
      "\"x-custom-api-key\":\"CUSTOMSECRET7\",\"openai-organization\":\"org-ORGSECRET8\","
      "\"x-client-secret\":\"CLIENTSECRET9\",\"www-authenticate\":\"Bearer realm=x\"},"
      "\"body\":{\"error\":{\"message\":\"Incorrect API key provided: sk-proj-KEYSECRET10abcd. "
      "Header was Bearer TOKENSECRET11xyz\",\"code\":\"invalid_api_key\"}}}\n"
      "{\"status\":200,\"stream\":true,\"chunks\":[\"your key is sk-ant-CHUNKSECRET12xx\"]}\n";
  char err[SIM_ERRLEN];
  char *lua = imp(log, NULL, err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  static const char *const secrets[] = {
      "AUTHSECRET1",  "APIKEYSECRET2", "AZURESECRET3",  "COOKIESECRET4",
      "SETCOOKIESECRET5", "PROXYSECRET6", "CUSTOMSECRET7", "ORGSECRET8",
      "CLIENTSECRET9", "KEYSECRET10",  "TOKENSECRET11", "CHUNKSECRET12", NULL};
  for (int i = 0; secrets[i] != NULL; i++) {
    if (strstr(lua, secrets[i]) != NULL) fprintf(stderr, "\n  %s was written\n", secrets[i]);
    CU_ASSERT_PTR_NULL(strstr(lua, secrets[i]));
  }
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_step *s = decide(sc, 0, "k", 1);
  TL_ASSERT_STR(s->message, "Incorrect API key provided: sk-[redacted]. Header was Bearer "
                            "[redacted]");
  TL_ASSERT_STR(step_header(s, "www-authenticate"), "Bearer realm=x"); /* not a credential */
  CU_ASSERT_EQUAL(s->nheaders, 1);
  sim__step_free(s);
  sim__scenario_free(sc);
}

/* ------------------------------------------------------------ hostile strings */

static void test_hostile_strings(void) {
  /* Every character Lua could trip on, bytes that are not UTF-8, and a
     would-be escape from the string into code. */
  const char *content = "q\" b\\ n\n r\r t\t bel\a del\x7f ]] ]=] [[ --[[ \"}) os.exit(1) --"
                        " \xff\xfe bad utf8 \xc3\xa9t\xc3\xa9 ok \xe2\x82\xac \xf0\x9f\x98\x80"
                        " \xed\xa0\x80 surrogate \xc0\xaf overlong 1\0012";
  char json[12288], body[1024];
  size_t k = 0;
  for (const unsigned char *p = (const unsigned char *)content; *p && k < sizeof body - 8; p++) {
    if (*p == '"' || *p == '\\') body[k++] = '\\', body[k++] = (char)*p;
    else if (*p < 0x20) k += (size_t)snprintf(body + k, 8, "\\u%04x", *p);
    else body[k++] = (char)*p;
  }
  body[k] = '\0';
  snprintf(json, sizeof json,
           "{\"key\":\"line\\nbreak ]] --\",\"status\":200,\"content\":\"%s\","
           "\"headers\":{\"x-ok\":\"fine ]]\\\"\",\"x-crlf\":\"a\\r\\nx-injected: 1\","
           "\"bad name\":\"v\",\"x-long\":\"%0*d\"}}\n"
           "{\"key\":\"2\",\"status\":200,\"body\":\"<html>]]==] \\\" \\\\ \\u0001</html>\"}\n",
           body, 9000, 0);
  imp_opts o = {.source = "evil\n]]-- name.jsonl", .name = "a \"name\" ]] \n--x"};
  char err[SIM_ERRLEN];
  char *lua = imp_with(json, strlen(json), &o, NULL, err);
  if (lua == NULL) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NULL(strstr(lua, "x-injected: 1\""));
  CU_ASSERT_PTR_NULL(strstr(lua, "\"bad name\""));
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  TL_ASSERT_STR(sim__scenario_name(sc), "a \"name\" ]] ?--x");
  sim_step *s = decide(sc, 0, "k1", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_CHAT);
  TL_ASSERT_STR(s->content, content); /* byte for byte (up to the NUL) */
  TL_ASSERT_STR(step_header(s, "x-ok"), "fine ]]\"");
  CU_ASSERT_PTR_NULL(step_header(s, "x-crlf"));
  CU_ASSERT_PTR_NULL(step_header(s, "x-long")); /* over 8192 bytes */
  sim__step_free(s);
  s = decide(sc, 0, "k2", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_GARBAGE);
  TL_ASSERT_STR(s->body, "<html>]]==] \" \\ \001</html>");
  sim__step_free(s);
  sim__scenario_free(sc);
}

/* ------------------------------------------------------------ HAR */

static void test_har(void) {
  size_t len;
  char *har = slurp("sample.har", &len);
  imp_stats st;
  char err[SIM_ERRLEN];
  imp_opts o = {0};
  char *lua = imp_with(har, len, &o, &st, err);
  free(har);
  if (lua == NULL) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_EQUAL(st.format, IMP_HAR);
  CU_ASSERT_EQUAL(st.attempts, 4);
  CU_ASSERT_EQUAL(st.requests, 2);
  CU_ASSERT_EQUAL(st.skipped, 1);
  CU_ASSERT_PTR_NULL(strstr(lua, "HARSECRET"));
  CU_ASSERT_PTR_NULL(strstr(lua, "SECRETCOOKIE"));
  CU_ASSERT_PTR_NULL(strstr(lua, "SECRETORG"));
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_step *s = decide(sc, 0, "a", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT(close_to(s->seconds, 0.1)); /* timings.wait */
  CU_ASSERT_EQUAL(s->next->status, 429);
  CU_ASSERT(close_to(s->next->retry_after, 20));
  TL_ASSERT_STR(step_header(s->next, "x-ratelimit-remaining-requests"), "0");
  CU_ASSERT_EQUAL(s->next->nheaders, 1); /* no :status, cookie, org, request id */
  TL_ASSERT_STR(s->next->message, "Rate limit reached. Incorrect API key provided: sk-[redacted]");
  sim__step_free(s);
  s = decide(sc, 0, "a", 2);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_RESET);
  sim__step_free(s);
  s = decide(sc, 0, "a", 3);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT_EQUAL_FATAL(s->next->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL_FATAL(s->next->nchunks, 2);
  TL_ASSERT_STR(s->next->chunks[0], "Hel");
  TL_ASSERT_STR(s->next->chunks[1], "lo");
  CU_ASSERT(close_to(s->next->interval, 0.6)); /* timings.receive over one gap */
  CU_ASSERT_EQUAL(s->next->no_end, 0);
  sim__step_free(s);
  s = decide(sc, 0, "b", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT_EQUAL(s->next->status, 529);
  TL_ASSERT_STR(s->next->type, "overloaded_error");
  sim__step_free(s);
  sim__scenario_free(sc);
}

/* ------------------------------------------------------------ traces */

static void test_trace_providers(void) {
  size_t len;
  char *tr = slurp("trace_providers.jsonl", &len);
  imp_stats st;
  char err[SIM_ERRLEN];
  imp_opts o = {0};
  char *lua = imp_with(tr, len, &o, &st, err);
  free(tr);
  if (lua == NULL) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_EQUAL(st.format, IMP_TRACE);
  CU_ASSERT_EQUAL(st.attempts, 4);
  CU_ASSERT_EQUAL(st.providers, 2);
  CU_ASSERT_EQUAL(st.skipped, 2); /* the lookup and the 405 */
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  CU_ASSERT_EQUAL_FATAL(sim__scenario_nproviders(sc), 2);
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 0), "primary");
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 1), "backup");
  CU_ASSERT(sim__scenario_has_effects(sc));
  sim_step *s = decide(sc, 0, "x", 1);
  CU_ASSERT_EQUAL(s->status, 503);
  CU_ASSERT(close_to(s->retry_after, 1));
  TL_ASSERT_STR(s->code, "service_unavailable");
  CU_ASSERT_EQUAL(s->nheaders, 0); /* the server's own request id is not replayed */
  sim__step_free(s);
  s = decide(sc, 0, "x", 2); /* its end line was cut off: it never answered */
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_HANG);
  sim__step_free(s);
  s = decide(sc, 1, "y", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_DELAY);
  CU_ASSERT(close_to(s->seconds, 0.5));
  TL_ASSERT_STR(s->next->content, "from backup");
  sim__step_free(s);
  s = decide(sc, -1, "idem:op-9", 1);
  CU_ASSERT_EQUAL_FATAL(s->kind, SIM_STEP_EFFECT);
  CU_ASSERT_EQUAL(s->apply, 1);
  CU_ASSERT_EQUAL_FATAL(s->next->kind, SIM_STEP_DROP);
  sim__step_free(s);
  sim__scenario_free(sc);
}

/* A trace of one logical request whose attempts end in every way. */
static void test_trace_every_end(void) {
  static const char *const ends[] = {
      "\"step\":\"reset\",\"status\":0,\"how\":\"reset\"",
      "\"step\":\"stream\",\"status\":200,\"how\":\"dropped\",\"chunks\":2,\"text\":\"one two \"",
      "\"step\":\"truncate\",\"status\":200,\"how\":\"early_close\",\"bytes\":40,\"text\":\"\"",
      "\"step\":\"truncate\",\"status\":503,\"how\":\"complete\",\"bytes\":10,\"code\":\"x\"",
      "\"step\":\"stream\",\"status\":200,\"how\":\"client_abort\",\"chunks\":1,\"stalled\":true,"
      "\"text\":\"a\"",
      "\"step\":\"garbage\",\"status\":200,\"how\":\"complete\",\"bytes\":99",
      "\"step\":\"delay\",\"status\":0,\"how\":\"client_abort\"",
      "\"step\":\"fail\",\"status\":500,\"how\":\"error\"",
      "\"step\":\"fail\",\"status\":429,\"how\":\"complete\",\"headers\":{\"retry-after\":"
      "\"Wed, 21 Oct 2015 07:28:00 GMT\"}",
      "\"step\":\"fail\",\"status\":429,\"how\":\"complete\",\"retry_after_ms\":3000,"
      "\"headers\":{\"retry-after\":\"Thu, 01 Jan 2026 00:00:05 GMT\"}",
      "\"step\":\"chat\",\"status\":200,\"how\":\"complete\",\"delay_ms\":250,\"text\":\"done\","
      "\"headers\":{\"request-id\":\"req_9\",\"x-extra\":\"1\"}",
      NULL};
  char text[8192];
  size_t off = (size_t)snprintf(text, sizeof text,
                                "{\"ev\":\"session\",\"t\":0,\"time_scale\":0.5,"
                                "\"start\":\"2026-01-01T00:00:00Z\"}\n");
  int n = 0;
  for (; ends[n] != NULL; n++) {
    off += (size_t)snprintf(text + off, sizeof text - off,
                            "{\"ev\":\"arrive\",\"t\":%d,\"id\":%d,\"key\":\"hash:1\",\"attempt\":%d,"
                            "\"provider\":\"primary\",\"method\":\"POST\",\"path\":"
                            "\"/v1/messages\",\"dialect\":\"anthropic\"}\n"
                            "{\"ev\":\"end\",\"t\":%d,\"id\":%d,%s}\n",
                            n * 1000, n + 1, n + 1, n * 1000 + 200, n + 1, ends[n]);
  }
  char err[SIM_ERRLEN];
  imp_stats st;
  char *lua = imp(text, &st, err);
  if (lua == NULL) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_EQUAL(st.attempts, n);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "time scale 0.5"));
  sim_scenario *sc = load(lua);
  free(lua);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_step *s[16];
  for (int i = 0; i < n; i++) s[i] = decide(sc, 0, "k", i + 1);
  CU_ASSERT_EQUAL(s[0]->kind, SIM_STEP_RESET);
  CU_ASSERT_EQUAL(s[1]->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL(s[1]->drop_after, 2);
  CU_ASSERT_EQUAL_FATAL(s[1]->nchunks, 2);
  TL_ASSERT_STR(s[1]->chunks[0], "one ");
  TL_ASSERT_STR(s[1]->chunks[1], "two ");
  CU_ASSERT(close_to(s[1]->interval, 0.2));
  CU_ASSERT_EQUAL(s[2]->kind, SIM_STEP_TRUNCATE);
  CU_ASSERT_EQUAL(s[2]->early_close, 1);
  CU_ASSERT_EQUAL(s[2]->at, 40);
  CU_ASSERT(strlen(s[2]->next->content) >= 40); /* long enough to be cut at 40 */
  CU_ASSERT_EQUAL(s[3]->kind, SIM_STEP_TRUNCATE);
  CU_ASSERT_EQUAL(s[3]->early_close, 0);
  CU_ASSERT_EQUAL(s[3]->next->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s[3]->next->status, 503);
  CU_ASSERT_EQUAL(s[4]->kind, SIM_STEP_STREAM);
  CU_ASSERT_EQUAL(s[4]->stall_after, 1);
  CU_ASSERT_EQUAL(s[5]->kind, SIM_STEP_GARBAGE);
  CU_ASSERT_PTR_NULL(s[5]->body);
  CU_ASSERT_EQUAL(s[6]->kind, SIM_STEP_HANG);
  CU_ASSERT_EQUAL(s[7]->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s[7]->status, 500);
  TL_ASSERT_STR(s[8]->retry_after_raw, "Wed, 21 Oct 2015 07:28:00 GMT");
  CU_ASSERT(s[9]->has_retry_after_date && close_to(s[9]->retry_after_date, 3));
  CU_ASSERT_EQUAL(s[10]->kind, SIM_STEP_DELAY);
  CU_ASSERT(close_to(s[10]->seconds, 0.25));
  TL_ASSERT_STR(s[10]->next->content, "done");
  TL_ASSERT_STR(step_header(s[10]->next, "x-extra"), "1");
  CU_ASSERT_PTR_NULL(step_header(s[10]->next, "request-id"));
  for (int i = 0; i < n; i++) sim__step_free(s[i]);
  sim__scenario_free(sc);
}

/* ------------------------------------------------------------ errors */

typedef struct bad_case {
  const char *text;
  const char *err; /* a trailing '*' matches as a prefix */
} bad_case;

static void test_bad_input(void) {
  static const bad_case cases[] = {
      {"{\"status\":200}\n{\"status\":\n", "log.jsonl:2: not valid JSON (near column *"},
      {"\n\n{\"status\":700}\n",
       "log.jsonl:3: 'status' must be an HTTP status from 200 to 599, or 0 for no response"},
      {"{\"status\":101}", "log.jsonl:1: 'status' must be an HTTP status*"},
      {"{\"status\":0,\"error\":\"boom\"}",
       "log.jsonl:1: unknown error 'boom' for an attempt without a status: use \"timeout\", "
       "\"reset\" or \"closed\""},
      {"{\"status\":200,\"error\":\"boom\"}", "log.jsonl:1: unknown error 'boom' with status 200*"},
      {"{\"status\":200} {\"status\":200}",
       "log.jsonl:1: unexpected text after the JSON object (column 16): one attempt per line"},
      {"", "log.jsonl: no attempts found"},
      {"  \n\n", "log.jsonl: no attempts found"},
      {"[1,2]\n", "log.jsonl:1: expected an object, one attempt per line"},
      {"{\"t\":\"yesterday\",\"status\":200}",
       "log.jsonl:1: 't' must be milliseconds or an ISO-8601 date-time"},
      {"{\"status\":200,\"headers\":[1]}", "log.jsonl:1: 'headers' entries need a name"},
      {"{\"status\":200,\"headers\":{\"a\":true}}", "log.jsonl:1: header 'a' must be a string"},
      {"{\"status\":200,\"chunks\":[1]}", "log.jsonl:1: 'chunks' must be a list of strings"},
      {"{\"status\":200,\"latency_ms\":-5}",
       "log.jsonl:1: 'latency_ms' must be a number of milliseconds >= 0"},
      {"{\"status\":200,\"provider\":\"Bad Name\"}",
       "log.jsonl:1: provider name 'Bad Name' must be 1 to 32 of a-z 0-9 _ - (and not \"v1\")"},
      {"{\"status\":200,\"key\":{}}", "log.jsonl:1: 'key' must be a string or a number"},
      {"{\"status\":200,\"error\":5}", "log.jsonl:1: 'error' must be a string*"},
      {"{\n  \"log\": {\"entries\": [\n    {\"request\": {}}]}}\n",
       "log.jsonl: log.entries[0]: request.url and request.method are required"},
      {"{\n  \"log\": {\"entries\": [\n    {\"request\": ,\n", "log.jsonl:3: not valid JSON: a HAR*"},
      {"{\n  \"log\": {\"pages\": []}}\n",
       "log.jsonl: not a HAR file: log.entries (a list) is missing"},
      {"{\"log\":{\"entries\":[{\"request\":{\"method\":\"GET\",\"url\":\"https://x/\"}}]}}",
       "log.jsonl: no attempt to replay (1 entries left out: only model API calls "
       "and /effects/ are kept)"},
      {"{\"ev\":\"session\"}\n{\"ev\":\"end\",\"id\":9}\n",
       "log.jsonl:2: end of arrival 9, which never arrived"},
      {"{\"ev\":\"session\"}\nnot json\n{\"ev\":\"done\"}\n",
       "log.jsonl:2: not valid JSON: a trace has one event object per line"},
      {"{\"ev\":\"arrive\",\"id\":1,\"method\":\"POST\",\"dialect\":\"openai\"}\n"
       "{\"ev\":\"arrive\",\"id\":1}\n",
       "log.jsonl:2: arrival id 1 appears twice"},
      {"{\"ev\":\"session\"}\n{\"x\":1}\n", "log.jsonl:2: not a trace event (no \"ev\" field)"},
      {NULL, NULL}};
  for (int i = 0; cases[i].text != NULL; i++) {
    char err[SIM_ERRLEN];
    char *lua = imp(cases[i].text, NULL, err);
    CU_ASSERT_PTR_NULL(lua);
    free(lua);
    size_t wl = strlen(cases[i].err);
    int ok = cases[i].err[wl - 1] == '*' ? strncmp(err, cases[i].err, wl - 1) == 0
                                        : strcmp(err, cases[i].err) == 0;
    if (!ok) fprintf(stderr, "\n  case %d: got \"%s\"\n  want \"%s\"\n", i, err, cases[i].err);
    CU_ASSERT(ok);
  }
}

static void test_bounds(void) {
  char err[SIM_ERRLEN];
  char *lua = NULL;
  imp_opts o = {.source = "big.jsonl"};
  /* Input over 64 MiB: refused before it is read. */
  CU_ASSERT_EQUAL(imp_buffer("x", IMP_MAX_INPUT + 1, &o, &lua, NULL, err), SIM_EINVAL);
  TL_ASSERT_STR(err, "big.jsonl: larger than 67108864 bytes");
  /* A line over 1 MiB. */
  size_t n = IMP_MAX_LINE + 100;
  char *big = malloc(n + 64);
  CU_ASSERT_PTR_NOT_NULL_FATAL(big);
  int k = snprintf(big, 64, "{\"status\":200}\n{\"status\":200,\"content\":\"");
  memset(big + k, 'a', n);
  strcpy(big + k + n, "\"}\n");
  CU_ASSERT_EQUAL(imp_buffer(big, strlen(big), &o, &lua, NULL, err), SIM_EINVAL);
  TL_ASSERT_STR(err, "big.jsonl:2: line longer than 1048576 bytes");
  free(big);
  /* Output over the scenario file limit: 40 answers of 30000 bytes. */
  size_t line = 30100, lines = 40;
  big = malloc(line * lines + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(big);
  size_t off = 0;
  for (size_t i = 0; i < lines; i++) {
    off += (size_t)sprintf(big + off, "{\"status\":200,\"content\":\"");
    memset(big + off, 'b', 30000);
    off += 30000;
    off += (size_t)sprintf(big + off, "\"}\n");
  }
  CU_ASSERT_EQUAL(imp_buffer(big, off, &o, &lua, NULL, err), SIM_EINVAL);
  TL_ASSERT_STR(err, "big.jsonl: the scenario would be larger than 1048576 bytes (the scenario "
                     "file limit) with 40 attempts: import a shorter log");
  free(big);
  /* Many small attempts: over the limit with a comment each, so written
     without them. */
  lines = 30000;
  big = malloc(lines * 40 + 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(big);
  off = 0;
  for (size_t i = 0; i < lines; i++) off += (size_t)sprintf(big + off, "{\"error\":\"reset\"}\n");
  CU_ASSERT_EQUAL_FATAL(imp_buffer(big, off, &o, &lua, NULL, err), SIM_OK);
  free(big);
  CU_ASSERT(strlen(lua) <= IMP_MAX_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "Comments per attempt were left out"));
  sim_scenario *sc = load(lua);
  free(lua);
  lua = NULL;
  CU_ASSERT_PTR_NOT_NULL(sc);
  sim__scenario_free(sc);
  /* A NUL byte, a missing file, bad arguments. */
  CU_ASSERT_EQUAL(imp_buffer("{}\n{\0}", 7, &o, &lua, NULL, err), SIM_EINVAL);
  TL_ASSERT_STR(err, "big.jsonl:2: a NUL byte: this is not a text log");
  CU_ASSERT_EQUAL(imp_file("/nonexistent/x.jsonl", NULL, &lua, NULL, err), SIM_EIO);
  TL_ASSERT_STR(err, "/nonexistent/x.jsonl: cannot open: No such file or directory");
  CU_ASSERT_EQUAL(imp_buffer(NULL, 3, NULL, &lua, NULL, err), SIM_EINVAL);
  CU_ASSERT_PTR_NULL(lua);
}

/* Every prefix of each input either imports into a scenario that loads,
   or fails with a message; none crashes or leaks (under ASan). */
static void test_every_prefix(void) {
  const char *jsonl =
      "{\"t\":0,\"key\":\"a\",\"status\":429,\"latency_ms\":12,\"headers\":{\"retry-after\":"
      "\"2\"},\"body\":\"{\\\"error\\\":{\\\"code\\\":\\\"x\\\"}}\"}\n"
      "{\"t\":5,\"key\":\"a\",\"status\":200,\"stream\":true,\"chunks\":[\"a\",\"b\"]}\n"
      "{\"t\":9,\"key\":\"b\",\"error\":\"reset\"}\n";
  size_t tlen, hlen;
  char *trace = slurp("trace_providers.jsonl", &tlen);
  char *har = slurp("sample.har", &hlen);
  struct {
    const char *text;
    size_t len;
    size_t step;
  } inputs[] = {{jsonl, strlen(jsonl), 1}, {trace, tlen, 3}, {har, hlen, 97}};
  int loaded = 0, failed = 0;
  for (size_t in = 0; in < 3; in++) {
    for (size_t cut = 0; cut <= inputs[in].len; cut += inputs[in].step) {
      char *copy = malloc(cut + 1);
      CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
      memcpy(copy, inputs[in].text, cut);
      copy[cut] = '\0';
      char err[SIM_ERRLEN] = "";
      imp_opts o = {0};
      char *lua = imp_with(copy, cut, &o, NULL, err);
      free(copy);
      if (lua == NULL) {
        CU_ASSERT(strncmp(err, "log.jsonl", 9) == 0);
        failed++;
        continue;
      }
      if (cut % (inputs[in].step * 7) == 0 || cut == inputs[in].len) {
        sim_scenario *sc = load(lua);
        CU_ASSERT_PTR_NOT_NULL(sc);
        sim__scenario_free(sc);
        loaded++;
      }
      free(lua);
    }
  }
  CU_ASSERT(loaded > 10);
  CU_ASSERT(failed > 10);
  free(trace);
  free(har);
}

int suite_import(void) {
  CU_pSuite s = CU_add_suite("import", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "jsonl_basic", test_jsonl_basic) ||
      !CU_add_test(s, "jsonl_requests_and_outcomes", test_jsonl_requests_and_outcomes) ||
      !CU_add_test(s, "jsonl_bodies", test_jsonl_bodies) ||
      !CU_add_test(s, "retry_after_forms", test_retry_after_forms) ||
      !CU_add_test(s, "secrets_stripped", test_secrets_stripped) ||
      !CU_add_test(s, "hostile_strings", test_hostile_strings) ||
      !CU_add_test(s, "har", test_har) ||
      !CU_add_test(s, "trace_providers", test_trace_providers) ||
      !CU_add_test(s, "trace_every_end", test_trace_every_end) ||
      !CU_add_test(s, "bad_input", test_bad_input) ||
      !CU_add_test(s, "bounds", test_bounds) ||
      !CU_add_test(s, "every_prefix", test_every_prefix))
    return CU_get_error();
  return 0;
}
