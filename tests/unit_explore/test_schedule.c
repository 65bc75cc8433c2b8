/*
 * test_schedule.c - drawing, writing and shrinking schedules: the same
 * seed and index give the same schedule, every step fits its call and the
 * space, every step of every call is a scenario sim loads, and every shrink
 * candidate is smaller.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"
#include "sim/sim.h"

static void test_deterministic(void) {
  xpl_space sp = {.calls = 0x1f, .max_ra_index = -1};
  int differ = 0;
  for (long i = 0; i < 200; i++) {
    xpl_schedule a, b, c;
    xpl_gen_random(&sp, 7, i, &a);
    xpl_gen_random(&sp, 7, i, &b);
    xpl_gen_random(&sp, 8, i, &c);
    CU_ASSERT_EQUAL(memcmp(&a, &b, sizeof a), 0);
    char ta[1024], tc[1024];
    xpl_schedule_text(&a, ta, sizeof ta);
    xpl_schedule_text(&c, tc, sizeof tc);
    differ += strcmp(ta, tc) != 0;
    xpl_schedule m1, m2;
    xpl_gen_mutate(&sp, 7, i, &a, &m1);
    xpl_gen_mutate(&sp, 7, i, &a, &m2);
    CU_ASSERT_EQUAL(memcmp(&m1, &m2, sizeof m1), 0);
  }
  CU_ASSERT(differ > 150); /* another seed, other schedules */
}

static void test_space(void) {
  char err[XPL_ERRLEN];
  xpl_space sp = {.max_steps = 2, .no_date = 1, .max_ra_index = 1};
  CU_ASSERT_EQUAL(xpl_space_kinds(&sp, "429,5xx,stream_drop", err), 0);
  CU_ASSERT_EQUAL(xpl_space_calls(&sp, "chat,stream", err), 0);
  int seen_stream_drop = 0;
  for (long i = 0; i < 500; i++) {
    xpl_schedule s;
    xpl_gen_random(&sp, 1, i, &s);
    CU_ASSERT(s.n >= 1 && s.n <= 2);
    CU_ASSERT(s.call == XPL_CALL_CHAT || s.call == XPL_CALL_STREAM);
    for (int k = 0; k < s.n; k++) {
      int kind = s.s[k].kind;
      CU_ASSERT(kind == XPL_S_429 || kind == XPL_S_5XX || kind == XPL_S_STREAM_DROP);
      CU_ASSERT(xpl_step_fits(s.call, kind));
      if (kind == XPL_S_429) {
        CU_ASSERT(s.s[k].a < 3); /* no date */
        CU_ASSERT(s.s[k].b <= 1); /* 1 or 5 s */
      }
      seen_stream_drop |= kind == XPL_S_STREAM_DROP;
    }
  }
  CU_ASSERT(seen_stream_drop);
  CU_ASSERT_EQUAL(xpl_space_kinds(&sp, "429,stream_dorp", err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "stream_dorp"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "did you mean 'stream_drop'"));
  CU_ASSERT_EQUAL(xpl_space_calls(&sp, "chat,,stream", err), -1);
  CU_ASSERT_EQUAL(xpl_space_calls(&sp, "any", err), 0);
  CU_ASSERT_EQUAL(sp.calls, (1u << XPL_NCALLS) - 1);
  CU_ASSERT_EQUAL(xpl_ra_index(0.5), 0);
  CU_ASSERT_EQUAL(xpl_ra_index(5), 1);
  CU_ASSERT_EQUAL(xpl_ra_index(29), 1);
  CU_ASSERT_EQUAL(xpl_ra_index(1e9), 4);
}

/* Every value of every kind, in every call it fits, is a scenario that
   loads: the writer never makes a scenario sim refuses. */
static void test_every_step_loads(void) {
  int loaded = 0;
  for (int call = 0; call < XPL_NCALLS; call++)
    for (int k = 0; k < XPL_NKINDS; k++) {
      if (!xpl_step_fits(call, k)) continue;
      for (int a = 0; a < 4; a++)
        for (int b = 0; b < 5; b++) {
          xpl_schedule s = {.call = (uint8_t)call, .n = 2};
          s.s[0] = (xpl_step){(uint8_t)k, (uint8_t)a, (uint8_t)b};
          s.s[1] = (xpl_step){XPL_S_5XX, 0, 0};
          /* values out of the kind's ladders are never drawn: skip them */
          xpl_space sp = {.kinds = 1u << k, .calls = (uint8_t)(1u << call), .max_ra_index = -1};
          int drawn = 0;
          for (long i = 0; i < 400 && !drawn; i++) {
            xpl_schedule r;
            xpl_gen_random(&sp, 3, i, &r);
            drawn = r.s[0].a == a && r.s[0].b == b;
          }
          if (!drawn) continue;
          xpl_lua_opts lo = {.name = "t", .point = "retry_after_honoured"};
          char *lua = xpl_schedule_lua(&s, &lo);
          CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
          sim_scenario *sc = NULL;
          char err[SIM_ERRLEN] = "";
          int rc = sim_scenario_load_text("t.lua", lua, strlen(lua), 1, &sc, err);
          if (rc != SIM_OK) fprintf(stderr, "\n%s\n%s\n", err, lua);
          CU_ASSERT_EQUAL(rc, SIM_OK);
          loaded += rc == SIM_OK;
          sim_scenario_free(sc);
          free(lua);
        }
    }
  CU_ASSERT(loaded > 60);
}

static void test_lua_text(void) {
  xpl_schedule s = {.call = XPL_CALL_CHAT, .n = 2};
  s.s[0] = (xpl_step){XPL_S_5XX, 0, 0};
  s.s[1] = (xpl_step){XPL_S_429, 1, 1};
  xpl_lua_opts lo = {.name = "a \"quoted\" name", .dialect = "anthropic", .max_requests = 7};
  char *lua = xpl_schedule_lua(&s, &lo);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "fail { status = 503 },\n    fail { status = 429, retry_after = 5 },\n    chat {"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "name = \"a \\\"quoted\\\" name\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "dialect = \"anthropic\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "max_requests = 7"));
  CU_ASSERT_PTR_NULL(strstr(lua, "point"));
  char t[256];
  xpl_schedule_text(&s, t, sizeof t);
  CU_ASSERT_STRING_EQUAL(t, "chat: 503, 429 Retry-After: 5, then answered");
  free(lua);
}

/* The "-- schedule:" line reads back as the same schedule; bad ones are refused. */
static void test_code_round_trip(void) {
  xpl_space sp = {.calls = 0x1f, .max_ra_index = -1};
  for (long i = 0; i < 300; i++) {
    xpl_schedule s, back;
    xpl_gen_random(&sp, 5, i, &s);
    char code[512], err[XPL_ERRLEN];
    xpl_schedule_code(&s, code, sizeof code);
    CU_ASSERT_EQUAL(xpl_schedule_parse(code, &back, err), 0);
    CU_ASSERT_EQUAL(memcmp(&s, &back, sizeof s), 0);
  }
  xpl_schedule s;
  char err[XPL_ERRLEN];
  const char *bad[] = {"", "chat", "chit 5xx.0.0", "chat 5xx.9.0", "chat 5xx", "chat stream_drop.0.0",
                       "chat 5xx.0.0 5xx.0.0 5xx.0.0 5xx.0.0 5xx.0.0 5xx.0.0 5xx.0.0", "chat nope.0.0",
                       NULL};
  for (int i = 0; bad[i]; i++) CU_ASSERT_EQUAL(xpl_schedule_parse(bad[i], &s, err), -1);
  CU_ASSERT_EQUAL(xpl_schedule_parse("chat 429.9.0", &s, err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "'429.9.0'"));
}

static void test_shrink_candidates(void) {
  xpl_space sp = {.max_ra_index = -1};
  xpl_schedule s = {.call = XPL_CALL_STREAM, .n = 3};
  s.s[0] = (xpl_step){XPL_S_RESET, 0, 0};
  s.s[1] = (xpl_step){XPL_S_429, 3, 4};
  s.s[2] = (xpl_step){XPL_S_STREAM_DROP, 0, 2};
  xpl_schedule out[256];
  int n = xpl_shrink_candidates(&s, &sp, out, 256);
  CU_ASSERT(n > 10);
  for (int i = 0; i < n; i++) CU_ASSERT(xpl_schedule_weight(&out[i]) < xpl_schedule_weight(&s));
  /* removals come first */
  CU_ASSERT_EQUAL(out[0].n, 2);
  CU_ASSERT_EQUAL(out[1].n, 2);
  CU_ASSERT_EQUAL(out[2].n, 2);
  CU_ASSERT_EQUAL(out[3].n, 3);
  /* the weakest replacement of the reset is a 503 */
  CU_ASSERT_EQUAL(out[3].s[0].kind, XPL_S_5XX);
  /* a 503 alone has nothing smaller */
  xpl_schedule one = {.call = XPL_CALL_CHAT, .n = 1};
  one.s[0] = (xpl_step){XPL_S_5XX, 0, 0};
  CU_ASSERT_EQUAL(xpl_shrink_candidates(&one, &sp, out, 256), 0);
}

int suite_schedule(void) {
  CU_pSuite s = CU_add_suite("schedule", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "the same seed and index give the same schedule", test_deterministic);
  CU_add_test(s, "drawn steps stay in the space", test_space);
  CU_add_test(s, "every step of every call loads in sim", test_every_step_loads);
  CU_add_test(s, "the scenario text", test_lua_text);
  CU_add_test(s, "shrink candidates are smaller, removals first", test_shrink_candidates);
  CU_add_test(s, "the schedule line reads back", test_code_round_trip);
  return 0;
}
