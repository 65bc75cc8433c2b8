/* test_lua_load.c - loading scenario files: scenario{} validation, the
   sim__scenario_* views, error positions, sim_scenario_inspect. */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_lua_util.h"

static void test_minimal(void) {
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  int rc = tl_load("return scenario { name = \"min\", provider = { chat{} } }",
                   &sc, &path, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  TL_ASSERT_STR(sim__scenario_name(sc), "min");
  CU_ASSERT_PTR_NULL(sim__scenario_doc(sc));
  TL_ASSERT_STR(sim__scenario_path(sc), path);
  CU_ASSERT_EQUAL(sim__scenario_ntags(sc), 0);
  CU_ASSERT_PTR_NULL(sim__scenario_tag(sc, 0));
  CU_ASSERT_EQUAL(sim__scenario_nproviders(sc), 1);
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 0), "primary");
  CU_ASSERT_PTR_NULL(sim__scenario_provider_name(sc, 1));
  CU_ASSERT_EQUAL(sim__scenario_has_effects(sc), 0);
  CU_ASSERT_EQUAL(sim__scenario_idempotency_honoured(sc), 1);
  CU_ASSERT_EQUAL(sim__scenario_ledger_up(sc), 1);
  CU_ASSERT_PTR_NULL(sim__scenario_client_json(sc));
  CU_ASSERT_PTR_NULL(sim__scenario_expect_json(sc));
  CU_ASSERT_PTR_NULL(sim__scenario_ratelimit_json(sc));
  sim__scenario_free(sc);
  tl_remove(path);
  sim__scenario_free(NULL);
}

static void test_full(void) {
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  int rc = tl_load(
      "-- a comment first\n"
      "return scenario {\n"
      "  name = \"full\",\n"
      "  doc = [[\n    Two providers and effects.\n  ]],\n"
      "  tags = { \"a\", \"b\" },\n"
      "  providers = {\n"
      "    { name = \"main\", fail { status = 503 }, chat {} },\n"
      "    { name = \"backup-2\", fn = function(req) return chat{} end },\n"
      "    { name = \"third_x\", function(req) return chat{} end },\n"
      "  },\n"
      "  effects = { effect { apply = true, respond = \"drop\" } },\n"
      "  idempotency = \"ignored\",\n"
      "  ledger = \"down\",\n"
      "  ratelimit = { rpm = 2, style = \"openai\" },\n"
      "  client = { attempts = 3 },\n"
      "  expect = { outcome = \"ok\" },\n"
      "  seed = 42,\n"
      "}\n",
      &sc, &path, err);
  if (rc != 0) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  TL_ASSERT_STR(sim__scenario_doc(sc), "Two providers and effects.");
  CU_ASSERT_EQUAL(sim__scenario_ntags(sc), 2);
  TL_ASSERT_STR(sim__scenario_tag(sc, 1), "b");
  CU_ASSERT_EQUAL(sim__scenario_nproviders(sc), 3);
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 0), "main");
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 1), "backup-2");
  TL_ASSERT_STR(sim__scenario_provider_name(sc, 2), "third_x");
  CU_ASSERT_EQUAL(sim__scenario_has_effects(sc), 1);
  CU_ASSERT_EQUAL(sim__scenario_idempotency_honoured(sc), 0);
  CU_ASSERT_EQUAL(sim__scenario_ledger_up(sc), 0);
  TL_ASSERT_STR(sim__scenario_ratelimit_json(sc), "{\"rpm\":2,\"style\":\"openai\"}");
  TL_ASSERT_STR(sim__scenario_client_json(sc), "{\"attempts\":3}");
  TL_ASSERT_STR(sim__scenario_expect_json(sc), "{\"outcome\":\"ok\"}");
  sim__scenario_free(sc);
  tl_remove(path);
}

static void test_effects_only(void) {
  sim_scenario *sc;
  char *path, err[SIM_ERRLEN];
  int rc = tl_load("return scenario { name = \"e\", effects = function(req) "
                   "return effect{} end }",
                   &sc, &path, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(sim__scenario_nproviders(sc), 0);
  CU_ASSERT_EQUAL(sim__scenario_has_effects(sc), 1);
  sim__scenario_free(sc);
  tl_remove(path);
}

static void test_io_errors(void) {
  sim_scenario *sc = (sim_scenario *)1;
  char err[SIM_ERRLEN];
  int rc = sim__scenario_load("/nonexistent/x.lua", 1, &sc, err);
  CU_ASSERT_EQUAL(rc, SIM_EIO);
  CU_ASSERT_PTR_NULL(sc);
  CU_ASSERT(tl_err_is(err, "/nonexistent/x.lua", 0, "cannot open: *"));
  rc = sim__scenario_load("/tmp", 1, &sc, err);
  CU_ASSERT_EQUAL(rc, SIM_EIO);
  CU_ASSERT(tl_err_is(err, "/tmp", 0, "cannot read: *"));
  CU_ASSERT_EQUAL(sim__scenario_load(NULL, 1, &sc, err), SIM_EINVAL);
}

/* Every way a file can fail, with the position the message must carry. */
static const struct {
  const char *text;
  int line;
  const char *msg;
} load_errors[] = {
  {"local x = \n return scenario { name = ", 2, "unexpected symbol near 'return'"},
  {"local x = 1", 0, "the file must return scenario{...}, got nil"},
  {"return 42", 0, "the file must return scenario{...}, got number"},
  {"return { name = \"x\" }", 0, "the file must return scenario{...}, got table"},
  {"return chat{}", 0, "the file must return scenario{...}, got a step"},
  {"\n\nreturn scenario {\n name = \"x\",\n provider = {chat{}},\n x = 1 }", 6,
   "unknown scenario key 'x'"},
  {"return scenario {\n name = \"x\",\n provder = {chat{}} }", 3,
   "unknown scenario key 'provder' (did you mean 'provider'?)"},
  {"return scenario { provider = {chat{}} }", 1,
   "scenario: 'name' is required (a string)"},
  {"return scenario { name = \"\", provider = {chat{}} }", 1,
   "scenario: 'name' must not be empty"},
  {"return scenario { name = 1, provider = {chat{}} }", 1,
   "scenario: 'name' must be a string, got number"},
  {"return scenario { name = \"x\" }", 1,
   "scenario: give 'provider', 'providers' or 'effects'"},
  {"return scenario { name = \"x\", doc = {}, provider = {chat{}} }", 1,
   "scenario: 'doc' must be a string, got table"},
  {"return scenario { name = \"x\", tags = {1}, provider = {chat{}} }", 1,
   "scenario: tags[1] must be a string"},
  {"return scenario { name = \"x\", tags = \"a\", provider = {chat{}} }", 1,
   "scenario: 'tags' must be a list of strings"},
  {"return scenario { name = \"x\", provider = {} }", 1,
   "provider is empty: give at least one step, e.g. chat{}"},
  {"return scenario { name = \"x\", provider = \"chat\" }", 1,
   "provider must be a list of steps or a function, got string"},
  {"return scenario { name = \"x\", provider = { chat{}, 5 } }", 1,
   "provider[2] must be a step such as chat{...}, got number"},
  {"return scenario { name = \"x\", provider = { chat{}, function() end } }", 1,
   "provider[2] must be a step such as chat{...}, got a function (a function "
   "must be alone)"},
  {"return scenario { name = \"x\", provider = { effect{} } }", 1,
   "provider[1]: effect{} steps belong in 'effects'"},
  {"return scenario { name = \"x\", provider = delay { 1, effect{} } }", 1,
   "provider: effect{} steps belong in 'effects'"},
  {"return scenario { name = \"x\", providers = { { name = 'a', effect{} } } }", 1,
   "providers[1] (a)[1]: effect{} steps belong in 'effects'"},
  {"return scenario { name = \"x\", provider = { chat{} }, providers = {} }", 1,
   "scenario: give 'provider' or 'providers', not both"},
  {"return scenario { name = \"x\", providers = { {name = \"A\", chat{}} } }", 1,
   "providers[1]: name 'A' must be 1 to 32 of a-z 0-9 _ - (and not \"v1\")"},
  {"return scenario { name = \"x\", providers = { {name = \"v1\", chat{}} } }", 1,
   "providers[1]: name 'v1' must be 1 to 32 of a-z 0-9 _ - (and not \"v1\")"},
  {"return scenario { name = \"x\", providers = { {chat{}} } }", 1,
   "providers[1]: 'name' is required (a string)"},
  {"return scenario { name = \"x\", providers = { {name = \"a\", chat{}},\n"
   " {name = \"a\", chat{}} } }", 2, "providers: the name 'a' is used twice"},
  {"return scenario { name = \"x\", providers = { {name = \"a\", steps = {}} } }",
   1, "providers[1]: unknown key 'steps' (a provider has name, its steps, or fn)"},
  {"return scenario { name = \"x\", providers = { {name = \"a\"} } }", 1,
   "providers[1] (a) has no steps: add steps such as chat{} or fn"},
  {"return scenario { name = \"x\", providers = { {name = \"a\", chat{}, "
   "fn = function() end} } }", 1, "providers[1] (a): give steps or fn, not both"},
  {"return scenario { name = \"x\", providers = { chat{} } }", 1,
   "providers[1] must be {name = ..., <steps or function>}"},
  {"return scenario { name = \"x\", provider = {chat{}}, idempotency = \"no\" }",
   1, "scenario: 'idempotency' must be \"honoured\" or \"ignored\""},
  {"return scenario { name = \"x\", provider = {chat{}}, ledger = true }", 1,
   "scenario: 'ledger' must be \"up\" or \"down\""},
  {"return scenario { name = \"x\", provider = {chat{}}, seed = 1.5 }", 1,
   "scenario: 'seed' must be an integer"},
  {"return scenario { name = \"x\", provider = {chat{}}, client = 3 }", 1,
   "client must be a table, got number"},
  {"return scenario { name = \"x\", provider = {chat{}}, [1] = 3 }", 1,
   "scenario takes named keys only, got a number key"},
  {"return scenario \"x\"", 1, "scenario: expected a table, as in scenario{...}"},
  /* The line is the offending key's or value's, not the scenario{} call's. */
  {"return scenario {\n name = \"x\",\n provider = {chat{}},\n tags = { \"a\",\n 2 } }",
   5, "scenario: tags[2] must be a string"},
  {"return scenario {\n name = \"x\",\n providers = {\n  {name = \"a\", chat{}},\n"
   "  {name = \"B\", chat{}} } }", 5,
   "providers[2]: name 'B' must be 1 to 32 of a-z 0-9 _ - (and not \"v1\")"},
  {"return scenario {\n name = \"x\",\n provider = {\n  chat{},\n  42 } }", 5,
   "provider[2] must be a step such as chat{...}, got number"},
  {"return scenario {\n name = \"x\",\n provider = {chat{}},\n ratelimit = {\n  rpm = 1,\n"
   "  burst = -1 } }", 6, "ratelimit.burst must be a number from 0 to 1e9"},
  {"return scenario {\n name = \"x\",\n provider = {chat{}},\n ratelimit = {\n  rpm = 1,\n"
   "  stlye = 'openai' } }", 6,
   "ratelimit.stlye: unknown key (known: rpm, tpm, burst, token_burst, style)"},
  {"local rl = {\n rpm = 0 }\nreturn scenario {\n name = \"x\",\n provider = {chat{}},\n"
   " ratelimit = rl }", 6, "ratelimit needs rpm or tpm"},
  {"\nerror(\"boom\")", 2, "boom"},
  {"\n\nerror(\"boom\", 0)", 3, "boom"},
  {"error({})", 1, "(error object is a table value)"},
  {"error(\"first\\nsecond\")", 1, "first"},
  {"local t = nil\nreturn t.x", 2, "attempt to index a nil value (local 't')"},
  {"\033LuaT", 0, "attempt to load a binary chunk (mode is 't')"},
};

static void test_load_errors(void) {
  for (size_t i = 0; i < sizeof load_errors / sizeof load_errors[0]; i++) {
    int ok = tl_load_fails(load_errors[i].text, load_errors[i].line,
                           load_errors[i].msg);
    if (!ok) fprintf(stderr, "  (case %zu)\n", i);
    CU_ASSERT(ok);
  }
}

/* A "#!" first line is skipped and the line numbers stay right. */
static void test_shebang(void) {
  CU_ASSERT(tl_load_fails("#!/usr/bin/env fusebox\n\nerror('x')", 3, "x"));
  CU_ASSERT(tl_load_fails("\xEF\xBB\xBF\nerror('x')", 2, "x"));
}

/* Lua shortens long chunk names; messages still carry the full path. */
static void test_long_path(void) {
  char dir[] = "/tmp/fusebox_lua_a_rather_long_directory_name_for_the_test_XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/and_a_long_scenario_file_name.lua", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("\nerror('boom')\n", f);
  fclose(f);
  sim_scenario *sc;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim__scenario_load(path, 1, &sc, err), SIM_ELOAD);
  CU_ASSERT(tl_err_is(err, path, 2, "boom"));
  f = fopen(path, "w");
  fputs("return scenario {\n name = 'x', provider = function(req)\n"
        "  error('deep') end }\n", f);
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(sim__scenario_load(path, 1, &sc, err), 0);
  sim_req r = tl_req(1);
  sim_step *st;
  CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, &r, &st, err), SIM_ELUA);
  CU_ASSERT(tl_err_is(err, path, 3, "deep"));
  sim__scenario_free(sc);
  unlink(path);
  rmdir(dir);
}

/* A scenario's seed fixes math.random; otherwise the load's seed does. */
static void test_seed(void) {
  const char *with = "return scenario { name = 's', seed = 7, provider = "
                     "function() return chat{content = tostring(math.random(1e9))} end }";
  const char *without = "return scenario { name = 's', provider = "
                        "function() return chat{content = tostring(math.random(1e9))} end }";
  char *content[4];
  const char *texts[4] = {with, with, without, without};
  uint64_t seeds[4] = {1, 2, 1, 2};
  for (int i = 0; i < 4; i++) {
    char *path = tl_write(texts[i]), err[SIM_ERRLEN];
    sim_scenario *sc;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_load(path, seeds[i], &sc, err), 0);
    sim_req r = tl_req(1);
    sim_step *st;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
    content[i] = strdup(st->content);
    sim__step_free(st);
    sim__scenario_free(sc);
    tl_remove(path);
  }
  TL_ASSERT_STR(content[0], content[1]);
  CU_ASSERT(strcmp(content[2], content[3]) != 0);
  for (int i = 0; i < 4; i++) free(content[i]);
}

static void test_inspect(void) {
  char *path = tl_write("return scenario {\n name = 'insp', doc = ' d ',\n"
                        " tags = {'x', 'y'}, provider = {chat{}},\n"
                        " client = {deadline = 8}, expect = {attempts = 2} }");
  sim_scenario_info info;
  memset(&info, 0, sizeof info);
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(sim_scenario_inspect(path, &info, err), 0);
  TL_ASSERT_STR(info.path, path);
  TL_ASSERT_STR(info.name, "insp");
  TL_ASSERT_STR(info.doc, "d");
  CU_ASSERT_EQUAL(info.ntags, 2);
  TL_ASSERT_STR(info.tags[0], "x");
  TL_ASSERT_STR(info.client_json, "{\"deadline\":8}");
  TL_ASSERT_STR(info.expect_json, "{\"attempts\":2}");
  sim_scenario_info_clear(&info);
  CU_ASSERT_PTR_NULL(info.name);
  sim_scenario_info_clear(&info);
  tl_remove(path);

  path = tl_write("return scenario { name = 'n', provider = {chat{}} }");
  CU_ASSERT_EQUAL_FATAL(sim_scenario_inspect(path, &info, err), 0);
  CU_ASSERT_PTR_NULL(info.doc);
  CU_ASSERT_PTR_NULL(info.client_json);
  CU_ASSERT_EQUAL(info.ntags, 0);
  sim_scenario_info_clear(&info);
  tl_remove(path);

  path = tl_write("\nreturn 1");
  CU_ASSERT_EQUAL(sim_scenario_inspect(path, &info, err), SIM_ELOAD);
  CU_ASSERT(tl_err_is(err, path, 0, "the file must return scenario{...}, got number"));
  CU_ASSERT_PTR_NULL(info.name);
  sim_scenario_info_clear(&info);
  tl_remove(path);
  CU_ASSERT_EQUAL(sim_scenario_inspect("/nonexistent.lua", &info, err), SIM_EIO);
}

int suite_lua_load(void) {
  CU_pSuite s = CU_add_suite("lua_load", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "minimal", test_minimal) ||
      !CU_add_test(s, "full", test_full) ||
      !CU_add_test(s, "effects_only", test_effects_only) ||
      !CU_add_test(s, "io_errors", test_io_errors) ||
      !CU_add_test(s, "load_errors", test_load_errors) ||
      !CU_add_test(s, "shebang", test_shebang) ||
      !CU_add_test(s, "long_path", test_long_path) ||
      !CU_add_test(s, "seed", test_seed) ||
      !CU_add_test(s, "inspect", test_inspect))
    return CU_get_error();
  return 0;
}
