/* test_import_cases.c - data-driven: each input log in tests/data/import/
   imports into exactly the scenario text beside it in
   tests/data/import/cases/ (what an answer was: tool calls whole and
   streamed, finish, usage, error events, redaction), and that text loads.
   FUSEBOX_REGEN=1 rewrites the expected files from the importer's output
   (then read the diff before committing it). */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import.h"
#include "unit_sim/test_lua_util.h"

/* One case: the input (under tests/data/import/), the expected scenario
   (under tests/data/import/cases/) and what it pins. */
static const struct {
  const char *input, *expected, *pins;
} cases[] = {
    {"peak.har", "peak.lua",
     "a HAR: a chat answer carrying tool_calls send_email; org-abc123 in the 429's message "
     "redacted like its openai-organization header; tool_integrity and side_effects expected"},
    {"cases/anthropic_stream_tool.jsonl", "anthropic_stream_tool.lua",
     "a streamed Anthropic tool_use (input_json_delta pieces) becomes a stream step with the "
     "call, its id and joined arguments; the interval spreads over every frame"},
    {"cases/responses_function_call.jsonl", "responses_function_call.lua",
     "Responses: a function_call output item (body) and a streamed one, call_id kept"},
    {"cases/gemini_function_call.jsonl", "gemini_function_call.lua",
     "Gemini: a functionCall part, its args object as JSON text, usageMetadata"},
    {"cases/stream_error_event.jsonl", "stream_error_event.lua",
     "an in-band error event after two chunks: error_after = 2 with its code, type, message"},
    {"cases/trace_stream_tool.jsonl", "trace_stream_tool.lua",
     "a trace: a stream cut after a tool call (drop_after counts the argument pieces) and "
     "its retry, the calls' arguments read from the end event"},
};

static void src_path(const char *rel, char *out, size_t cap) {
  char src[2048];
  const char *env = getenv("FUSEBOX_SRC");
  if (env != NULL && *env != '\0') {
    snprintf(src, sizeof src, "%s", env);
  } else {
    snprintf(src, sizeof src, "%s", __FILE__);
    char *p = strstr(src, "/tests/unit_import/");
    if (p != NULL) *p = '\0';
  }
  int w = snprintf(out, cap, "%s/tests/data/import/%s", src, rel);
  if (w < 0 || (size_t)w >= cap) out[0] = '\0'; /* a cut path would name another file */
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s != NULL) s[n] = '\0';
  fclose(f);
  return s;
}

static void test_cases(void) {
  int regen = getenv("FUSEBOX_REGEN") != NULL && strcmp(getenv("FUSEBOX_REGEN"), "1") == 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char in[2300], exp_rel[256], exp[2300], err[SIM_ERRLEN];
    src_path(cases[i].input, in, sizeof in);
    snprintf(exp_rel, sizeof exp_rel, "cases/%s", cases[i].expected);
    src_path(exp_rel, exp, sizeof exp);
    const char *base = strrchr(cases[i].input, '/');
    imp_opts o = {0};
    o.source = base ? base + 1 : cases[i].input;
    o.date = "2024-05-01";
    char *lua = NULL;
    int rc = imp_file(in, &o, &lua, NULL, err);
    if (rc != SIM_OK) fprintf(stderr, "\n  %s: %s\n", cases[i].input, err);
    CU_ASSERT_EQUAL_FATAL(rc, SIM_OK);
    if (regen) {
      FILE *f = fopen(exp, "wb");
      CU_ASSERT_PTR_NOT_NULL_FATAL(f);
      fputs(lua, f);
      fclose(f);
    }
    char *want = slurp(exp);
    if (want == NULL) fprintf(stderr, "\n  %s: missing (FUSEBOX_REGEN=1 writes it)\n", exp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    if (strcmp(want, lua) != 0)
      fprintf(stderr, "\n  %s does not import into %s (it pins: %s); got:\n%s\n",
              cases[i].input, exp, cases[i].pins, lua);
    CU_ASSERT_STRING_EQUAL(lua, want);
    /* The scenario loads. */
    char *path = tl_write(lua);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    sim_scenario *sc = NULL;
    if (sim__scenario_load(path, 1, &sc, err) != 0)
      fprintf(stderr, "\n  %s: the import does not load: %s\n", cases[i].input, err);
    CU_ASSERT_PTR_NOT_NULL(sc);
    if (sc != NULL) sim_scenario_free(sc);
    tl_remove(path);
    free(want);
    free(lua);
  }
}

/* No step of these inputs keeps a secret: keys, bearer tokens and account
   ids never reach the scenario, wherever they stood. */
static void test_no_secrets(void) {
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char exp_rel[256], exp[2300];
    snprintf(exp_rel, sizeof exp_rel, "cases/%s", cases[i].expected);
    src_path(exp_rel, exp, sizeof exp);
    char *s = slurp(exp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NULL(strstr(s, "org-abc123"));
    CU_ASSERT_PTR_NULL(strstr(s, "PEAKSECRET"));
    CU_ASSERT_PTR_NULL(strstr(s, "openai-organization"));
    free(s);
  }
}

/* The account-id rule in texts: a word starting org- or proj_ with 6 or
   more id characters; shorter or mid-word ones stay (no false alarm). */
static void test_account_ids(void) {
  const char *log =
      "{\"status\":429,\"body\":{\"error\":{\"message\":\"in organization org-abc123 and "
      "project proj_Zx81kQ9, not borg-abcdefgh nor org-ab\"}}}\n";
  imp_opts o = {0};
  o.source = "log.jsonl";
  o.date = "2024-05-01";
  char *lua = NULL, err[SIM_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(imp_buffer(log, strlen(log), &o, &lua, NULL, err), SIM_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "in organization org-[redacted] and project proj_[redacted], "
                                     "not borg-abcdefgh nor org-ab"));
  free(lua);
}

int suite_import_cases(void) {
  CU_pSuite s = CU_add_suite("import_cases", NULL, NULL);
  if (s == NULL) return -1;
  if (!CU_add_test(s, "every input imports into the scenario beside it", test_cases) ||
      !CU_add_test(s, "no secret in any expected scenario", test_no_secrets) ||
      !CU_add_test(s, "account ids in texts", test_account_ids))
    return -1;
  return 0;
}
