/*
 * test_hunt.c - the search and the shrinking against fake clients (no
 * server): one that misbehaves only under one two-step schedule (a 429
 * with a Retry-After right after a 503) is found and shrunk to exactly
 * that schedule, the same way on every run; a failure the reference client
 * shares is no finding; the budget bounds the runs; a play error stops it.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"

typedef struct fake {
  int reference_fails; /* the reference fails the same way */
  int error_at;        /* a play error at this call (0 = never) */
  int calls;
  long plays;
} fake;

/* The planted bug: a 429 asking for a wait, right after a 503. */
static int buggy(const char *lua) {
  return strstr(lua, "fail { status = 503 },\n    fail { status = 429, retry_after") != NULL;
}

static int steps_of(const char *lua) {
  int n = 0;
  for (const char *p = lua; (p = strstr(p, "\n    ")) != NULL; p++) n++;
  return n;
}

static int play(void *arg, int reference, int n, char *const *lua, const long *index,
                xpl_outcome *out, char err[XPL_ERRLEN]) {
  fake *f = arg;
  (void)index;
  if (f->error_at && ++f->calls >= f->error_at) {
    snprintf(err, XPL_ERRLEN, "the command cannot run");
    return -1;
  }
  for (int i = 0; i < n; i++) {
    int bad = buggy(lua[i]) && (!reference || f->reference_fails);
    out[i].attempts = steps_of(lua[i]);
    out[i].nv = 2;
    snprintf(out[i].v[0].name, XPL_NAMELEN, "max_requests");
    out[i].v[0].status = 0;
    snprintf(out[i].v[1].name, XPL_NAMELEN, "retry_after_honoured");
    out[i].v[1].status = bad ? 1 : 0;
    snprintf(out[i].v[1].evidence, XPL_EVIDENCE, "%s", bad ? "came back early" : "waited");
  }
  f->plays += n;
  return 0;
}

static xpl_hunt_opts opts(uint64_t seed) {
  xpl_hunt_opts o = {.seed = seed, .budget = 2000, .reference = 1, .guided = 1,
                     .verdicts = "max_requests,retry_after_honoured",
                     .space = {.max_steps = 3, .max_ra_index = -1,
                               .calls = 1u << XPL_CALL_CHAT}};
  char err[XPL_ERRLEN];
  xpl_space_kinds(&o.space, "5xx,429,drop,reset", err);
  return o;
}

static void test_two_step_found_and_shrunk(void) {
  for (uint64_t seed = 1; seed <= 10; seed++) {
    fake f = {0};
    xpl_hunt_opts o = opts(seed);
    xpl_hunt_result r;
    char err[XPL_ERRLEN];
    CU_ASSERT_EQUAL_FATAL(xpl_hunt(&o, play, &f, NULL, NULL, &r, err), 0);
    CU_ASSERT_EQUAL_FATAL(r.nfindings, 1);
    const xpl_finding *fd = &r.findings[0];
    CU_ASSERT_STRING_EQUAL(fd->verdict, "retry_after_honoured");
    char t[512];
    xpl_schedule_text(&fd->shrunk, t, sizeof t);
    CU_ASSERT_STRING_EQUAL(t, "chat: 503, 429 Retry-After: 1, then answered");
    CU_ASSERT_STRING_EQUAL(fd->evidence, "came back early");
    CU_ASSERT_EQUAL(fd->reference, 1);
    CU_ASSERT(r.runs <= 2000);
    CU_ASSERT_EQUAL(f.plays, r.runs);
    /* the same seed: the same finding, found at the same run */
    fake g = {0};
    xpl_hunt_result r2;
    CU_ASSERT_EQUAL(xpl_hunt(&o, play, &g, NULL, NULL, &r2, err), 0);
    CU_ASSERT_EQUAL_FATAL(r2.nfindings, 1);
    CU_ASSERT_EQUAL(memcmp(&r2.findings[0], fd, sizeof *fd), 0);
    CU_ASSERT_EQUAL(r2.runs, r.runs);
    xpl_hunt_result_clear(&r);
    xpl_hunt_result_clear(&r2);
  }
}

static void test_reference_fails_too(void) {
  fake f = {.reference_fails = 1};
  xpl_hunt_opts o = opts(1);
  o.budget = 300;
  xpl_hunt_result r;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &f, NULL, NULL, &r, err), 0);
  CU_ASSERT_EQUAL(r.nfindings, 0);
  CU_ASSERT(r.rejected >= 1);
  CU_ASSERT(r.runs <= 300);
  CU_ASSERT_EQUAL(r.stopped, 1);
  xpl_hunt_result_clear(&r);
  /* --no-reference: the same schedules are findings */
  o.reference = 0;
  fake g = {.reference_fails = 1};
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &g, NULL, NULL, &r, err), 0);
  CU_ASSERT_EQUAL(r.nfindings, 1);
  CU_ASSERT_EQUAL(r.findings[0].reference, 0);
  xpl_hunt_result_clear(&r);
}

static void test_budget_and_errors(void) {
  fake f = {0};
  xpl_hunt_opts o = opts(1);
  o.budget = 5; /* less than a batch */
  xpl_hunt_result r;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &f, NULL, NULL, &r, err), 0);
  CU_ASSERT(r.runs <= 5);
  CU_ASSERT_EQUAL(f.plays, r.runs);
  xpl_hunt_result_clear(&r);
  fake e = {.error_at = 2};
  o.budget = 100;
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &e, NULL, NULL, &r, err), -1);
  CU_ASSERT_STRING_EQUAL(err, "the command cannot run");
  xpl_hunt_result_clear(&r);
  o.verdicts = "";
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &f, NULL, NULL, &r, err), -1);
  xpl_hunt_result_clear(&r);
}

/* Several distinct findings: --findings N keeps N, none twice. */
static void test_distinct(void) {
  fake f = {0};
  xpl_hunt_opts o = opts(2);
  o.max_findings = 3;
  o.budget = 3000;
  xpl_hunt_result r;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL(xpl_hunt(&o, play, &f, NULL, NULL, &r, err), 0);
  /* the one bug shrinks to one schedule: found once, however often hit */
  CU_ASSERT_EQUAL(r.nfindings, 1);
  xpl_hunt_result_clear(&r);
}

int suite_hunt(void) {
  CU_pSuite s = CU_add_suite("hunt", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "a two-step bug is found and shrunk to exactly it", test_two_step_found_and_shrunk);
  CU_add_test(s, "a failure the reference shares is no finding", test_reference_fails_too);
  CU_add_test(s, "the budget bounds the runs; a play error stops", test_budget_and_errors);
  CU_add_test(s, "one bug, one finding", test_distinct);
  return 0;
}
