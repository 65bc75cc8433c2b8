/* test_upstream_step.c - the upstream{} step's constructor (sim/lua_steps.c):
   each key converted into the sim_step, mixed with other steps in one list,
   and each wrong key refused at the scenario's line, with "did you mean". */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_lua_util.h"

/* The step the one-provider scenario `provider = {<steps>}` plays to
   attempt n. */
static sim_step *step_at(const char *steps, int attempt) {
  char list[4096];
  snprintf(list, sizeof list, "{ %s }", steps);
  char *text = tl_provider_text(list);
  char err[SIM_ERRLEN];
  sim_step *st = tl_decide_once(text, 0, attempt, err);
  free(text);
  return st;
}

static void test_defaults(void) {
  sim_step *s = step_at("upstream {}", 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_UPSTREAM);
  TL_ASSERT_STR(sim__step_kind_name(s->kind), "upstream");
  CU_ASSERT_EQUAL(s->cut_at, -1);
  CU_ASSERT_EQUAL(s->drop_after, -1);
  CU_ASSERT_EQUAL(s->error_after, -1);
  CU_ASSERT_EQUAL(s->stall_after, -1);
  CU_ASSERT_EQUAL(s->cut_arguments, 0);
  CU_ASSERT_DOUBLE_EQUAL(s->seconds, 0, 1e-12);
  sim__step_free(s);
}

static void test_keys(void) {
  sim_step *s = step_at("upstream { delay = 1.5, truncate = 20, drop_after = 2, error_after = 3,"
                        " stall_after = 4, stall = 2.5, cut_arguments = true,"
                        " error = { status = 529, code = 'overloaded', type = 't', message = 'm' } }",
                        1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_DOUBLE_EQUAL(s->seconds, 1.5, 1e-12);
  CU_ASSERT_EQUAL(s->cut_at, 20);
  CU_ASSERT_EQUAL(s->drop_after, 2);
  CU_ASSERT_EQUAL(s->error_after, 3);
  CU_ASSERT_EQUAL(s->stall_after, 4);
  CU_ASSERT_DOUBLE_EQUAL(s->stall, 2.5, 1e-12);
  CU_ASSERT_EQUAL(s->cut_arguments, 1);
  CU_ASSERT_EQUAL(s->status, 529);
  TL_ASSERT_STR(s->code, "overloaded");
  TL_ASSERT_STR(s->type, "t");
  TL_ASSERT_STR(s->message, "m");
  sim__step_free(s);

  s = step_at("upstream { truncate = 0, stall_after = 0, stall = -3 }", 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->cut_at, 0);
  CU_ASSERT_EQUAL(s->stall_after, 0);
  CU_ASSERT(s->stall < 0); /* negative: until the client gives up */
  sim__step_free(s);
}

/* Any step list mixes it: the issue's own example. */
static void test_mixed(void) {
  const char *list = "fail { status = 429, retry_after = 1 }, upstream {}, upstream { drop_after = 2 }";
  sim_step *s = step_at(list, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_FAIL);
  CU_ASSERT_EQUAL(s->status, 429);
  sim__step_free(s);
  s = step_at(list, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_UPSTREAM);
  CU_ASSERT_EQUAL(s->drop_after, -1);
  sim__step_free(s);
  s = step_at(list, 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_UPSTREAM);
  CU_ASSERT_EQUAL(s->drop_after, 2);
  sim__step_free(s);

  /* and a provider function returns it like any step */
  char *text = tl_provider_text(
      "function(req) if req.attempt == 1 then return fail { status = 503 } end "
      "return upstream { error_after = 1 } end");
  char err[SIM_ERRLEN];
  s = tl_decide_once(text, 0, 2, err);
  free(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->kind, SIM_STEP_UPSTREAM);
  CU_ASSERT_EQUAL(s->error_after, 1);
  sim__step_free(s);
}

/* Wrong keys: the message, at the line of the constructor call. */
static const struct {
  const char *src;
  const char *msg;
} BAD[] = {
  {"upstream { drop_afer = 2 }", "upstream: unknown field 'drop_afer' (did you mean 'drop_after'?)"},
  {"upstream { truncat = 2 }", "upstream: unknown field 'truncat' (did you mean 'truncate'?)"},
  {"upstream { cut_argument = true }",
   "upstream: unknown field 'cut_argument' (did you mean 'cut_arguments'?)"},
  {"upstream { upstream = 'http://x' }", "upstream: unknown field 'upstream'"},
  {"upstream { drop_after = -1 }", "upstream: field 'drop_after' must be between 0 and 2147483647, got -1"},
  {"upstream { drop_after = 1.5 }", "upstream: field 'drop_after' must be an integer, got number"},
  {"upstream { truncate = 'x' }", "upstream: field 'truncate' must be an integer, got string"},
  {"upstream { delay = -1 }", "upstream: field 'delay' must be a number of seconds >= 0, got -1.0"},
  {"upstream { cut_arguments = 1 }", "upstream: field 'cut_arguments' must be true or false, got number"},
  {"upstream { stall = 2 }",
   "upstream: 'stall' needs 'stall_after' (the frame count after which the answer stalls)"},
  {"upstream { error = { status = 500 } }",
   "upstream: 'error' needs 'error_after' (the frame count after which the error event is sent)"},
  {"upstream { error_after = 1, error = { stats = 500 } }",
   "upstream: error: unknown field 'stats' (did you mean 'status'?)"},
  {"upstream { error_after = 1, error = 5 }", "upstream: field 'error' must be a table, got number"},
  {"upstream { 1 }", "upstream: takes named fields only, got a value at [1]"},
  {"upstrem {}", "unknown step 'upstrem' (did you mean 'upstream'?)"},
};

static void test_bad(void) {
  for (size_t i = 0; i < sizeof BAD / sizeof BAD[0]; i++) {
    char list[512];
    snprintf(list, sizeof list, "{\n %s }", BAD[i].src);
    char *text = tl_provider_text(list);
    int ok = tl_load_fails(text, 4, BAD[i].msg);
    if (!ok) fprintf(stderr, "  (case %zu: %s)\n", i, BAD[i].src);
    CU_ASSERT(ok);
    free(text);
  }
}

int suite_upstream_step(void) {
  CU_pSuite s = CU_add_suite("upstream_step", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "upstream{} defaults", test_defaults);
  CU_add_test(s, "each key into the step", test_keys);
  CU_add_test(s, "mixed with other steps, and from a function", test_mixed);
  CU_add_test(s, "wrong keys at their line, with did-you-mean", test_bad);
  return CU_get_error();
}
