/* test_import_expect.c - what `fusebox import` adds so an imported incident
   judges something: an expect table of the best-practice verdicts that
   apply (each case carries its log and the table it must produce), field
   names mapped with --map, unknown fields and drop-only logs reported, and
   --request choosing the recorded request a first call replays. */
#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "unit_sim/test_lua_util.h"


/* Imports text with opts; returns the scenario's expect table as JSON
   (caller frees), or NULL with err. Fills st. */
static char *expect_of(const char *text, imp_opts *o, imp_stats *st, char err[SIM_ERRLEN]) {
  char *lua = NULL;
  o->source = "log.jsonl";
  o->date = "2024-05-01";
  if (imp_buffer(text, strlen(text), o, &lua, st, err) != SIM_OK) return NULL;
  char *path = tl_write(lua);
  free(lua);
  sim_scenario_info info = {0};
  char *out = NULL;
  if (path && sim_scenario_inspect(path, &info, err) == SIM_OK && info.expect_json)
    out = strdup(info.expect_json);
  sim_scenario_info_clear(&info);
  tl_remove(path);
  return out;
}

typedef struct expect_case {
  const char *what;
  const char *log;           /* JSON Lines, one attempt per line */
  const char *no_retry_after; /* the list as JSON, NULL: absent */
  int retry_after;           /* retry_after_honoured present */
  int side_effects;          /* side_effects present */
  int max_requests;
} expect_case;

#define L(s) "{\"path\":\"/v1/chat/completions\"," s "}\n"
#define E(s) "{\"path\":\"/v1/effects/send_email\",\"method\":\"POST\"," s "}\n"

static const expect_case CASES[] = {
    {"a 401: no retry after it", L("\"status\":401"), "[401]", 0, 0, 4},
    {"a quota 429: no retry after quota",
     L("\"status\":429,\"code\":\"insufficient_quota\""), "[\"quota\"]", 0, 0, 4},
    {"a 429 with Retry-After, then ok: honoured",
     L("\"t\":0,\"status\":429,\"headers\":{\"retry-after\":\"2\"}") L("\"t\":2100,\"status\":200"),
     NULL, 1, 0, 4},
    {"retry-after-ms counts too", L("\"status\":503,\"headers\":{\"retry-after-ms\":\"1500\"}"),
     NULL, 1, 0, 4},
    {"transient only: bounded attempts alone",
     L("\"status\":503") L("\"status\":503") L("\"status\":0,\"error\":\"reset\""), NULL, 0, 0, 4},
    {"two requests: the bound grows with them",
     L("\"key\":\"a\",\"status\":400") L("\"key\":\"b\",\"status\":404"), "[400, 404]", 0, 0, 8},
    {"a lost effect: no duplicate", E("\"status\":0,\"error\":\"closed\"") E("\"status\":200"),
     NULL, 0, 1, 4},
};

static void test_expect_table(void) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const expect_case *c = &CASES[i];
    imp_opts o = {0};
    imp_stats st;
    char err[SIM_ERRLEN] = "";
    char *js = expect_of(c->log, &o, &st, err);
    if (js == NULL) fprintf(stderr, "\n  %s: %s\n", c->what, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(js);
    cJSON *e = cJSON_Parse(js);
    cJSON *nra = cJSON_GetObjectItem(e, "no_retry_after");
    if (c->no_retry_after) {
      cJSON *want = cJSON_Parse(c->no_retry_after);
      int same = cJSON_Compare(nra, want, 1);
      if (!same) fprintf(stderr, "\n  %s: expect %s\n", c->what, js);
      CU_ASSERT(same);
      cJSON_Delete(want);
    } else {
      CU_ASSERT_PTR_NULL(nra);
    }
    CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(e, "retry_after_honoured")), c->retry_after);
    CU_ASSERT_EQUAL(cJSON_IsTrue(cJSON_GetObjectItem(e, "side_effects")), c->side_effects);
    cJSON *mr = cJSON_GetObjectItem(e, "max_requests");
    CU_ASSERT(cJSON_IsNumber(mr) && mr->valueint == c->max_requests);
    CU_ASSERT_EQUAL(st.expects, (c->no_retry_after != NULL) + c->retry_after + c->side_effects + 1);
    cJSON_Delete(e);
    free(js);
  }
}

/* A team's own field names: unread, listed, and the attempts look like
   drops; mapped with --map, the 429 and its Retry-After are back. */
static void test_map_and_warnings(void) {
  const char *log =
      "{\"timestamp\":\"2024-05-01T12:00:00Z\",\"status_code\":429,"
      "\"response_headers\":{\"retry-after\":\"2\"}}\n"
      "{\"timestamp\":\"2024-05-01T12:00:02Z\",\"status_code\":200}\n";
  imp_opts o = {0};
  imp_stats st;
  char err[SIM_ERRLEN];
  char *js = expect_of(log, &o, &st, err);
  CU_ASSERT_PTR_NOT_NULL(js);
  CU_ASSERT_STRING_EQUAL(st.unknown, "timestamp,status_code,response_headers");
  CU_ASSERT_EQUAL(st.drops_only, 1);
  CU_ASSERT(js && strstr(js, "retry_after_honoured") == NULL);
  free(js);

  imp_opts m = {.map = "status=status_code,t=timestamp,headers=response_headers"};
  js = expect_of(log, &m, &st, err);
  CU_ASSERT_PTR_NOT_NULL(js);
  CU_ASSERT_STRING_EQUAL(st.unknown, "");
  CU_ASSERT_EQUAL(st.drops_only, 0);
  CU_ASSERT(js && strstr(js, "\"retry_after_honoured\":true") != NULL);
  free(js);

  /* A log that knows its fields warns about nothing. */
  imp_opts n = {0};
  js = expect_of(L("\"status\":503") L("\"status\":200"), &n, &st, err);
  CU_ASSERT_STRING_EQUAL(st.unknown, "");
  CU_ASSERT_EQUAL(st.drops_only, 0);
  free(js);

  /* A bad map is an error that says why. */
  imp_opts bad = {.map = "bogus=x"};
  CU_ASSERT_PTR_NULL(expect_of(log, &bad, &st, err));
  CU_ASSERT(strstr(err, "'bogus' is not a field") != NULL);
  imp_opts bad2 = {.map = "status"};
  CU_ASSERT_PTR_NULL(expect_of(log, &bad2, &st, err));
  CU_ASSERT(strstr(err, "ours=theirs") != NULL);
}

/* --request N: a client's first logical request replays recorded request N. */
static void test_request_choice(void) {
  const char *log = L("\"key\":\"a\",\"status\":401") L("\"key\":\"b\",\"status\":503")
                        L("\"key\":\"b\",\"status\":200");
  for (int n = 1; n <= 3; n++) {
    imp_opts o = {.source = "log.jsonl", .date = "2024-05-01", .request = n};
    char *lua = NULL;
    char err[SIM_ERRLEN];
    int rc = imp_buffer(log, strlen(log), &o, &lua, NULL, err);
    if (n == 3) { /* only two recorded requests */
      CU_ASSERT_EQUAL(rc, SIM_EINVAL);
      CU_ASSERT(strstr(err, "--request 3") != NULL);
      continue;
    }
    CU_ASSERT_EQUAL_FATAL(rc, SIM_OK);
    char *path = tl_write(lua);
    sim_scenario *sc = NULL;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_load(path, 1, &sc, err), 0);
    sim_req r = tl_req(1);
    r.key = "whatever-the-client-sends";
    sim_step *s = NULL;
    CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, &r, &s, err), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    const sim_step *inner = s->kind == SIM_STEP_DELAY ? s->next : s;
    CU_ASSERT_EQUAL(inner->status, n == 1 ? 401 : 503);
    sim__step_free(s);
    sim__scenario_free(sc);
    tl_remove(path);
    free(lua);
  }
}

int suite_import_expect(void) {
  CU_pSuite s = CU_add_suite("import_expect", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "expect table per incident", test_expect_table) ||
      !CU_add_test(s, "--map and warnings", test_map_and_warnings) ||
      !CU_add_test(s, "--request N", test_request_choice))
    return CU_get_error();
  return 0;
}
