/* test_lua_decide.c - sim__scenario_decide: step lists played in order,
   function providers and the req table, errors, threads. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "test_lua_util.h"

static sim_scenario *load_ok(const char *text, char **path) {
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  int rc = tl_load(text, &sc, path, err);
  if (rc != 0) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_EQUAL(rc, 0);
  return sc;
}

/* Attempt n plays step n; the last step repeats. */
static void test_list_order(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'l', provider = {\n"
      "  fail { status = 500 }, fail { status = 503 }, chat { content = 'ok' } } }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  static const int want[] = {500, 500, 503, 0, 0, 0};
  for (int attempt = 0; attempt <= 5; attempt++) {
    sim_req r = tl_req(attempt);
    sim_step *st;
    char err[SIM_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
    CU_ASSERT_EQUAL(st->kind, want[attempt] ? SIM_STEP_FAIL : SIM_STEP_CHAT);
    CU_ASSERT_EQUAL(st->status, want[attempt]);
    sim__step_free(st);
  }
  /* A single step is a one-step list. */
  sim__scenario_free(sc);
  tl_remove(path);
  sc = load_ok("return scenario { name = 'one', provider = hang{} }", &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(3);
  sim_step *st;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  CU_ASSERT_EQUAL(st->kind, SIM_STEP_HANG);
  sim__step_free(st);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* Steps are deep copies: each decision owns its own memory. */
static void test_copies(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'c', provider = { delay { 1, chat { content = 'x' } } } }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(1);
  sim_step *a, *b;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &a, err), 0);
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &b, err), 0);
  CU_ASSERT(a != b && a->next != b->next && a->next->content != b->next->content);
  sim__scenario_free(sc); /* steps outlive the scenario */
  TL_ASSERT_STR(a->next->content, "x");
  sim__step_free(a);
  sim__step_free(b);
  tl_remove(path);
}

static void test_providers(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'p', providers = {\n"
      "  { name = 'primary', fail { status = 529 } },\n"
      "  { name = 'backup', fn = function(req) return chat { content = req.provider } end },\n"
      "}, effects = { effect { apply = false } } }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(1);
  sim_step *st;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  CU_ASSERT_EQUAL(st->status, 529);
  sim__step_free(st);
  r.provider = "backup";
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 1, &r, &st, err), 0);
  TL_ASSERT_STR(st->content, "backup");
  sim__step_free(st);
  r.provider = NULL; /* falls back to the provider's own name */
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 1, &r, &st, err), 0);
  TL_ASSERT_STR(st->content, "backup");
  sim__step_free(st);
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, -1, &r, &st, err), 0);
  CU_ASSERT_EQUAL(st->kind, SIM_STEP_EFFECT);
  CU_ASSERT_EQUAL(st->apply, 0);
  sim__step_free(st);
  st = (sim_step *)1;
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, 2, &r, &st, err), SIM_EINVAL);
  CU_ASSERT_PTR_NULL(st);
  CU_ASSERT(tl_err_is(err, path, 0, "no such provider"));
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, -2, &r, &st, err), SIM_EINVAL);
  CU_ASSERT_EQUAL(sim__scenario_decide(NULL, 0, &r, &st, err), SIM_EINVAL);
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, NULL, &st, err), SIM_EINVAL);
  sim__scenario_free(sc);
  tl_remove(path);

  sc = load_ok("return scenario { name = 'p', provider = { chat{} } }", &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, -1, &r, &st, err), SIM_EINVAL);
  CU_ASSERT(tl_err_is(err, path, 0, "no effects in this scenario"));
  sim__scenario_free(sc);
  tl_remove(path);
}

/* A provider function sees every field of the request. */
static void test_req_fields(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'r', provider = function(req)\n"
      "  local h = {}\n"
      "  for k, v in pairs(req.headers) do h[#h + 1] = k .. '=' .. v end\n"
      "  table.sort(h)\n"
      "  local b = req.body\n"
      "  return chat { content = table.concat({\n"
      "    req.attempt, req.n, req.method, req.path, req.provider, req.dialect,\n"
      "    tostring(req.stream), string.format('%.2f', req.t), req.key,\n"
      "    table.concat(h, ';'),\n"
      "    b and b.model or 'nobody',\n"
      "    b and b.messages and b.messages[1].content or '-',\n"
      "    b and tostring(b.temperature) or '-',\n"
      "    b and tostring(b.stream) or '-',\n"
      "  }, '|') }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_header hs[] = {{"X-Test", "a"}, {"Idempotency-Key", "op-1"},
                     {"x-test", "b"}};
  const char *body = "{\"model\":\"claude-x\",\"stream\":true,\"temperature\":0.5,"
                     "\"messages\":[{\"role\":\"user\",\"content\":\"yo\"}],"
                     "\"metadata\":null}";
  sim_req r = tl_req(2);
  r.n = 9;
  r.path = "/backup/v1/messages";
  r.provider = "backup";
  r.dialect = SIM_DIALECT_ANTHROPIC;
  r.headers = hs;
  r.nheaders = 3;
  r.body = body;
  r.body_len = strlen(body);
  r.stream = 1;
  r.t = 1.25;
  r.key = "idem:op-1";
  sim_step *st;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  TL_ASSERT_STR(st->content,
                "2|9|POST|/backup/v1/messages|backup|anthropic|true|1.25|idem:op-1|"
                "idempotency-key=op-1;x-test=a, b|claude-x|yo|0.5|true");
  sim__step_free(st);

  /* Bodies that are not JSON, or nest too deep, give nil. */
  /* {"model":"m","x":[[...]]}: 101 levels deep, and 59 levels deep. */
  char deep[400], ok_deep[200];
  strcpy(deep, "{\"model\":\"m\",\"x\":");
  strcpy(ok_deep, deep);
  size_t dl = strlen(deep);
  memset(deep + dl, '[', 100);
  memset(deep + dl + 100, ']', 100);
  strcpy(deep + dl + 200, "}");
  memset(ok_deep + dl, '[', 58);
  memset(ok_deep + dl + 58, ']', 58);
  strcpy(ok_deep + dl + 116, "}");
  const char *bodies[] = {"not json", "{\"a\":", deep, "", NULL};
  for (int i = 0; i < 5; i++) {
    r = tl_req(1);
    r.body = bodies[i];
    r.body_len = bodies[i] ? strlen(bodies[i]) : 0;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
    CU_ASSERT(strstr(st->content, "|nobody|") != NULL);
    sim__step_free(st);
  }
  r = tl_req(1);
  r.body = ok_deep;
  r.body_len = strlen(ok_deep);
  r.dialect = SIM_DIALECT_EFFECT;
  r.method = "GET";
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  CU_ASSERT(strstr(st->content, "|GET|") != NULL);
  CU_ASSERT(strstr(st->content, "|effect|false|") != NULL);
  CU_ASSERT(strstr(st->content, "|nobody|") == NULL);
  sim__step_free(st);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* What a provider function returns must be a step. */
static void test_bad_returns(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local function pick(req)\n"
      "  if req.attempt == 1 then return nil end\n"
      "  if req.attempt == 2 then return 'chat' end\n"
      "  if req.attempt == 3 then return { content = 'x' } end\n"
      "  if req.attempt == 4 then return effect {} end\n"
      "  if req.attempt == 5 then return end\n"
      "  return chat {}\n"
      "end\n"
      "return scenario { name = 'b', provider = pick,\n"
      "  effects = function(req) if req.attempt == 1 then return 1 end\n"
      "    return effect {} end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  static const char *const want[] = {
    "provider function returned nil, expected a step",
    "provider function returned string, expected a step",
    "provider function returned table, expected a step",
    "provider function returned effect{}, which only answers at the effect endpoint",
    "provider function returned nil, expected a step",
  };
  char err[SIM_ERRLEN];
  sim_step *st;
  for (int i = 0; i < 5; i++) {
    sim_req r = tl_req(i + 1);
    CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, &r, &st, err), SIM_ELUA);
    CU_ASSERT(tl_err_is(err, path, 1, want[i]));
  }
  sim_req r = tl_req(1);
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, -1, &r, &st, err), SIM_ELUA);
  CU_ASSERT(tl_err_is(err, path, 10, "effects function returned number, expected a step"));
  r.attempt = 2;
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, -1, &r, &st, err), 0);
  CU_ASSERT_EQUAL(st->kind, SIM_STEP_EFFECT);
  sim__step_free(st);
  r.attempt = 6;
  CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
  sim__step_free(st);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* State kept across calls, and random numbers, in one scenario. */
static void test_state(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local count = 0\n"
      "return scenario { name = 's', provider = function(req)\n"
      "  count = count + 1\n"
      "  if count % 3 == 0 then return fail { status = 503 } end\n"
      "  return chat { content = tostring(count) }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  char err[SIM_ERRLEN];
  for (int i = 1; i <= 6; i++) {
    sim_req r = tl_req(1);
    sim_step *st;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
    CU_ASSERT_EQUAL(st->kind, i % 3 == 0 ? SIM_STEP_FAIL : SIM_STEP_CHAT);
    sim__step_free(st);
  }
  sim__scenario_free(sc);
  tl_remove(path);
}

typedef struct worker {
  sim_scenario *sc;
  int id;
  int failures;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int i = 0; i < 300; i++) {
    sim_req r = tl_req(i % 4 + 1);
    r.n = w->id * 1000 + i;
    char err[SIM_ERRLEN];
    sim_step *st = NULL;
    int rc = sim__scenario_decide(w->sc, 0, &r, &st, err);
    char want[32];
    snprintf(want, sizeof want, "%d", r.n);
    if (r.attempt == 4) {
      if (rc != SIM_ELUA) w->failures++;
    } else if (rc != 0 || strcmp(st->content, want) != 0) {
      w->failures++;
    }
    sim__step_free(st);
  }
  return NULL;
}

/* Decisions from many threads at once are serialised, not mixed up. */
static void test_threads(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 't', provider = function(req)\n"
      "  if req.attempt == 4 then error('four') end\n"
      "  local s = 0 for i = 1, 1000 do s = s + i end\n"
      "  return chat { content = tostring(req.n) }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  pthread_t th[4];
  worker w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker){sc, i + 1, 0};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, work, &w[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(w[i].failures, 0);
  }
  sim__scenario_free(sc);
  tl_remove(path);
}

int suite_lua_decide(void) {
  CU_pSuite s = CU_add_suite("lua_decide", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "list_order", test_list_order) ||
      !CU_add_test(s, "copies", test_copies) ||
      !CU_add_test(s, "providers", test_providers) ||
      !CU_add_test(s, "req_fields", test_req_fields) ||
      !CU_add_test(s, "bad_returns", test_bad_returns) ||
      !CU_add_test(s, "state", test_state) ||
      !CU_add_test(s, "threads", test_threads))
    return CU_get_error();
  return 0;
}
