/*
 * test_alloc_fail.c - sim when memory runs out: loading a scenario (file,
 * sandbox, scenario{} with every table, the source map), handling requests
 * (the logical-request key, the arrival count, the provider's decision in
 * Lua, the rate limiter and the effect ledger) and
 * writing the trace, with the Nth allocation failing, for every N up to the
 * total. For every N: no crash; the work either fails with an error code
 * that says so (SIM_ENOMEM, or a load/decide error about memory, or a trace
 * marked as having lost a line) or gives exactly what a pass without
 * failures gives; and after everything is freed the number of live
 * allocations is back where it started (a leak check by counting). Then
 * again with every allocation from the Nth on failing.
 *
 * fail_alloc.h replaces malloc and friends for the whole unit_sim program;
 * under AddressSanitizer, which owns the allocator, the suite says it was
 * skipped.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_lua_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define AF_SKIP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define AF_SKIP 1
#endif
#endif

#ifndef AF_SKIP

#include "fail_alloc.h"

static const char SCENARIO[] =
    "local policy = { deadline = 8, attempts = 3 }\n"
    "return scenario {\n"
    "  name = 'alloc', doc = [[ every table ]], tags = { 'a', 'b' },\n"
    "  providers = {\n"
    "    { name = 'main', fail { status = 429, retry_after = 1 }, chat { content = 'hi' } },\n"
    "    { name = 'fn', function(req) return stream { chunks = { 'a', tostring(req.attempt) } } end },\n"
    "  },\n"
    "  effects = { effect { apply = true, respond = 'drop' } },\n"
    "  ratelimit = { rpm = 600, style = 'anthropic' },\n"
    "  client = policy,\n"
    "  expect = { attempts = 2, outcome = 'ok' },\n"
    "}\n";

#define NREQ 3

/* What a pass produced; rc is SIM_OK or the first failure. */
typedef struct work {
  int rc;
  int oom;        /* the failure said it was memory */
  char sig[4096]; /* everything produced, to compare */
} work;

static void add(work *w, const char *s) {
  size_t n = strlen(w->sig);
  snprintf(w->sig + n, sizeof w->sig - n, "%s|", s ? s : "(null)");
}

static int failed(work *w, int rc, const char *err) {
  if (rc == SIM_OK) return 0;
  w->rc = rc;
  w->oom = rc == SIM_ENOMEM || (err && (strstr(err, "memory") || strstr(err, "out of")));
  return 1;
}

/* Loads, decides NREQ arrivals per provider, builds bodies, keys, ledger
   entries and rate-limit answers, and writes a trace of them. */
static void run_work(const char *path, const char *trace_path, work *w) {
  memset(w, 0, sizeof *w);
  char err[SIM_ERRLEN] = "";
  sim_scenario *sc = NULL;
  sim_keymap *km = NULL;
  sim_ledger *lg = NULL;
  sim_ratelimit *rl = NULL;
  sim_trace *tr = NULL;
  if (failed(w, sim__scenario_load(path, 7, &sc, err), err)) goto out;
  add(w, sim__scenario_name(sc));
  add(w, sim__scenario_client_json(sc));
  add(w, sim__scenario_expect_json(sc));
  sim__scenario_error(sc, "client.attempts: too many", err);
  add(w, strchr(err, ':')); /* the line, not the temporary path */
  if (failed(w, sim__trace_open(trace_path, NULL, &tr, err), err)) goto out;
  km = sim__keymap_new();
  lg = sim__ledger_new(1);
  if (km == NULL || lg == NULL) {
    failed(w, SIM_ENOMEM, NULL);
    goto out;
  }
  sim_env env = {0};
  if (failed(w, sim__ratelimit_new(sim__scenario_ratelimit_json(sc), 1, &env, &rl, err), err))
    goto out;
  for (int p = -1; p < sim__scenario_nproviders(sc); p++) {
    for (int a = 1; a <= NREQ; a++) {
      sim_req req = tl_req(a);
      char key[320];
      if (sim_request_key(NULL, req.method, req.path, req.body, req.body_len, key, sizeof key) != 0)
        add(w, "no key");
      int n = sim__keymap_bump(km, key);
      if (n < 0) {
        failed(w, SIM_ENOMEM, NULL);
        goto out;
      }
      sim_step *st = NULL;
      if (failed(w, sim__scenario_decide(sc, p, &req, &st, err), err)) goto out;
      char s[96];
      snprintf(s, sizeof s, "%s %d %s", sim__step_kind_name(st->kind), st->status,
               st->content ? st->content : "-");
      add(w, s);
      cJSON *ev = sim__trace_event("end", a);
      if (ev == NULL || cJSON_AddStringToObject(ev, "step", s) == NULL) {
        cJSON_Delete(ev);
        sim__step_free(st);
        failed(w, SIM_ENOMEM, NULL);
        goto out;
      }
      sim__trace_emit(tr, ev);
      if (st->kind == SIM_STEP_EFFECT) {
        int count = 0;
        char *result = NULL;
        int act = sim__ledger_post(lg, "k1", "send", "fp", st->apply, &count, &result);
        if (act < 0) {
          sim__step_free(st);
          failed(w, SIM_ENOMEM, NULL);
          goto out;
        }
        snprintf(s, sizeof s, "ledger %d %d", act, count);
        add(w, s);
        free(result);
      }
      sim__step_free(st);
      sim_rl_result r;
      snprintf(s, sizeof s, "rl %d", sim__ratelimit_take(rl, 10, &r));
      add(w, s);
    }
  }
  if (sim__trace_failed(tr)) {
    w->rc = SIM_EIO; /* a line was lost, and the trace knows it */
    w->oom = 1;
  }
out:
  sim__trace_close(tr);
  sim__ratelimit_free(rl);
  sim__ledger_free(lg);
  sim__keymap_free(km);
  sim__scenario_free(sc);
}

static void sweep(int fail_rest) {
  char *path = tl_write(SCENARIO);
  CU_ASSERT_PTR_NOT_NULL_FATAL(path);
  char trace[] = "/tmp/fusebox_af_trace_XXXXXX";
  int fd = mkstemp(trace);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  static work base, w;
  run_work(path, trace, &base); /* warm up: one-time allocations of libc and Lua */
  long live0 = af_live;
  af_arm(0, 0);
  run_work(path, trace, &base);
  af_disarm();
  long total = af_count;
  if (base.rc != SIM_OK) fprintf(stderr, "\n  alloc_fail: base pass failed: %d\n", base.rc);
  CU_ASSERT_EQUAL_FATAL(base.rc, SIM_OK);
  CU_ASSERT_EQUAL(af_live, live0);
  if (total == 0) {
    fprintf(stderr, "\n  alloc_fail: skipped: malloc is not this file's\n");
    goto done;
  }
  long oom = 0, same = 0, differ = 0, bad = 0, leaks = 0;
  for (long n = 1; n <= total + 1; n++) {
    long before = af_live;
    af_arm(n, fail_rest);
    run_work(path, trace, &w);
    af_disarm();
    if (af_live != before && ++leaks <= 5)
      fprintf(stderr, "\n  alloc_fail: %ld block(s) leaked when allocation %ld%s failed",
              af_live - before, n, fail_rest ? " on" : "");
    if (w.rc != SIM_OK && w.oom) {
      oom++;
    } else if (w.rc != SIM_OK) {
      if (++bad <= 5)
        fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed: code %d, not about memory",
                n, fail_rest ? " on" : "", w.rc);
    } else if (strcmp(w.sig, base.sig) == 0) {
      same++;
    } else if (++differ <= 5) {
      fprintf(stderr, "\n  alloc_fail: allocation %ld%s failed, yet SIM_OK with other results",
              n, fail_rest ? " on" : "");
      if (getenv("AF_DEBUG")) fprintf(stderr, "\n   base %s\n   got  %s\n", base.sig, w.sig);
    }
  }
  fprintf(stderr, "\n  alloc_fail (%s): %ld allocations; out of memory %ld, same result %ld, "
                  "differ %ld, other %ld, leaks %ld\n",
          fail_rest ? "from N on" : "Nth only", total, oom, same, differ, bad, leaks);
  CU_ASSERT_EQUAL(leaks, 0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT_EQUAL(differ, 0);
  CU_ASSERT(oom > 0);
done:
  unlink(trace);
  tl_remove(path);
}

static void test_nth(void) { sweep(0); }
static void test_from_nth(void) { sweep(1); }

/* The answer, error and stream writers of the APIs added in issue 26
   (Ollama, Cohere, Bedrock's Converse and InvokeModel), each with text and
   a tool call: returns SIM_OK, or SIM_ENOMEM when any piece could not be
   made; *nchunks the stream's chunks. Frees all it made. */
static int new_apis_once(int *nchunks) {
  static const sim_dialect ds[] = {SIM_DIALECT_OLLAMA_CHAT, SIM_DIALECT_OLLAMA_GENERATE,
                                   SIM_DIALECT_COHERE, SIM_DIALECT_BEDROCK,
                                   SIM_DIALECT_BEDROCK_INVOKE};
  sim_tool_call tc = {.id = "call_1", .name = "get_weather", .arguments = "{\"city\":\"Paris\"}"};
  sim_step s;
  memset(&s, 0, sizeof s);
  s.kind = SIM_STEP_STREAM;
  s.usage_in = s.usage_out = -1;
  s.drop_after = s.stall_after = s.error_after = -1;
  s.tool_calls = &tc;
  s.ntool_calls = 1;
  char *texts[] = {"Hello", " world"};
  int rc = SIM_OK;
  *nchunks = 0;
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
    char *b = sim__answer_body(ds[i], &s, "id1", "m1", "Hello world", 3, 4);
    char *e = sim__error_body(ds[i], 429, NULL, NULL, NULL);
    if (b == NULL || e == NULL) rc = SIM_ENOMEM;
    free(b);
    free(e);
    sim_sse o;
    int r = sim__sse_build(ds[i], &s, "id1", "m1", 3, texts, 2, &o);
    if (r == SIM_OK) *nchunks += o.nchunks;
    else rc = r;
    sim__sse_clear(&o);
  }
  return rc;
}

static void test_new_apis(void) {
  int base_chunks, n_chunks;
  CU_ASSERT_EQUAL_FATAL(new_apis_once(&base_chunks), SIM_OK); /* warm up */
  long live0 = af_live;
  af_arm(0, 0);
  CU_ASSERT_EQUAL_FATAL(new_apis_once(&base_chunks), SIM_OK);
  af_disarm();
  long total = af_count, leaks = 0, oom = 0, bad = 0;
  CU_ASSERT_EQUAL(af_live, live0);
  for (int rest = 0; rest < 2; rest++)
    for (long n = 1; n <= total + 1; n++) {
      long before = af_live;
      af_arm(n, rest);
      int rc = new_apis_once(&n_chunks);
      af_disarm();
      if (af_live != before && ++leaks <= 5)
        fprintf(stderr, "\n  alloc_fail: %ld block(s) leaked when allocation %ld%s failed",
                af_live - before, n, rest ? " on" : "");
      if (rc == SIM_ENOMEM) oom++;
      else if (rc != SIM_OK || n_chunks != base_chunks) bad++;
    }
  CU_ASSERT_EQUAL(leaks, 0);
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(total > 0 && oom > 0);
}

#else

static void test_nth(void) { fprintf(stderr, "\n  alloc_fail: skipped under a sanitizer\n"); }
static void test_from_nth(void) { test_nth(); }
static void test_new_apis(void) { test_nth(); }

#endif

int suite_alloc_fail(void) {
  CU_pSuite s = CU_add_suite("alloc_fail", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "the Nth allocation fails", test_nth);
  CU_add_test(s, "every allocation from the Nth on fails", test_from_nth);
  CU_add_test(s, "Ollama, Cohere and Bedrock writers when memory runs out", test_new_apis);
  return CU_get_error();
}
