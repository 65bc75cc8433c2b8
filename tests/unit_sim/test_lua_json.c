/* test_lua_json.c - client/expect/ratelimit tables as JSON text. */
#include <CUnit/CUnit.h>
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "test_lua_util.h"

static char *client_json_of(const char *client, char err[SIM_ERRLEN]) {
  char text[2048];
  snprintf(text, sizeof text,
           "return scenario { name = 'j', provider = { chat{} },\n client = %s }",
           client);
  sim_scenario *sc;
  char *path;
  char *out = NULL;
  if (tl_load(text, &sc, &path, err) == 0) {
    const char *j = sim__scenario_client_json(sc);
    out = strdup(j != NULL ? j : "(null)");
    sim__scenario_free(sc);
  }
  tl_remove(path);
  return out;
}

static const struct {
  const char *lua;
  const char *json;
} round_trips[] = {
  {"{}", "{}"},
  {"{ b = 1, a = 2, c = { z = true, y = false } }",
   "{\"a\":2,\"b\":1,\"c\":{\"y\":false,\"z\":true}}"},
  {"{ chain = { 'primary', 'backup' } }", "{\"chain\":[\"primary\",\"backup\"]}"},
  {"{ backoff = { base = 0.5, cap = 8, jitter = 'full' } }",
   "{\"backoff\":{\"base\":0.5,\"cap\":8,\"jitter\":\"full\"}}"},
  {"{ n = -3, big = 1e300, s = 'q\"uote\\n' }",
   "{\"big\":1e+300,\"n\":-3,\"s\":\"q\\\"uote\\n\"}"},
  {"{ list = { { a = 1 }, { 2, 3 }, {} } }", "{\"list\":[{\"a\":1},[2,3],{}]}"},
  {"{ unknown_key_is_kept = 1 }", "{\"unknown_key_is_kept\":1}"},
};

static void test_round_trip(void) {
  for (size_t i = 0; i < sizeof round_trips / sizeof round_trips[0]; i++) {
    char err[SIM_ERRLEN];
    char *j = client_json_of(round_trips[i].lua, err);
    if (j == NULL) fprintf(stderr, "\n  %s\n", err);
    TL_ASSERT_STR(j, round_trips[i].json);
    free(j);
  }
}

/* Values JSON cannot hold are refused at the line of their key (here all
   on the `client` line). */
static const struct {
  const char *lua;
  const char *msg;
} bad[] = {
  {"{ on_retry = function() end }", "client.on_retry: a function cannot be turned into JSON"},
  {"{ a = { 1, x = 2 } }", "client.a: a table mixes list items and named keys"},
  {"{ a = { [1] = 1, [3] = 3 } }", "client.a: a list has holes (nil items)"},
  {"{ a = 0/0 }", "client.a: *"},
  {"{ a = 1/0 }", "client.a: inf is not a JSON number"},
  {"{ [1.5] = 1 }", "client: a non-integer number key cannot be turned into JSON"},
  {"{ [true] = 1 }", "client: a boolean key cannot be turned into JSON"},
  {"{ a = { b = { chat{} } } }", "client.a.b[1]: a userdata cannot be turned into JSON"},
  {"(function() local t = {} t.self = t return t end)()",
   "client.self.self.self.self.self.self.self.self.self.self.self.self.self.self.*"},
};

static void test_bad(void) {
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[1024];
    snprintf(text, sizeof text,
             "return scenario { name = 'j', provider = { chat{} },\n client = %s }",
             bad[i].lua);
    int ok = tl_load_fails(text, 2, bad[i].msg);
    if (!ok) fprintf(stderr, "  (case %zu)\n", i);
    CU_ASSERT(ok);
  }
}

/* expect and ratelimit go through the same conversion. */
static void test_expect_ratelimit(void) {
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(
      tl_load("return scenario { name = 'j', provider = { chat{} },\n"
              " expect = { attempts = 2, outcome = 'ok', within_deadline = true },\n"
              " ratelimit = { rpm = 60, tpm = 1000, style = 'anthropic' } }",
              &sc, &path, err),
      0);
  cJSON *e = cJSON_Parse(sim__scenario_expect_json(sc));
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(e, "attempts")->valueint, 2);
  TL_ASSERT_STR(cJSON_GetObjectItem(e, "outcome")->valuestring, "ok");
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(e, "within_deadline")));
  cJSON_Delete(e);
  TL_ASSERT_STR(sim__scenario_ratelimit_json(sc),
                "{\"rpm\":60,\"style\":\"anthropic\",\"tpm\":1000}");
  sim__scenario_free(sc);
  tl_remove(path);
  CU_ASSERT(tl_load_fails("return scenario { name = 'j', provider = { chat{} },\n"
                          " expect = { f = print or function() end } }",
                          2, "expect.f: a function cannot be turned into JSON"));
}

int suite_lua_json(void) {
  CU_pSuite s = CU_add_suite("lua_json", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "round_trip", test_round_trip) ||
      !CU_add_test(s, "bad", test_bad) ||
      !CU_add_test(s, "expect_ratelimit", test_expect_ratelimit))
    return CU_get_error();
  return 0;
}
