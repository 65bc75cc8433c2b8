/* test_lua_loops.c - one Lua state per event loop (issue 13 item 3): a
   slow call on one loop does not hold up another, Lua variables are each
   loop's own while math.random is one sequence, and req.body is made only
   when a provider function reads it. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/lua_int.h"
#include "test_lua_util.h"

static sim_scenario *load_ok(const char *text, char **path) {
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  int rc = tl_load(text, &sc, path, err);
  if (rc != 0) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_EQUAL(rc, 0);
  return sc;
}

/* The content of the chat step provider 0 answers with for attempt, or a
   copy of the error; NULL when it failed with no message. Caller frees. */
static char *decide_text(sim_scenario *sc, sim_req *r) {
  char err[SIM_ERRLEN];
  sim_step *st = NULL;
  if (sim__scenario_decide(sc, 0, r, &st, err) != 0) {
    fprintf(stderr, "\n  %s\n", err);
    return strdup(err);
  }
  char *s = strdup(st->content != NULL ? st->content : "(none)");
  sim__step_free(st);
  return s;
}

static long conversions(const sim_scenario *sc) {
  sim_scenario_stats st;
  sim__scenario_stats(sc, &st);
  return st.body_conversions;
}

/* ------------------------------------------------------- the lazy body */

/* A provider that never reads req.body never has it converted; one that
   reads it twice has it converted once per request, and sees it whole. */
static void test_body_only_when_read(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'b', providers = {\n"
      "  { name = 'blind', fn = function(req) return chat { content = req.path } end },\n"
      "  { name = 'reader', fn = function(req)\n"
      "      local a = req.body.messages[1].content\n"
      "      local b = req.body.model\n"
      "      return chat { content = a .. ' ' .. b } end },\n"
      "} }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  char err[SIM_ERRLEN];
  for (int i = 1; i <= 5; i++) {
    sim_req r = tl_req(i);
    sim_step *st = NULL;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 0, &r, &st, err), 0);
    TL_ASSERT_STR(st->content, "/v1/chat/completions");
    sim__step_free(st);
  }
  CU_ASSERT_EQUAL(conversions(sc), 0);
  for (int i = 1; i <= 3; i++) {
    sim_req r = tl_req(i);
    sim_step *st = NULL;
    CU_ASSERT_EQUAL_FATAL(sim__scenario_decide(sc, 1, &r, &st, err), 0);
    TL_ASSERT_STR(st->content, "hi gpt-4o-mini");
    sim__step_free(st);
  }
  CU_ASSERT_EQUAL(conversions(sc), 3);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* What a provider can do with req's body: pairs() sees it, rawget does not
   before the first read, the metatable is out of reach, a body that is not
   JSON or is missing is nil, and a req kept past its call has no body. */
static void test_body_edges(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local kept\n"
      "return scenario { name = 'e', provider = function(req)\n"
      "  if req.attempt == 1 then\n"
      "    local before = rawget(req, 'body') == nil\n"
      "    local n = 0 for k in pairs(req) do if k == 'body' then n = n + 1 end end\n"
      "    local mt = getmetatable(req)\n"
      "    local ok = pcall(setmetatable, req, {})\n"
      "    kept = req\n"
      "    return chat { content = tostring(before) .. ' ' .. n .. ' ' .. tostring(mt) ..\n"
      "                  ' ' .. tostring(ok) .. ' ' .. req.body.model }\n"
      "  elseif req.attempt == 2 then\n"
      "    return chat { content = tostring(kept.body ~= nil) .. ' ' .. tostring(req.body) }\n"
      "  end\n"
      "  return chat { content = tostring(req.body) }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  /* attempt 1: pairs made it (1 conversion), later reads are plain. */
  sim_req r = tl_req(1);
  char *s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "true 1 req false gpt-4o-mini");
  free(s);
  CU_ASSERT_EQUAL(conversions(sc), 1);
  /* attempt 2: the kept req (read during its call) keeps its table; this
     request's body is not JSON: nil, one conversion tried. */
  r = tl_req(2);
  r.body = "not json";
  r.body_len = 8;
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "true nil");
  free(s);
  CU_ASSERT_EQUAL(conversions(sc), 2);
  /* attempt 3: no body at all: nil without a conversion. */
  r = tl_req(3);
  r.body = NULL;
  r.body_len = 0;
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "nil");
  free(s);
  CU_ASSERT_EQUAL(conversions(sc), 2);
  sim__scenario_free(sc);
  tl_remove(path);

  /* A req kept by an earlier call, never read then, has no body later:
     its bytes were the server's and are gone. */
  sc = load_ok("local kept\n"
               "return scenario { name = 'k', provider = function(req)\n"
               "  if req.attempt == 1 then kept = req return chat { content = 'kept' } end\n"
               "  return chat { content = tostring(kept.body) .. ' ' .. req.body.model }\n"
               "end }",
               &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  r = tl_req(1);
  s = decide_text(sc, &r);
  free(s);
  r = tl_req(2);
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "nil gpt-4o-mini");
  free(s);
  CU_ASSERT_EQUAL(conversions(sc), 1);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* req.headers is made when read (issue 13): not there to rawget before,
   then a table with lower-case names and repeated headers joined; pairs()
   sees it; a req kept past its call without reading them has none. */
static void test_headers_when_read(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local kept\n"
      "return scenario { name = 'h', provider = function(req)\n"
      "  if req.attempt == 1 then\n"
      "    local before = rawget(req, 'headers') == nil\n"
      "    return chat { content = tostring(before) .. ' ' .. req.headers['x-a'] ..\n"
      "                  ' ' .. tostring(rawget(req, 'headers') ~= nil) }\n"
      "  elseif req.attempt == 2 then\n"
      "    local n = 0 for k in pairs(req) do if k == 'headers' then n = n + 1 end end\n"
      "    kept = req\n"
      "    return chat { content = tostring(n) }\n"
      "  elseif req.attempt == 3 then\n"
      "    kept = req\n"
      "    return chat { content = 'kept' }\n"
      "  end\n"
      "  return chat { content = tostring(kept.headers) }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_header hs[3] = {{"X-A", "one"}, {"x-a", "two"}, {"content-type", "application/json"}};
  sim_req r = tl_req(1);
  r.headers = hs;
  r.nheaders = 3;
  char *s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "true one, two true");
  free(s);
  r.attempt = 2;
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "1");
  free(s);
  r.attempt = 3;
  s = decide_text(sc, &r);
  free(s);
  r.attempt = 4;
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "nil");
  free(s);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* req's other fields are made when read too (issue 30): rawget sees none
   before, each reads its value and is kept once read, pairs() sees every
   field and not the private key they are made from, a field the function
   set itself is not overwritten, and a req kept past its call still reads
   them (they were copied, unlike the body and headers). */
static void test_fields_when_read(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local kept\n"
      "return scenario { name = 'f', provider = function(req)\n"
      "  if req.attempt == 1 then\n"
      "    local raw = rawget(req, 'n') == nil and rawget(req, 'path') == nil\n"
      "    local a, n, t = req.attempt, req.n, req.t\n"
      "    local kept_raw = rawget(req, 'n') == 7\n"
      "    return chat { content = tostring(raw) .. ' ' .. tostring(kept_raw) .. ' ' .. a .. ' ' ..\n"
      "      n .. ' ' .. req.method .. ' ' .. req.path .. ' ' .. req.provider .. ' ' ..\n"
      "      req.dialect .. ' ' .. req.key .. ' ' .. tostring(req.stream) .. ' ' .. tostring(t) ..\n"
      "      ' ' .. tostring(req.nothing) }\n"
      "  elseif req.attempt == 2 then\n"
      "    req.n = 'mine'\n"
      "    local keys, odd = {}, 0\n"
      "    for k, v in pairs(req) do\n"
      "      if type(k) == 'string' then keys[#keys + 1] = k else odd = odd + 1 end\n"
      "    end\n"
      "    table.sort(keys)\n"
      "    kept = req\n"
      "    return chat { content = table.concat(keys, ',') .. ' ' .. odd .. ' ' .. req.n }\n"
      "  end\n"
      "  return chat { content = kept.attempt .. ' ' .. kept.path .. ' ' .. kept.key .. ' ' ..\n"
      "    tostring(kept.headers ~= nil) .. ' ' .. req.attempt }\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(1);
  r.n = 7;
  r.t = 1.5;
  r.stream = 1;
  char *s = decide_text(sc, &r);
  char want[512];
  snprintf(want, sizeof want, "true true 1 7 %s %s %s %s %s true 1.5 nil", r.method, r.path,
           r.provider != NULL ? r.provider : "primary", sim__dialect_name(r.dialect), r.key);
  TL_ASSERT_STR(s, want);
  free(s);
  r = tl_req(2);
  s = decide_text(sc, &r);
  TL_ASSERT_STR(s, "attempt,body,dialect,headers,key,method,n,path,provider,stream,t 0 mine");
  free(s);
  r = tl_req(3);
  s = decide_text(sc, &r);
  snprintf(want, sizeof want, "2 %s %s true 3", r.path, r.key);
  TL_ASSERT_STR(s, want);
  free(s);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* A body read counts against the call's memory limit as before. */
static void test_body_in_limits(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'm', provider = function(req)\n"
      "  local t = {} for i = 1, 1e9 do t[i] = req.body.model .. i end\n"
      "end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(1);
  sim_step *st = NULL;
  char err[SIM_ERRLEN];
  int rc = sim__scenario_decide(sc, 0, &r, &st, err);
  CU_ASSERT_EQUAL(rc, SIM_ELUA);
  CU_ASSERT(strstr(err, "limit exceeded") != NULL);
  CU_ASSERT_EQUAL(conversions(sc), 1);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* -------------------------------------------------- loops side by side */

/* A hook that holds loop 0's call until another thread has finished a
   whole decision, or gives up after 10 s (so a global lock fails the test
   instead of hanging it). */
typedef struct hold {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int inside;      /* 1: loop 0's call is being held */
  int other_done;  /* 1: the other thread's decision returned */
  int saw_other;   /* 1: loop 0's call saw it while held */
  int held;        /* loop 0 calls held so far */
} hold;

static void hold_hook(void *arg, int loop) {
  hold *h = arg;
  if (loop != 0) return;
  pthread_mutex_lock(&h->mu);
  if (h->held++ == 0) {
    h->inside = 1;
    pthread_cond_broadcast(&h->cv);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    while (!h->other_done)
      if (pthread_cond_timedwait(&h->cv, &h->mu, &until) == ETIMEDOUT) break;
    h->saw_other = h->other_done;
  }
  pthread_mutex_unlock(&h->mu);
}

typedef struct caller {
  sim_scenario *sc;
  int attempt;
  char *text;
} caller;

static void *call_once(void *arg) {
  caller *c = arg;
  sim_req r = tl_req(c->attempt);
  c->text = decide_text(c->sc, &r);
  return NULL;
}

/* While one loop's call is held, another loop decides and returns. */
static void test_slow_loop_does_not_block(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'p', provider = function(req)\n"
      "  return chat { content = 'attempt ' .. req.attempt } end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  hold h = {.inside = 0};
  pthread_mutex_init(&h.mu, NULL);
  pthread_cond_init(&h.cv, NULL);
  sim__scenario_set_hook(sc, hold_hook, &h);

  caller slow = {sc, 1, NULL};
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, call_once, &slow), 0);
  pthread_mutex_lock(&h.mu);
  while (!h.inside) pthread_cond_wait(&h.cv, &h.mu);
  pthread_mutex_unlock(&h.mu);

  /* This thread is another loop: it gets its own state and its answer. */
  sim_req r = tl_req(2);
  char *mine = decide_text(sc, &r);
  pthread_mutex_lock(&h.mu);
  h.other_done = 1;
  pthread_cond_broadcast(&h.cv);
  pthread_mutex_unlock(&h.mu);
  pthread_join(th, NULL);

  TL_ASSERT_STR(mine, "attempt 2");
  TL_ASSERT_STR(slow.text, "attempt 1");
  CU_ASSERT_EQUAL(h.saw_other, 1);
  sim_scenario_stats st;
  sim__scenario_stats(sc, &st);
  CU_ASSERT_EQUAL(st.loops, 2);
  CU_ASSERT_EQUAL(st.waits, 0);
  free(mine);
  free(slow.text);
  sim__scenario_free(sc);
  pthread_cond_destroy(&h.cv);
  pthread_mutex_destroy(&h.mu);
  tl_remove(path);
}

/* A runaway call on one loop (stopped by the instruction limit) while the
   other loop answers: each gets what it would alone. */
static void test_runaway_on_one_loop(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'r', provider = function(req)\n"
      "  if req.attempt == 1 then while true do end end\n"
      "  return chat { content = 'fine' } end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  hold h = {.inside = 0};
  pthread_mutex_init(&h.mu, NULL);
  pthread_cond_init(&h.cv, NULL);
  sim__scenario_set_hook(sc, hold_hook, &h);
  caller slow = {sc, 1, NULL};
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, call_once, &slow), 0);
  pthread_mutex_lock(&h.mu);
  while (!h.inside) pthread_cond_wait(&h.cv, &h.mu);
  pthread_mutex_unlock(&h.mu);
  sim_req r = tl_req(2);
  char *mine = decide_text(sc, &r);
  pthread_mutex_lock(&h.mu);
  h.other_done = 1;
  pthread_cond_broadcast(&h.cv);
  pthread_mutex_unlock(&h.mu);
  pthread_join(th, NULL);
  TL_ASSERT_STR(mine, "fine");
  CU_ASSERT(slow.text != NULL && strstr(slow.text, "limit exceeded") != NULL);
  CU_ASSERT_EQUAL(h.saw_other, 1);
  free(mine);
  free(slow.text);
  sim__scenario_free(sc);
  pthread_cond_destroy(&h.cv);
  pthread_mutex_destroy(&h.mu);
  tl_remove(path);
}

/* Lua variables are each loop's own; values computed at the top of the
   file are the same in every loop (each state runs it with the load's
   seed). */
static void test_variables_per_loop(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "local pick = math.random(1e9)\n"
      "local count = 0\n"
      "return scenario { name = 'v', provider = function(req)\n"
      "  count = count + 1\n"
      "  return chat { content = pick .. ' ' .. count } end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  char *a[3], *b[2];
  for (int i = 0; i < 3; i++) {
    sim_req r = tl_req(1);
    a[i] = decide_text(sc, &r);
  }
  caller c[2] = {{sc, 1, NULL}, {sc, 1, NULL}};
  for (int i = 0; i < 2; i++) {
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, call_once, &c[i]), 0);
    pthread_join(th, NULL);
    b[i] = c[i].text;
  }
  /* The numbers after the pick: this thread 1 2 3; each new thread 1 (a
     thread that ended may leave its id, and so its state, to the next). */
  char want[64];
  const char *sp = a[0] != NULL ? strchr(a[0], ' ') : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(sp);
  int pl = (int)(sp - a[0]);
  for (int i = 0; i < 3; i++) {
    snprintf(want, sizeof want, "%.*s %d", pl, a[0], i + 1);
    TL_ASSERT_STR(a[i], want);
  }
  snprintf(want, sizeof want, "%.*s 1", pl, a[0]);
  TL_ASSERT_STR(b[0], want);
  CU_ASSERT(b[1] != NULL && strncmp(b[1], a[0], (size_t)pl + 1) == 0);
  for (int i = 0; i < 3; i++) free(a[i]);
  for (int i = 0; i < 2; i++) free(b[i]);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* math.random is one sequence for the scenario whatever loop draws: the
   same seed gives the same answers to the same requests whether one thread
   or several take turns. And it is Lua 5.4's own: seed 7 draws what stock
   Lua draws after math.randomseed(7). */
static void test_random_shared(void) {
  const char *text =
      "return scenario { name = 'x', seed = 7, provider = function(req)\n"
      "  return chat { content = string.format('%d %.17g %d %d %d', math.random(1000000000),\n"
      "    math.random(), math.random(0), math.random(-5, 5), math.random(3)) } end }";
  char *one[4], *turns[4], *path;
  sim_scenario *sc = load_ok(text, &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  for (int i = 0; i < 4; i++) {
    sim_req r = tl_req(i + 1);
    one[i] = decide_text(sc, &r);
  }
  sim__scenario_free(sc);
  tl_remove(path);
  TL_ASSERT_STR(one[0], "970816728 0.74830981146053188 6753524439270396089 4 2");

  sc = load_ok(text, &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  for (int i = 0; i < 4; i++) {
    if (i % 2 == 0) {
      sim_req r = tl_req(i + 1);
      turns[i] = decide_text(sc, &r);
    } else {
      caller c = {sc, i + 1, NULL};
      pthread_t th;
      CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, call_once, &c), 0);
      pthread_join(th, NULL);
      turns[i] = c.text;
    }
  }
  sim_scenario_stats st;
  sim__scenario_stats(sc, &st);
  CU_ASSERT(st.loops >= 2);
  for (int i = 0; i < 4; i++) {
    TL_ASSERT_STR(turns[i], one[i]);
    free(one[i]);
    free(turns[i]);
  }
  sim__scenario_free(sc);
  tl_remove(path);
}

/* More threads than states: they share states, each still right. */
typedef struct many {
  sim_scenario *sc;
  int id;
  int failures;
} many;

static void *many_calls(void *arg) {
  many *m = arg;
  for (int i = 0; i < 50; i++) {
    sim_req r = tl_req(1);
    r.n = m->id * 1000 + i;
    char *s = decide_text(m->sc, &r);
    char want[32];
    snprintf(want, sizeof want, "%d", r.n);
    if (s == NULL || strcmp(s, want) != 0) m->failures++;
    free(s);
  }
  return NULL;
}

static void test_more_threads_than_states(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 'm', provider = function(req)\n"
      "  return chat { content = tostring(req.n) } end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  enum { N = 24 };
  pthread_t th[N];
  many m[N];
  for (int i = 0; i < N; i++) {
    m[i] = (many){sc, i + 1, 0};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, many_calls, &m[i]), 0);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    CU_ASSERT_EQUAL(m[i].failures, 0);
  }
  sim_scenario_stats st;
  sim__scenario_stats(sc, &st);
  CU_ASSERT(st.loops >= 1 && st.loops <= 16);
  sim__scenario_free(sc);
  tl_remove(path);
}

/* `shared` is one store for every loop: counts from two threads add up,
   an order list gives each key one position, values keep their types. */
typedef struct sharer {
  sim_scenario *sc;
  int first;
  char *last;
} sharer;

static void *share_calls(void *arg) {
  sharer *w = arg;
  for (int i = 0; i < 200; i++) {
    sim_req r = tl_req(1);
    r.key = (i % 2 == 0) == w->first ? "k-even" : "k-odd";
    free(w->last);
    w->last = decide_text(w->sc, &r);
  }
  return NULL;
}

static void test_shared_across_loops(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "return scenario { name = 's', provider = function(req)\n"
      "  if req.attempt == 2 then\n"
      "    return chat { content = tostring(shared.get('hits')) .. ' ' ..\n"
      "      shared.order('keys', 'k-even') .. shared.order('keys', 'k-odd') ..\n"
      "      shared.order('other', 'k-odd') .. ' ' .. tostring(shared.get('flag')) ..\n"
      "      ' ' .. tostring(shared.get('pi')) .. ' ' .. tostring(shared.get('s')) } end\n"
      "  shared.order('keys', req.key)\n"
      "  shared.set('flag', true) shared.set('pi', 3.5) shared.set('s', 'str')\n"
      "  return chat { content = tostring(shared.incr('hits')) } end }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  pthread_t th[2];
  sharer w[2] = {{sc, 1, NULL}, {sc, 0, NULL}};
  for (int i = 0; i < 2; i++)
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, share_calls, &w[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  sim_req r = tl_req(2);
  char *s = decide_text(sc, &r);
  /* k-even came first or k-odd did: either way positions 1 and 2. */
  CU_ASSERT(s != NULL && (strcmp(s, "400 121 true 3.5 str") == 0 ||
                          strcmp(s, "400 211 true 3.5 str") == 0));
  if (s != NULL && strncmp(s, "400 ", 4) != 0) fprintf(stderr, "\n  got %s\n", s);
  free(s);
  for (int i = 0; i < 2; i++) free(w[i].last);
  sim__scenario_free(sc);
  tl_remove(path);

  /* What shared refuses, at the scenario's line. */
  static const struct { const char *call; const char *msg; } bad[] = {
    {"shared.set('t', {})", "shared.set: a value must be nil, a boolean, a number or a string, got table"},
    {"shared.set(string.rep('n', 600), 1)", "shared: a name or key longer than 512 bytes"},
    {"shared.set('s', string.rep('v', 5000))", "shared.set: a string longer than 4096 bytes"},
    {"shared.set('s', 'x') shared.incr('s')", "shared.incr: 's' does not hold an integer"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char text[512], err[SIM_ERRLEN];
    snprintf(text, sizeof text, "return scenario { name = 'b', provider = function(req)\n"
                                "  %s\n  return chat {} end }", bad[i].call);
    sc = load_ok(text, &path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
    sim_req q = tl_req(1);
    sim_step *st = NULL;
    CU_ASSERT_EQUAL(sim__scenario_decide(sc, 0, &q, &st, err), SIM_ELUA);
    CU_ASSERT(tl_err_is(err, path, 2, bad[i].msg));
    sim__scenario_free(sc);
    tl_remove(path);
  }
}

/* A file that returns other providers when run again (here: it counts its
   runs in `shared`) cannot serve a second loop: that loop shares the first
   state instead of failing its requests. */
static void test_other_providers_share(void) {
  char *path;
  sim_scenario *sc = load_ok(
      "if shared.incr('runs') == 1 then\n"
      "  return scenario { name = 'o', provider = function(req) return chat { content = 'first' } end }\n"
      "end\n"
      "return scenario { name = 'o', providers = { { name = 'a', chat {} }, { name = 'b', chat {} } } }",
      &path);
  CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
  sim_req r = tl_req(1);
  char *mine = decide_text(sc, &r);
  caller c = {sc, 1, NULL};
  pthread_t th;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, call_once, &c), 0);
  pthread_join(th, NULL);
  TL_ASSERT_STR(mine, "first");
  TL_ASSERT_STR(c.text, "first");
  sim_scenario_stats st;
  sim__scenario_stats(sc, &st);
  CU_ASSERT_EQUAL(st.loops, 1);
  free(mine);
  free(c.text);
  sim__scenario_free(sc);
  tl_remove(path);
}

int suite_lua_loops(void) {
  CU_pSuite s = CU_add_suite("lua_loops", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "body_only_when_read", test_body_only_when_read) ||
      !CU_add_test(s, "body_edges", test_body_edges) ||
      !CU_add_test(s, "body_in_limits", test_body_in_limits) ||
      !CU_add_test(s, "headers_when_read", test_headers_when_read) ||
      !CU_add_test(s, "fields_when_read", test_fields_when_read) ||
      !CU_add_test(s, "slow_loop_does_not_block", test_slow_loop_does_not_block) ||
      !CU_add_test(s, "runaway_on_one_loop", test_runaway_on_one_loop) ||
      !CU_add_test(s, "variables_per_loop", test_variables_per_loop) ||
      !CU_add_test(s, "random_shared", test_random_shared) ||
      !CU_add_test(s, "more_threads_than_states", test_more_threads_than_states) ||
      !CU_add_test(s, "shared_across_loops", test_shared_across_loops) ||
      !CU_add_test(s, "other_providers_share", test_other_providers_share))
    return CU_get_error();
  return 0;
}
