/*
 * test_alloc_fail.c - the guard when memory runs out: a full session (a
 * retried chat, its client event, a streamed chat, a side effect whose
 * result is unknown; then, on a second handle, Bedrock and Cohere
 * providers that fail for good falling back to Ollama's NDJSON stream,
 * Bedrock's event stream, and Cohere's typed stream) against the scripted fake transport, with the Nth
 * allocation failing, for every N up to the session's total. For every N:
 * no crash, every call returns GUARD_OK or GUARD_ENOMEM, the session ends
 * with GUARD_ENOMEM unless the failed allocation did not matter (the fake
 * transport's own copy of a request) and every result is the same as with no
 * failure: never an attempt misread because our memory ran out. After
 * everything is freed the number of live allocations is back where it
 * started (a leak check by counting). Then again with every allocation from
 * the Nth on failing.
 *
 * The file replaces malloc, calloc, realloc and free for the whole test
 * program (glibc's strdup and strndup, cJSON and libcurl call them); they
 * count, fail when armed, and otherwise forward to glibc's own allocator.
 * Under AddressSanitizer, which owns the allocator, the suite only says it
 * was skipped.
 */
#include "fake.h"
#include "guard/guard_int.h"

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define AF_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define AF_SKIP 1
#endif
#endif

#ifndef AF_SKIP

#include "fail_alloc.h"

/* ------------------------------------------------------- the session */

#define SSE_HDR "content-type: text/event-stream\n"
#define OAI_CHUNK(t) \
  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" t "\"}}]}\n\n"
#define OAI_USAGE \
  "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":6,\"completion_tokens\":5}}\n\n"
#define OLLAMA_STREAM \
  "{\"message\":{\"content\":\"hel\"},\"done\":false}\n" \
  "{\"message\":{\"content\":\"lo\"},\"done\":true,\"prompt_eval_count\":6,\"eval_count\":5}\n"
#define COHERE_STREAM \
  "event: message-start\ndata: {\"type\":\"message-start\"}\n\n" \
  "event: content-delta\ndata: {\"type\":\"content-delta\",\"delta\":" \
  "{\"message\":{\"content\":{\"text\":\"hello\"}}}}\n\n" \
  "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":" \
  "{\"finish_reason\":\"COMPLETE\"}}\n\n"
#define APPLIED "{\"key\":\"op-1\",\"applied\":true,\"result\":{\"id\":42}}"
#define NOT_APPLIED "{\"key\":\"op-1\",\"applied\":false}"

/* What a session produced, to compare a run that absorbed a failure with
 * the run that failed nothing. */
typedef struct session {
  int rc;        /* GUARD_OK or the first error code */
  char sig[512]; /* outcomes, texts and attempt kinds, in order */
} session;

static void sig_add(session *s, const guard_result *r) {
  size_t len = strlen(s->sig);
  int n = snprintf(s->sig + len, sizeof s->sig - len, "%s:%.40s:%d:",
                   guard_outcome_name(r->outcome), r->text, r->nattempts);
  for (int i = 0; n > 0 && i < r->nattempts; i++) {
    len = strlen(s->sig);
    n = snprintf(s->sig + len, sizeof s->sig - len, "%s,",
                 guard_kind_name(r->attempts[i].kind));
  }
  len = strlen(s->sig);
  snprintf(s->sig + len, sizeof s->sig - len, "|");
}

/* Checks what any result must be, whatever failed on the way. */
static int result_ok(const guard_result *r) {
  if (r == NULL || r->text == NULL || r->nattempts < 0) return 0;
  if (r->nattempts > 0 && r->attempts == NULL) return 0;
  return 1;
}

/* Bedrock's ConverseStream answering "hello", as event stream messages
 * built here (no allocation: the sweep counts every one). */
static char BR_STREAM[1024];
static size_t br_len;

static void put32(char *p, uint32_t v) {
  for (int k = 0; k < 4; k++) p[k] = (char)(v >> (24 - 8 * k));
}

static void br_event(const char *type, const char *json) {
  char *m = BR_STREAM + br_len, *p = m + 12;
  size_t tl = strlen(type), jl = strlen(json);
  static const char MT[] = "\x0d:message-type\x07\x00\x05" "event";
  memcpy(p, MT, sizeof MT - 1);
  p += sizeof MT - 1;
  *p++ = 11;
  memcpy(p, ":event-type", 11);
  p += 11;
  *p++ = 7, *p++ = 0, *p++ = (char)tl;
  memcpy(p, type, tl);
  p += tl;
  size_t hlen = (size_t)(p - m - 12);
  memcpy(p, json, jl);
  p += jl;
  size_t total = (size_t)(p - m) + 4;
  put32(m, (uint32_t)total);
  put32(m + 4, (uint32_t)hlen);
  put32(m + 8, (uint32_t)crc32(0, (const Bytef *)m, 8));
  put32(p, (uint32_t)crc32(0, (const Bytef *)m, (uInt)(total - 4)));
  br_len += total;
}

static void br_build(void) {
  if (br_len) return;
  br_event("messageStart", "{\"role\":\"assistant\"}");
  br_event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"hel\"}}");
  br_event("contentBlockDelta", "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"lo\"}}");
  br_event("messageStop", "{\"stopReason\":\"end_turn\"}");
  br_event("metadata", "{\"usage\":{\"inputTokens\":6,\"outputTokens\":5}}");
}

/* The second handle: Bedrock, Cohere and Ollama, three streamed calls
 * (Bedrock and Cohere refuse, Ollama answers; Bedrock answers; Bedrock
 * refuses, Cohere answers). Returns GUARD_OK or the first error code. */
static int other_apis(session *s, fake *f) {
  static const guard_provider prov[] = {
      {"bedrock", "http://fake", GUARD_BEDROCK, NULL, "anthropic.claude-test:0", NULL},
      {"cohere", "http://fake", GUARD_COHERE, "co-test", "command-test", NULL},
      {"ollama", "http://fake", GUARD_OLLAMA, NULL, "llama-test", NULL}};
  guard_config cfg;
  fake_config(&cfg, f);
  cfg.providers = prov;
  cfg.nproviders = 3;
  guard *g = NULL;
  guard_result *r = NULL;
  guard_chat_request req = fake_request();
  req.stream = 1;
  int rc = guard_new(&cfg, &g, NULL);
  for (int call = 0; call < 3 && rc == GUARD_OK; call++) {
    rc = guard_chat(g, &req, &r);
    if (rc == GUARD_OK && !result_ok(r)) rc = 98;
    if (rc == GUARD_OK) sig_add(s, r);
    if (rc != GUARD_OK && r != NULL && rc < 90) rc = 96; /* no result on error */
    guard_result_free(r);
    r = NULL;
  }
  guard_free(g);
  return rc;
}

/* One session; stops at the first error code. Every call's result is
 * checked and freed here. */
static void run_session(session *s) {
  memset(s, 0, sizeof *s);
  fake f;
  fake_init(&f);
  f.split = 7; /* bodies arrive in pieces */
  fake_add(&f, (fake_step){.url_has = "/chat/", .status = 429,
                           .headers = "retry-after: 1\nx-request-id: req_1\n",
                           .body = ERR_OPENAI("requests", "rate_limit_exceeded"), .ms = 3});
  fake_add(&f, (fake_step){.url_has = "/chat/", .status = 200, .body = OK_OPENAI, .ms = 5});
  fake_add(&f, (fake_step){.url_has = "/chat/", .status = 200, .headers = SSE_HDR,
                           .body = OAI_CHUNK("hel") OAI_CHUNK("lo") OAI_USAGE
                                   "data: [DONE]\n\n", .ms = 5});
  fake_add(&f, (fake_step){.url_has = "/effects/send_email", .tx = GUARD_TX_CLOSED, .ms = 1});
  fake_add(&f, (fake_step){.url_has = "/effects/op-", .status = 200, .body = NOT_APPLIED});
  fake_add(&f, (fake_step){.url_has = "/effects/send_email", .status = 200, .body = APPLIED});
  br_build();
#define BR_400 .status = 400, .headers = "x-amzn-errortype: ValidationException\n", \
                .body = "{\"message\":\"bad\"}"
  fake_add(&f, (fake_step){.url_has = "/converse-stream", BR_400});
  fake_add(&f, (fake_step){.url_has = "/v2/chat", .status = 400, .body = "{\"message\":\"bad\"}"});
  fake_add(&f, (fake_step){.url_has = "/api/chat", .status = 200,
                           .headers = "content-type: application/x-ndjson\n", .body = OLLAMA_STREAM});
  fake_add(&f, (fake_step){.url_has = "/converse-stream", .status = 200,
                           .headers = "content-type: application/vnd.amazon.eventstream\n",
                           .body = BR_STREAM, .body_len = br_len});
  fake_add(&f, (fake_step){.url_has = "/converse-stream", BR_400});
  fake_add(&f, (fake_step){.url_has = "/v2/chat", .status = 200, .headers = SSE_HDR,
                           .body = COHERE_STREAM});
  guard_config cfg;
  fake_config(&cfg, &f);
  guard *g = NULL;
  guard_result *r = NULL;
  guard_chat_request req = fake_request();
  char err[GUARD_ERRLEN] = "";

  s->rc = guard_new(&cfg, &g, err);
  if (s->rc != GUARD_OK) {
    if (g != NULL || err[0] == '\0') s->rc = 99; /* an error leaves nothing, says why */
    goto out;
  }
  s->rc = guard_chat(g, &req, &r);
  if (s->rc != GUARD_OK) goto out;
  if (!result_ok(r)) {
    s->rc = 98;
    goto out;
  }
  sig_add(s, r);
  char *js = guard_result_json(r, "guard", 1, 12.5);
  guard_result_free(r);
  r = NULL;
  if (js == NULL) {
    s->rc = GUARD_ENOMEM;
    goto out;
  }
  af_armed = 0; /* the check is not the code under test */
  cJSON *o = cJSON_Parse(js);
  if (!cJSON_IsObject(o)) s->rc = 97;
  cJSON_Delete(o);
  af_armed = 1;
  free(js);
  if (s->rc != GUARD_OK) goto out;

  req.stream = 1;
  s->rc = guard_chat(g, &req, &r);
  if (s->rc != GUARD_OK) goto out;
  if (!result_ok(r)) {
    s->rc = 98;
    goto out;
  }
  sig_add(s, r);
  guard_result_free(r);
  r = NULL;

  s->rc = guard_effect(g, "send_email", "{\"to\":\"a@b\"}", "op-1", &r);
  if (s->rc != GUARD_OK) goto out;
  if (!result_ok(r)) {
    s->rc = 98;
    goto out;
  }
  sig_add(s, r);
  guard_result_free(r);
  r = NULL;
  s->rc = other_apis(s, &f);

out:
  if (s->rc != GUARD_OK && r != NULL && s->rc < 90) s->rc = 96; /* no result on error */
  guard_result_free(r);
  guard_free(g);
  fake_free(&f);
}

/* Runs the session failing the Nth allocation (or every one from the Nth
 * on), for every N up to the total of a session that fails none. */
static void sweep(int fail_rest) {
  session base, s;
  long live0 = af_live;
  af_arm(0, 0);
  run_session(&base);
  af_disarm();
  long total = af_count;
  CU_ASSERT_EQUAL_FATAL(base.rc, GUARD_OK);
  if (total == 0) {
    fprintf(stderr, "\n  alloc_fail: skipped: malloc is not this file's (valgrind takes it"
                    " over unless run with --soname-synonyms=somalloc=nouserintercepts)\n");
    return;
  }
  CU_ASSERT_EQUAL(af_live, live0);
  CU_ASSERT_PTR_NOT_NULL(strstr(base.sig, "ok:hello:2:transient,ok,|ok:hello:1:ok,|ok:"));
  CU_ASSERT_PTR_NOT_NULL(
      strstr(base.sig, "|ok:hello:3:permanent,permanent,ok,|ok:hello:1:ok,|ok:hello:2:permanent,ok,|"));
  CU_ASSERT(total > 50);

  long enomem = 0, same = 0, absorbed = 0, bad = 0, leaks = 0;
  for (long n = 1; n <= total + 1; n++) {
    long before = af_live;
    af_arm(n, fail_rest);
    run_session(&s);
    af_disarm();
    long failed = af_failed;
    if (af_live != before) {
      leaks++;
      if (leaks <= 5)
        fprintf(stderr, "\n  alloc_fail: %ld block(s) leaked when allocation %ld%s failed",
                af_live - before, n, fail_rest ? " on" : "");
    }
    if (s.rc == GUARD_ENOMEM) {
      enomem++;
    } else if (s.rc != GUARD_OK) {
      bad++;
      if (bad <= 5)
        fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed: code %d", n,
                fail_rest ? " on" : "", s.rc);
    } else if (strcmp(s.sig, base.sig) == 0) {
      same++;
    } else {
      absorbed++; /* GUARD_OK, but an attempt went differently */
      if (absorbed <= 5)
        fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed, the session went on as\n"
                        "    %s\n    instead of %s", n, fail_rest ? " on" : "", s.sig, base.sig);
    }
    if (n > total) CU_ASSERT_EQUAL(failed, 0);
    CU_ASSERT(n > total || failed > 0);
  }
  fprintf(stderr, "\n  alloc_fail (%s): %ld allocations; ENOMEM %ld, same result %ld, "
                  "absorbed %ld, other %ld, leaks %ld\n",
          fail_rest ? "from N on" : "Nth only", total, enomem, same, absorbed, bad, leaks);
  CU_ASSERT_EQUAL(leaks, 0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(absorbed, 0);
  CU_ASSERT(enomem > 0);
}

static void test_nth(void) { sweep(0); }
static void test_from_nth(void) { sweep(1); }

/* Registers the allocation-failure suite. */
int suite_alloc_fail(void) {
  CU_pSuite s = CU_add_suite("alloc_fail", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "a session with the Nth allocation failing, every N", test_nth) ||
      !CU_add_test(s, "a session with every allocation from the Nth on failing",
                   test_from_nth))
    return CU_get_error();
  return 0;
}

#else /* AF_SKIP */

static void test_skipped(void) {
  fprintf(stderr, "\n  alloc_fail: skipped under AddressSanitizer (it owns malloc)\n");
}

/* Registers the allocation-failure suite (a note under AddressSanitizer). */
int suite_alloc_fail(void) {
  CU_pSuite s = CU_add_suite("alloc_fail", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "skipped under AddressSanitizer", test_skipped)) return CU_get_error();
  return 0;
}

#endif
