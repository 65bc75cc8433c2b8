/*
 * guard_e2e.c - the guarded client against the real fake provider
 * (`fusebox serve`, started in-process): for each fault, the attempt count,
 * the statuses, the kinds and the outcome the guard reports match what the
 * server's trace recorded. Time is compressed 20x on both sides.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e_util.h"
#include "guard/guard.h"

#define SCALE 0.05

static e2e_server *serve(const char *body) {
  char lua[4096];
  snprintf(lua, sizeof lua, "return scenario { name = 'guard', %s }", body);
  return e2e_start(lua, SCALE);
}

/* A handle on the server's primary (OpenAI, /v1) and backup (Anthropic,
 * /backup/v1) providers, with time scaled like the server's. */
static guard *client(e2e_server *s, int nprov, const guard_policy *pol) {
  char base0[64], base1[64];
  snprintf(base0, sizeof base0, "http://127.0.0.1:%d/v1", s->port);
  snprintf(base1, sizeof base1, "http://127.0.0.1:%d/backup/v1", s->port);
  guard_provider p[2] = {{"primary", base0, GUARD_OPENAI, "sk-e2e", "m1", NULL},
                         {"backup", base1, GUARD_ANTHROPIC, "ak-e2e", "m2", NULL}};
  guard_config cfg;
  guard_config_init(&cfg);
  if (pol) cfg.policy = *pol;
  cfg.providers = p;
  cfg.nproviders = nprov;
  cfg.time_scale = SCALE;
  cfg.seed = 7;
  guard *g = NULL;
  char err[GUARD_ERRLEN];
  if (guard_new(&cfg, &g, err) != GUARD_OK) fprintf(stderr, "guard_new: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  return g;
}

static guard_result *chat(guard *g, int stream) {
  static const guard_message m[] = {{"user", "Say hello."}};
  guard_chat_request req = {.messages = m, .nmessages = 1, .max_tokens = 32, .stream = stream};
  guard_result *r = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  return r;
}

/* Attempt i of r; past the end (or no result), a failed assertion and an
   empty attempt, so that a test whose client made fewer attempts than it
   expects fails instead of reading beyond the array. */
static const guard_attempt *att(const guard_result *r, int i) {
  static const guard_attempt none = {.provider = "", .error = "", .partial = ""};
  int ok = r != NULL && i >= 0 && i < r->nattempts;
  if (!ok) fprintf(stderr, "\n  no attempt %d (the result has %d)\n", i, r ? r->nattempts : -1);
  CU_ASSERT(ok);
  return ok ? &r->attempts[i] : &none;
}

static cJSON *end_of(const e2e_server *s, double id) {
  for (int j = 0;; j++) {
    cJSON *e = e2e_event(s, "end", j);
    if (e == NULL || e2e_num(e, "id") == id) return e;
  }
}

/* Every attempt the guard sent is one arrival, in order, with the status
 * the server sent and the attempt number it counted. Stops the server. */
static void match_trace(e2e_server *s, const guard_result *r) {
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_count(s, "arrive"), r->requests);
  int k = 0;
  for (int i = 0; i < r->nattempts; i++) {
    const guard_attempt *a = &r->attempts[i];
    if (a->kind == GUARD_KIND_SKIPPED) continue;
    cJSON *arr = e2e_event(s, "arrive", k++);
    CU_ASSERT_PTR_NOT_NULL_FATAL(arr);
    cJSON *end = end_of(s, e2e_num(arr, "id"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    if ((int)e2e_num(end, "status") != a->status || (int)e2e_num(arr, "attempt") != a->n)
      fprintf(stderr, "\n  attempt %d (%s #%d %s): server status %g attempt %g\n", i,
              a->provider, a->n, guard_kind_name(a->kind), e2e_num(end, "status"),
              e2e_num(arr, "attempt"));
    CU_ASSERT_EQUAL((int)e2e_num(end, "status"), a->status);
    CU_ASSERT_EQUAL((int)e2e_num(arr, "attempt"), a->n);
    if (t__streq(a->provider, "primary", 0, 0) || t__streq(a->provider, "backup", 0, 0))
      CU_ASSERT_STRING_EQUAL(e2e_str(arr, "provider"), a->provider);
  }
}

static void test_retry_after(void) {
  e2e_server *s = serve("provider = { fail { status = 429, code = 'rate_limit_exceeded', retry_after = 2 },"
                        " chat { content = 'hello' } }");
  guard *g = client(s, 1, NULL);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "hello");
  CU_ASSERT_EQUAL(r->nattempts, 2);
  CU_ASSERT_EQUAL(att(r, 0)->kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(att(r, 0)->error, "rate_limit_exceeded");
  CU_ASSERT_EQUAL(att(r, 0)->wait_why, GUARD_WAIT_RETRY_AFTER);
  /* The Retry-After is a floor; up to 10 % more spreads a herd. */
  CU_ASSERT(att(r, 0)->wait_ms >= 2000 * SCALE && att(r, 0)->wait_ms <= 2200 * SCALE);
  CU_ASSERT(att(r, 1)->start_ms >= 2000 * SCALE);
  CU_ASSERT(r->tokens > 0);
  match_trace(s, r);
  CU_ASSERT_DOUBLE_EQUAL(e2e_num(e2e_end_of(s, 0), "retry_after_ms"), 2000, 1e-6);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_permanent_then_backup(void) {
  e2e_server *s = serve("providers = { { name = 'primary', fail { status = 401 } },"
                        " { name = 'backup', chat { content = 'from backup' } } }");
  guard *g = client(s, 2, NULL);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "from backup");
  CU_ASSERT_STRING_EQUAL(r->provider, "backup");
  CU_ASSERT_EQUAL(r->nattempts, 2);
  CU_ASSERT_EQUAL(att(r, 0)->kind, GUARD_KIND_PERMANENT);
  CU_ASSERT_EQUAL(att(r, 0)->wait_ms, 0);
  match_trace(s, r);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 1), "dialect"), "anthropic");
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_quota_is_permanent(void) {
  e2e_server *s = serve("provider = { fail { status = 429, code = 'insufficient_quota' }, chat {} }");
  guard *g = client(s, 1, NULL);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->requests, 1);
  CU_ASSERT_STRING_EQUAL(att(r, 0)->error, "insufficient_quota");
  CU_ASSERT(strlen(r->text) > 0);
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_connection_faults(void) {
  e2e_server *s = serve("provider = { drop {}, reset {}, garbage {},"
                        " truncate { chat { content = 'a long enough answer' }, at = 20 },"
                        " truncate { chat {}, at = 25, mode = 'early-close' },"
                        " chat { content = 'made it' } }");
  guard_policy pol = guard_policy_default();
  pol.attempts = 6;
  pol.deadline = 60;
  pol.backoff_base = 0.1;
  pol.jitter = GUARD_JITTER_NONE;
  pol.breaker_threshold = 0; /* five failures in a row would open it */
  guard *g = client(s, 1, &pol);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "made it");
  CU_ASSERT_EQUAL_FATAL(r->nattempts, 6);
  const char *want[] = {"closed_before_response", "closed_before_response", "not_json",
                        "truncated", "truncated"};
  const guard_kind kinds[] = {GUARD_KIND_TRANSIENT, GUARD_KIND_TRANSIENT, GUARD_KIND_SHAPE,
                              GUARD_KIND_SHAPE, GUARD_KIND_SHAPE};
  for (int i = 0; i < 5; i++) {
    CU_ASSERT_STRING_EQUAL(att(r, i)->error, want[i]);
    CU_ASSERT_EQUAL(att(r, i)->kind, kinds[i]);
  }
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_hang_times_out(void) {
  e2e_server *s = serve("provider = { hang {}, chat { content = 'late but fine' } }");
  guard_policy pol = guard_policy_default();
  pol.deadline = 8;
  pol.attempts = 2;
  guard *g = client(s, 1, &pol);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(att(r, 0)->kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_STRING_EQUAL(att(r, 0)->error, "timeout");
  /* 8 s / 2 attempts = 4 s, scaled: 200 ms. */
  CU_ASSERT_DOUBLE_EQUAL(att(r, 0)->timeout_ms, 4000 * SCALE, 1);
  CU_ASSERT(att(r, 0)->elapsed_ms >= 4000 * SCALE - 5);
  CU_ASSERT(r->total_ms < 8000 * SCALE);
  match_trace(s, r);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "how"), "client_abort");
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_deadline_degrades(void) {
  e2e_server *s = serve("provider = { hang {} }");
  guard_policy pol = guard_policy_default();
  pol.deadline = 2;
  pol.attempt_timeout_floor = 5; /* the floor would pass the deadline */
  guard *g = client(s, 1, &pol);
  guard_result *r = chat(g, 0);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_DEGRADED);
  CU_ASSERT_EQUAL(r->requests, 1);
  CU_ASSERT_EQUAL(att(r, 0)->kind, GUARD_KIND_DEADLINE);
  CU_ASSERT(r->total_ms < 2000 * SCALE + 50);
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_stream_partial_not_spliced(void) {
  e2e_server *s = serve("provider = { stream { chunks = { 'The answer', ' is 4', '2, because' }, drop_after = 2 },"
                        " stream { chunks = { 'The answer', ' is 42.' } } }");
  guard *g = client(s, 1, NULL);
  guard_result *r = chat(g, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "The answer is 42.");
  CU_ASSERT_EQUAL_FATAL(r->nattempts, 2);
  CU_ASSERT_EQUAL(att(r, 0)->kind, GUARD_KIND_SHAPE);
  CU_ASSERT_PTR_NOT_NULL_FATAL(att(r, 0)->partial);
  CU_ASSERT_STRING_EQUAL(att(r, 0)->partial, "The answer is 4");
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_stream_stall_idle(void) {
  e2e_server *s = serve("provider = { stream { chunks = { 'a', 'b', 'c' }, stall_after = 1 },"
                        " stream { chunks = { 'x', 'y' } } }");
  guard_policy pol = guard_policy_default();
  pol.stream_idle_timeout = 2; /* 100 ms scaled */
  guard *g = client(s, 1, &pol);
  guard_result *r = chat(g, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "xy");
  CU_ASSERT_STRING_EQUAL(att(r, 0)->error, "idle_timeout");
  CU_ASSERT_STRING_EQUAL(att(r, 0)->partial, "a");
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static void test_anthropic_stream_and_overload(void) {
  e2e_server *s = serve("providers = { { name = 'primary', fail { status = 403 } },"
                        " { name = 'backup', fail { status = 529 }, stream { content = 'one two three' } } }");
  guard *g = client(s, 2, NULL);
  guard_result *r = chat(g, 1);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_STRING_EQUAL(r->text, "one two three");
  CU_ASSERT_EQUAL_FATAL(r->nattempts, 3);
  CU_ASSERT_EQUAL(att(r, 1)->kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_EQUAL(att(r, 1)->status, 529);
  match_trace(s, r);
  guard_result_free(r);
  guard_free(g);
  e2e_free(s);
}

static guard_result *effect(e2e_server *s, const char *key) {
  guard *g = client(s, 1, NULL);
  guard_result *r = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_effect(g, "send_email", "{\"to\":\"a@b\"}", key, &r), GUARD_OK);
  guard_free(g);
  return r;
}

static void test_effect_commit_then_drop(void) {
  e2e_server *s = serve("effects = { effect { apply = true, respond = 'drop' }, effect {} }");
  guard_result *r = effect(s, "op-7");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->requests, 2); /* the POST, then the lookup: no second POST */
  CU_ASSERT_STRING_EQUAL(att(r, 1)->provider, "ledger");
  match_trace(s, r);
  int applied = 0;
  for (int i = 0; i < e2e_count(s, "effect"); i++)
    applied += t__streq(e2e_str(e2e_event(s, "effect", i), "action"), "applied", 0, 0);
  CU_ASSERT_EQUAL(applied, 1);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 0), "key"), "idem:op-7");
  guard_result_free(r);
  e2e_free(s);
}

static void test_effect_ledger_down(void) {
  e2e_server *s = serve("ledger = 'down', effects = { effect { apply = true, respond = 'drop' }, effect {} }");
  guard_result *r = effect(s, NULL);
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_PENDING);
  CU_ASSERT_EQUAL(r->requests, 2);
  CU_ASSERT_STRING_EQUAL(att(r, 1)->error, "ledger_down");
  match_trace(s, r);
  guard_result_free(r);
  e2e_free(s);
}

static guard_result *chat_text(guard *g, const char *text) {
  guard_message m[] = {{"user", text}};
  guard_chat_request req = {.messages = m, .nmessages = 1, .max_tokens = 32};
  guard_result *r = NULL;
  CU_ASSERT_EQUAL_FATAL(guard_chat(g, &req, &r), GUARD_OK);
  return r;
}

/* The local ports of this machine's established TCP connections to
 * 127.0.0.1:port (client side), from /proc/net/tcp; returns how many, the
 * first in *first. */
static int client_conns(int port, int *first) {
  FILE *f = fopen("/proc/net/tcp", "r");
  if (f == NULL) return -1;
  char line[512];
  int n = 0;
  *first = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    unsigned la, lp, ra, rp, st;
    if (sscanf(line, " %*d: %x:%x %x:%x %x", &la, &lp, &ra, &rp, &st) != 5) continue;
    if ((int)rp == port && st == 1) {
      if (n++ == 0) *first = (int)lp;
    }
  }
  fclose(f);
  return n;
}

/* Issue 13: a finished response's connection is kept and the next call of
 * the same thread goes out on it (keep-alive, as real SDKs do). */
static void test_keepalive_reused(void) {
  e2e_server *s = serve("provider = { chat { content = 'one' } }");
  guard *g = client(s, 1, NULL);
  guard_result *r1 = chat_text(g, "first call");
  CU_ASSERT_EQUAL(r1->outcome, GUARD_OUTCOME_OK);
  int p1 = -1, p2 = -1;
  int n1 = client_conns(s->port, &p1);
  guard_result *r2 = chat_text(g, "second call");
  CU_ASSERT_EQUAL(r2->outcome, GUARD_OUTCOME_OK);
  int n2 = client_conns(s->port, &p2);
  CU_ASSERT_EQUAL(n1, 1);
  CU_ASSERT_EQUAL(n2, 1);
  CU_ASSERT_EQUAL(p1, p2);
  CU_ASSERT(p1 > 0);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_count(s, "arrive"), 2);
  guard_result_free(r1);
  guard_result_free(r2);
  guard_free(g);
  e2e_free(s);
}

/* Issue 13: libcurl resends a request by itself when a reused connection
 * closes before any response byte; the guard must see that close as its
 * own failed attempt (one arrival per attempt), not a silent second send. */
static void test_keepalive_drop_not_resent(void) {
  e2e_server *s = serve("provider = function(req) if req.n == 2 then return drop {} end"
                        " return chat { content = 'fine' } end");
  guard_policy pol = guard_policy_default();
  pol.attempts = 3;
  pol.backoff_base = 0.1;
  pol.jitter = GUARD_JITTER_NONE;
  guard *g = client(s, 1, &pol);
  guard_result *r1 = chat_text(g, "keep the connection");
  CU_ASSERT_EQUAL(r1->outcome, GUARD_OUTCOME_OK);
  int port = -1;
  CU_ASSERT_EQUAL(client_conns(s->port, &port), 1); /* kept for the next call */
  guard_result *r2 = chat_text(g, "then it drops");
  CU_ASSERT_EQUAL(r2->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL_FATAL(r2->nattempts, 2);
  CU_ASSERT_STRING_EQUAL(att(r2, 0)->error, "closed_before_response");
  CU_ASSERT_EQUAL(att(r2, 0)->kind, GUARD_KIND_TRANSIENT);
  CU_ASSERT_EQUAL(r2->requests, 2);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_count(s, "arrive"), r1->requests + r2->requests);
  guard_result_free(r1);
  guard_result_free(r2);
  guard_free(g);
  e2e_free(s);
}

static void test_effect_retry_same_key(void) {
  e2e_server *s = serve("effects = { effect { apply = false, respond = 'drop' }, effect {} }");
  guard_result *r = effect(s, "op-8");
  CU_ASSERT_EQUAL(r->outcome, GUARD_OUTCOME_OK);
  CU_ASSERT_EQUAL(r->requests, 3); /* POST, lookup (not applied), POST */
  match_trace(s, r);
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 2), "key"), "idem:op-8");
  guard_result_free(r);
  e2e_free(s);
}

/* Registers the guard end-to-end suite. */
int suite_guard(void) {
  CU_pSuite s = CU_add_suite("guard", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "429 Retry-After honoured", test_retry_after) ||
      !CU_add_test(s, "401 on primary, backup answers", test_permanent_then_backup) ||
      !CU_add_test(s, "insufficient_quota is permanent", test_quota_is_permanent) ||
      !CU_add_test(s, "drop, reset, garbage, truncate", test_connection_faults) ||
      !CU_add_test(s, "hang: the attempt timeout fires", test_hang_times_out) ||
      !CU_add_test(s, "the deadline degrades", test_deadline_degrades) ||
      !CU_add_test(s, "stream dropped: partial not spliced", test_stream_partial_not_spliced) ||
      !CU_add_test(s, "stream stalled: idle timeout", test_stream_stall_idle) ||
      !CU_add_test(s, "Anthropic stream after 529", test_anthropic_stream_and_overload) ||
      !CU_add_test(s, "effect: commit then drop, ledger says applied", test_effect_commit_then_drop) ||
      !CU_add_test(s, "effect: ledger down, pending", test_effect_ledger_down) ||
      !CU_add_test(s, "effect: not applied, same key again", test_effect_retry_same_key) ||
      !CU_add_test(s, "keep-alive: the next call reuses the connection", test_keepalive_reused) ||
      !CU_add_test(s, "keep-alive: a drop on a reused connection is one attempt",
                   test_keepalive_drop_not_resent))
    return CU_get_error();
  return 0;
}
