/*
 * test_learn.c - the inference of fusebox learn against a fake client
 * whose policy is known (no server): attempts, backoff, the statuses it
 * retries, the quota exception, the Retry-After forms, the cap found by
 * bisection and what a longer one leads to; and a client that retries
 * nothing is learned as such.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore.h"

typedef struct policy {
  int attempts;
  double base, factor;
  int retry_5xx, retry_429, retry_quota, seconds_form;
  int ra_required; /* a 429 without a Retry-After is not retried */
  int streams;     /* asks for a stream when told to; 2: and retries a cut one;
                      3: retries only one cut before any text (a tool call's) */
  int shape;       /* retries a 200 that is: 1 not JSON, 2 JSON without its fields */
  double cap; /* over it: stop */
  double own; /* the client's own time per retry, added to every gap */
  int flaky_401; /* a 401 is retried every other time it is asked */
  int obeys_should; /* x-should-retry decides */
  const char *covers; /* keeps a told attempt timeout over: headers, idle, whole */
  int ms_form;        /* reads retry-after-ms; 2: before Retry-After when both come */
  int retry_4xx;      /* retries every 4xx (a wrapper's ">=300") */
  double timeout;     /* its own attempt timeout, none told (0: none) */
  int negative;       /* Retry-After: -5: 0 backoff, 1 at once, 2 gives up */
  int past_date;      /* a Retry-After date in the past: the same */
  int decimal;        /* Retry-After: 3.5: 0 read, 1 its whole seconds (curl), 2 gives up */
  int asked_401; /* how often it was (play changes it) */
  int slow_once;  /* its first retry at once after a bad Retry-After comes 0.4 s
                     late (a loaded machine); 2 once it has (play changes it) */
  double jitter_add; /* each backoff wait times a draw in [1, 1 + jitter_add]
                        (p-retry's randomize: 1) */
  int jitter_full;   /* each backoff wait times a draw in [0, 1] (full jitter) */
  double bcap;       /* the backoff's cap (s; 0 none): after jitter_add (p-retry's
                        maxTimeout), before jitter_full */
  double late;       /* a loaded machine: each gap a draw in [0, late] longer */
  int combine_max;   /* after a Retry-After, the longer of it and the backoff (LangChain) */
  int new_key_each;  /* a new Idempotency-Key each attempt: each a new request to the
                        server, which answers it with the probe's first step */
  double early;      /* a Retry-After in seconds waited this much short (a timer
                        that fires a hair early) */
  int date_form;     /* reads an HTTP-date Retry-After, waking 0.3 s into the
                        second before it (a date has whole seconds) */
  unsigned long long rng; /* the draws' state (splitmix64) */
} policy;

/* A draw in [0, 1) from the fake client's own state: the test's seed
   decides every jitter and late wake-up, so a run is repeatable. */
static double draw(policy *pol) {
  unsigned long long z = (pol->rng += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* The first fault of the probe, as the client sees it: status (0 for a
   drop), and the Retry-After seconds asked (-1 none, -2 unparsable, -3 a
   negative number, -4 a date in the past). */
static void first_fault(const char *lua, int *status, double *ra, int *quota, int *faults,
                        double *ra_ms) {
  const char *p = strstr(lua, "provider = {\n");
  *status = 200, *ra = -1, *quota = 0, *faults = 0, *ra_ms = -1;
  if (!p) return;
  *quota = strstr(p, "insufficient_quota") != NULL;
  const char *f = strstr(p, "fail { status = ");
  if (f) {
    *status = atoi(f + 16);
    const char *r = strstr(f, "retry_after = ");
    if (r && r < strchr(f, '\n')) *ra = r[14] != '"' ? atof(r + 14) : r[15] == '-' ? -3 : -2;
    const char *d = strstr(f, "retry_after_date = -");
    if (d && d < strchr(f, '\n')) *ra = -4;
    const char *m = strstr(f, "retry_after_ms = ");
    if (m && m < strchr(f, '\n')) *ra_ms = atof(m + 17) / 1000;
  } else if (strstr(p, "drop {}")) {
    *status = 0;
  }
  for (const char *q = p; (q = strstr(q, "fail {")) != NULL; q++) (*faults)++;
  if (!*faults && *status != 200) *faults = 1;
}

/* The status and Retry-After seconds (-1 none) of the probe's k-th fail
   step (0-based), when it has one: a probe's faults may differ (503s, then
   a 429). */
static void nth_fail(const char *lua, int k, int *status, double *ra) {
  const char *f = strstr(lua, "provider = {\n");
  for (int i = 0; f && i <= k; i++)
    if ((f = strstr(f + 1, "fail { status = ")) == NULL) return;
  *status = atoi(f + 16);
  const char *r = strstr(f, "retry_after = "), *m = strstr(f, "retry_after_ms = ");
  *ra = r && r < strchr(f, '\n') && r[14] != '"' ? atof(r + 14) : -1;
  if (m && m < strchr(f, '\n')) *ra = atof(m + 17) / 1000;
}

static int play(void *arg, int reference, int n, char *const *lua, const long *index,
                xpl_outcome *out, char err[XPL_ERRLEN]) {
  policy *pol = arg;
  (void)reference, (void)index, (void)err;
  for (int i = 0; i < n; i++) {
    int status, quota, faults;
    double ra, t = 0, ra_ms;
    first_fault(lua[i], &status, &ra, &quota, &faults, &ra_ms);
    if (pol->ms_form && ra_ms > 0 && (ra <= 0 || pol->ms_form == 2)) ra = ra_ms;
    const char *date = strstr(lua[i], "retry_after_date = ");
    if (pol->date_form && date && date[19] != '-') ra = atof(date + 19) - 0.3;
    memset(&out[i], 0, sizeof out[i]);
    int streamed = pol->streams && (strstr(lua[i], "call = \"stream\"") != NULL ||
                                    strstr(lua[i], "call = \"stream_tools\"") != NULL);
    /* the first fault: a stream cut inside a tool call, no text before it */
    int tool_cut = strstr(lua[i], "tool_calls = {") && strstr(lua[i], "drop_after = 1");
    /* a 200 whose body is not an answer: 1 not JSON, 2 JSON without its fields */
    int bad_body = strstr(lua[i], "garbage { body") ? 2 : strstr(lua[i], "garbage {}") ? 1 : 0;
    if (strstr(lua[i], "delay { 66,") && !strstr(lua[i], "attempt_timeout")) {
      /* the answer after 66 s: waited for, or given up at its own timeout */
      xpl_arrival *a = &out[i].arr[out[i].narr++];
      a->t_end = pol->timeout > 0 ? pol->timeout : 66;
      a->status = pol->timeout > 0 ? 0 : 200;
      a->attempt = 1;
      out[i].attempts = 1;
      continue;
    }
    if (pol->covers && (strstr(lua[i], "attempt_timeout = 1") || strstr(lua[i], "attempt_timeout = 2"))) {
      /* gives up when its timeout is over, unless what is slow is not covered */
      int slow = strstr(lua[i], "delay { 1.2,") != NULL;
      int held = !slow && strstr(lua[i], "h2_window") != NULL, trickle = slow;
      double end = slow ? 2 : 1;
      if (held && strcmp(pol->covers, "headers") == 0) end = 5;
      if (trickle && strcmp(pol->covers, "idle") == 0) end = 2.4;
      xpl_arrival *a = &out[i].arr[out[i].narr++];
      a->t_end = end;
      a->status = held || trickle ? 200 : 0;
      a->attempt = 1;
      a->stream = streamed;
      out[i].attempts = 1;
      continue;
    }
    if (strstr(lua[i], "drop_after = 2") || tool_cut) status = -1, faults = 1; /* a stream cut */
    if (bad_body) status = -2, faults = 1;
    for (int k = 0; k < pol->attempts; k++) {
      int failed = k < faults;
      if (k > 0 && failed && status > 0 && !pol->new_key_each) nth_fail(lua[i], k, &status, &ra);
      xpl_arrival *a = &out[i].arr[out[i].narr++];
      a->t_arrive = t;
      a->t_end = t + 0.01;
      a->status = failed && status >= 0 ? status : 200;
      a->attempt = k + 1;
      a->stream = streamed;
      if (!failed) break;
      int again = status == -1 ? streamed && (pol->streams == 2 || (pol->streams == 3 && tool_cut))
                  : status == -2 ? (pol->shape & bad_body) != 0
                  : status >= 500 ? pol->retry_5xx
                  : status == 429 ? (quota ? pol->retry_quota : pol->retry_429)
                  : status >= 400 ? pol->retry_4xx
                                  : status == 0;
      if (status == 429 && pol->ra_required && ra == -1) again = 0;
      if (status == 401 && pol->flaky_401) again = pol->asked_401++ % 2 == 0;
      if (pol->obeys_should && strstr(lua[i], "[\"x-should-retry\"] = \"false\""))
        again = 0;
      if (pol->obeys_should && strstr(lua[i], "[\"x-should-retry\"] = \"true\"")) again = 1;
      if (!again || k + 1 == pol->attempts) break;
      double wait = pol->base;
      for (int j = 0; j < k; j++) wait *= pol->factor;
      if (pol->jitter_add > 0) wait *= 1 + pol->jitter_add * draw(pol);
      if (pol->bcap > 0 && wait > pol->bcap) wait = pol->bcap;
      if (pol->jitter_full) wait *= draw(pol);
      if (status == 429 && pol->seconds_form && ra > 0) {
        if (ra > pol->cap) break; /* over the cap: gives up */
        wait = pol->combine_max && wait > ra ? wait : ra;
        if (ra != (double)(long)ra && pol->decimal == 2) break;
        if (ra != (double)(long)ra && pol->decimal == 1) wait = (double)(long)ra;
        if (ra == (double)(long)ra) wait -= pol->early;
      }
      int bad = status != 429 || !pol->seconds_form ? 0 : ra == -3 ? pol->negative
                : ra == -4 ? pol->past_date : 0;
      if (bad == 2) break;
      if (bad == 1) wait = 0;
      if (status == 429 && pol->seconds_form && ra == -2) wait = 0; /* unparsable: at once */
      if (wait == 0 && pol->slow_once == 1) wait = 0.4, pol->slow_once = 2;
      t = a->t_end + wait + pol->own + (pol->late > 0 ? pol->late * draw(pol) : 0);
    }
    out[i].attempts = out[i].narr;
  }
  return 0;
}

/* A negative Retry-After and a past date told apart (curl backs off on
   the one and hangs on the other), and a decimal read, its whole seconds
   waited or given up on; a client that reads no Retry-After has no such
   facts (n/a: none written). */
static void test_ra_negative_decimal(void) {
  policy pol = {.attempts = 4, .base = 1, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 100, .negative = 0, .past_date = 2, .decimal = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.negative, "backoff");
  CU_ASSERT_STRING_EQUAL(p.past, "stop");
  CU_ASSERT_STRING_EQUAL(p.decimal, "truncate");
  CU_ASSERT_EQUAL(p.nforms, 1);
  char *lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "forms = { \"seconds\", },\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "decimal = \"truncate\",\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "negative = \"backoff\",\n    past = \"stop\","));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "Retry-After: 7.5: retried after 7.00 s (its whole seconds)"));
  free(lua);
  pol.negative = 1, pol.past_date = 0, pol.decimal = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.negative, "immediate");
  CU_ASSERT_STRING_EQUAL(p.past, "backoff");
  CU_ASSERT_STRING_EQUAL(p.decimal, "");
  CU_ASSERT_EQUAL_FATAL(p.nforms, 2);
  CU_ASSERT_STRING_EQUAL(p.forms[1], "decimal");
  lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NULL(strstr(lua, "decimal = "));
  free(lua);
  pol.decimal = 2, pol.negative = 2;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.decimal, "stop");
  CU_ASSERT_STRING_EQUAL(p.negative, "stop");
  pol.seconds_form = 0; /* reads no Retry-After: nothing to say */
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.ra_honoured, 0);
  CU_ASSERT_STRING_EQUAL(p.decimal, "");
  lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NULL(strstr(lua, "decimal"));
  CU_ASSERT_PTR_NULL(strstr(lua, "negative"));
  free(lua);
}

/* A client that reads a decimal, whose whole-second retries come a hair
   early (gap - asked < 0) and whose date retries come later than asked
   for: its own time per retry is the least of those, not whichever came
   after an early one (a -j2 ASan run once learned such a client's 4.5 s
   waited in full as "its whole seconds"). */
static void test_ra_decimal_early_timer(void) {
  policy pol = {.attempts = 4, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 100, .early = 0.01, .date_form = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.decimal, "");
  CU_ASSERT_EQUAL_FATAL(p.nforms, 3);
  CU_ASSERT_STRING_EQUAL(p.forms[1], "decimal");
  pol.decimal = 1; /* and one that waits a decimal's whole seconds stays so */
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.decimal, "truncate");
}

static int has(const xpl_policy *p, const char *r) {
  for (int i = 0; i < p->nretries; i++)
    if (strcmp(p->retries[i], r) == 0) return 1;
  return 0;
}

static void test_known_policy(void) {
  policy pol = {.attempts = 4, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 20};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.max_attempts, 4);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 0.5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-9);
  CU_ASSERT_STRING_EQUAL(p.jitter, "none");
  CU_ASSERT(has(&p, ">=500"));
  CU_ASSERT(has(&p, "429"));
  CU_ASSERT(has(&p, "connection"));
  CU_ASSERT(!has(&p, "401"));
  CU_ASSERT_EQUAL(p.quota_except, 1);
  CU_ASSERT_EQUAL(p.ra_honoured, 1);
  CU_ASSERT_EQUAL(p.nforms, 2); /* it reads a decimal too (atof) */
  CU_ASSERT_STRING_EQUAL(p.forms[0], "seconds");
  CU_ASSERT_STRING_EQUAL(p.forms[1], "decimal");
  CU_ASSERT_DOUBLE_EQUAL(p.ra_cap, 20, 1e-9);
  CU_ASSERT_STRING_EQUAL(p.over_cap, "stop");
  CU_ASSERT_STRING_EQUAL(p.idem, "false");
  char *lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "{ status = 429, except = { \"insufficient_quota\" } }"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "cap = 20,\n    over_cap = \"stop\","));
  free(lua);
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| attempts per call | 4 |"));
  free(md);
}

/* The client's own time per retry (0.3 s here) lengthens every gap; a
   Retry-After waited out shows it, and the backoff is learned without it,
   and a retry at once is still told from a backoff. */
static void test_own_time_taken_out(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 100, .own = 0.3};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.overhead, 0.3, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 0.5, 1e-6);
  CU_ASSERT_STRING_EQUAL(p.invalid, "immediate");
  CU_ASSERT_STRING_EQUAL(p.past, "backoff");
}

/* A retry at once that a loaded machine made late (0.4 s, against backoff
   gaps of 0.55 s and more) is played again, and the shortest retry says
   "at once"; judged on the one play it read as a backoff. */
static void test_late_retry_at_once(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 100, .own = 0.05, .slow_once = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(pol.slow_once, 2); /* the late retry was played */
  CU_ASSERT_STRING_EQUAL(p.invalid, "immediate");
  CU_ASSERT_STRING_EQUAL(p.past, "backoff");
}

/* A client that reads no Retry-After (the tenacity wrapper) shows its own
   time per retry only in the backoff's growth: gaps of 1.1 and 2.1 s are a
   1 s base doubling plus 0.1 s (before, base 1.1 and factor 1.9, and the
   learned profile failed its own client's 1.0 s waits). A growth that is
   no known factor (1 here) is left as measured. */
static void test_own_time_from_growth(void) {
  policy pol = {.attempts = 3, .base = 1, .factor = 2, .retry_5xx = 1, .own = 0.1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.own_backoff, 0.1, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 1, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-6);
  pol.factor = 1;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.own_backoff, 0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 1.1, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 1, 1e-6);
  pol.factor = 3, pol.own = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 1, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 3, 1e-6);
}

/* The learned window of the wait before retry n holds every gap the fake
   client can make there: its floor is at most own + the jitter-free wait. */
static int floor_holds(const xpl_policy *p, const policy *pol, int n) {
  double w = pol->base, f = 1;
  for (int j = 1; j < n; j++) w *= pol->factor, f *= p->factor;
  double lo = p->base * f * (strcmp(p->jitter, "subtract") == 0 ? 1 - p->fraction : 0);
  return lo <= w + pol->own + 1e-9;
}

/* A p-retry-like client (LangChain: base 1 s, factor 2, each wait times a
   draw in [1, 2]) on a loaded machine (0.05 s of own time and up to 0.1 s
   late each gap), 7 attempts, learned under 20 seeds: factor 2 every
   time, and a window whose floor no gap of the client goes under. Before,
   the growth was the median of neighbouring gaps' ratios, which the
   jitter spreads over [1, 4]: 1.9 or 2.1 under 14 of these seeds, and
   the floor (the longest first gap less a fraction read from the 5 gaps
   of one retry) stood over the client's own shortest wait under 8. */
static void test_jittered_growth(void) {
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  for (unsigned seed = 1; seed <= 20; seed++) {
    policy pol = {.attempts = 7, .base = 1, .factor = 2, .retry_5xx = 1, .jitter_add = 1,
                  .own = 0.05, .late = 0.1, .rng = seed};
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
    CU_ASSERT_EQUAL(p.max_attempts, 7);
    CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-9);
    CU_ASSERT_STRING_EQUAL(p.jitter, "subtract");
    CU_ASSERT(p.base >= 1.8 && p.base <= 2.3);
    for (int n = 1; n <= 6; n++) CU_ASSERT(floor_holds(&p, &pol, n));
  }
}

/* The growth of a jittered backoff is learned otherwise when it is
   otherwise: 3 (a factor clients use) as 3, 2.5 (none) as measured, not
   pulled to 2 or 3; one retry shows none (the default written, said so);
   and a full jitter is full. */
static void test_jittered_growth_other(void) {
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  for (unsigned seed = 1; seed <= 10; seed++) {
    policy pol = {.attempts = 6, .base = 0.5, .factor = 3, .retry_5xx = 1, .jitter_add = 1,
                  .own = 0.05, .late = 0.1, .rng = seed};
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
    CU_ASSERT_DOUBLE_EQUAL(p.factor, 3, 1e-9);
    for (int n = 1; n <= 5; n++) CU_ASSERT(floor_holds(&p, &pol, n));
    pol.factor = 2.5;
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
    CU_ASSERT(p.factor > 2.15 && p.factor < 2.7);
    for (int n = 1; n <= 5; n++) CU_ASSERT(floor_holds(&p, &pol, n));
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_BACKOFF], "pairs of one play's gaps"));
  /* one retry: no growth to read, the default written */
  policy one = {.attempts = 2, .base = 1, .factor = 3, .retry_5xx = 1, .jitter_add = 1, .rng = 7};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &one, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.jitter, "subtract");
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_BACKOFF], "one retry: no growth to read"));
  /* full jitter: its near-zero gaps are jitter "full", whatever growth
     they let the pairs read */
  for (unsigned seed = 1; seed <= 10; seed++) {
    policy pol = {.attempts = 6, .base = 1, .factor = 2, .retry_5xx = 1, .jitter_full = 1,
                  .own = 0.05, .late = 0.1, .rng = seed};
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
    CU_ASSERT_STRING_EQUAL(p.jitter, "full");
  }
}

/* The learned window of the wait before retry n, capped, holds what the
   fake client waits there: floor at most its shortest, top at least its
   longest jitter-free wait. */
static int capped_window_holds(const xpl_policy *p, const policy *pol, int n) {
  double w = pol->base, f = p->base;
  for (int j = 1; j < n; j++) w *= pol->factor, f *= p->factor;
  if (pol->bcap > 0 && w > pol->bcap) w = pol->bcap;
  if (p->cap > 0 && f > p->cap) f = p->cap;
  double lo = strcmp(p->jitter, "subtract") == 0 ? f * (1 - p->fraction) : f;
  return lo <= w + pol->own + 1e-9 && f >= w * 0.95;
}

/* A backoff cap the gaps reach is learned: two gaps at it for a
   jitter-free backoff (5 s, then 3 s under a growth of 3, then 2 s reached
   by the second gap already, whose growth is then the one to the cap),
   three for a jittered one (p-retry's maxTimeout 10 s: its growth is read
   from the 3 gaps under it, 15 draws, so it may be 15 % off, and only the
   capped retries' windows are held to the client); one the attempts
   do not reach (the tenacity wrapper's 10 s over 1, 2 and 4 s) is not
   written and the evidence says it was not seen, nor is one seen on two
   jittered gaps only, one under full jitter, or a fixed wait (factor 1).
   Before, capped gaps were read as growth: 1, 2, 4, 5, 5, 5 s learned as
   base 1, x1.3 (the median ratio), and the third retry's 4 s lay beyond
   the window's 1.7 s even with the verdict's slack for late wake-ups. */
static void test_backoff_cap(void) {
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  policy pol = {.attempts = 7, .base = 1, .factor = 2, .retry_5xx = 1, .bcap = 5};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 5, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.base, 1, 1e-9);
  for (int n = 1; n <= 6; n++) CU_ASSERT(capped_window_holds(&p, &pol, n));
  char *lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "backoff = { base = 1, factor = 2, cap = 5, jitter = \"none\" }"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "from retry 4 on the gaps stop growing: capped at 5.00 s"));
  free(lua);
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| backoff | 1 s, x2 per retry, capped at 5 s, jitter none |"));
  free(md);
  policy three = {.attempts = 6, .base = 0.5, .factor = 3, .retry_5xx = 1, .bcap = 3, .own = 0.02};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &three, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 3, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 3, 1e-9);
  for (int n = 1; n <= 5; n++) CU_ASSERT(capped_window_holds(&p, &three, n));
  policy two = {.attempts = 5, .base = 1, .factor = 2, .retry_5xx = 1, .bcap = 4};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &two, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 4, 1e-9);
  policy second = {.attempts = 5, .base = 1, .factor = 3, .retry_5xx = 1, .bcap = 2};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &second, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 2, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 2, 1e-9);
  for (int n = 1; n <= 4; n++) CU_ASSERT(capped_window_holds(&p, &second, n));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_BACKOFF], "the second already at it"));
  for (unsigned seed = 1; seed <= 10; seed++) {
    policy pr = {.attempts = 8, .base = 1, .factor = 2, .retry_5xx = 1, .jitter_add = 1,
                 .bcap = 10, .own = 0.05, .late = 0.1, .rng = seed};
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pr, &p, err), 0);
    CU_ASSERT(p.cap >= 9.9 && p.cap <= 10.5);
    CU_ASSERT(p.factor >= 1.6 && p.factor <= 2.4); /* from the 3 gaps under the cap */
    CU_ASSERT_STRING_EQUAL(p.jitter, "subtract");
    for (int n = 4; n <= 7; n++) CU_ASSERT(capped_window_holds(&p, &pr, n));
  }
  /* not reached: 1, 2, 4 s under a 10 s cap */
  policy unseen = {.attempts = 4, .base = 1, .factor = 2, .retry_5xx = 1, .bcap = 10};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &unseen, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 0, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_BACKOFF], "no cap seen: the gaps grew to the last"));
  lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "backoff = { base = 1, factor = 2, jitter = \"none\" }"));
  free(lua);
  md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| backoff | 1 s, x2 per retry, no cap seen, jitter none |"));
  free(md);
  /* jittered, at the cap on two gaps only: not read */
  policy pr2 = {.attempts = 6, .base = 1, .factor = 2, .retry_5xx = 1, .jitter_add = 1,
                .bcap = 10, .rng = 5};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pr2, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 0, 1e-9);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_BACKOFF], "a cap, or the jitter: not read"));
  policy full = {.attempts = 8, .base = 1, .factor = 2, .retry_5xx = 1, .jitter_full = 1,
                 .bcap = 4, .rng = 2};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &full, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 0, 1e-9);
  policy fixed = {.attempts = 4, .base = 1, .factor = 1, .retry_5xx = 1};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &fixed, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.cap, 0, 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(p.factor, 1, 1e-9);
}

/* A Retry-After shorter than the backoff's wait at its retry: LangChain
   waits the longer of the two ("max"), most clients the Retry-After
   ("replace"); a client whose backoff never waits 3 s within its attempts
   is not asked, and one whose attempts are new requests to the server
   cannot be (left out, said so). Before, "max" was never learned and
   LangChain's learned profile failed its own client over
   scenarios/deadline/retry_after_beyond_deadline.lua (a 5 s Retry-After,
   then p-retry's 8-16 s). */
static void test_ra_combine(void) {
  policy pol = {.attempts = 7, .base = 1, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 60, .ra_required = 1, .jitter_add = 1, .own = 0.05,
                .late = 0.1, .rng = 3, .combine_max = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.combine, "max");
  char *lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "    combine = \"max\",\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "-- a 429 asking for 1 s at retry 3"));
  free(lua);
  pol.combine_max = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.combine, "replace");
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RA_COMBINE], "(the Retry-After)"));
  /* openai's 0.5 s then 1 s: never 3 s, not asked */
  policy short_backoff = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                          .seconds_form = 1, .cap = 60, .combine_max = 1};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &short_backoff, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.combine, "");
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RA_COMBINE], "not probed"));
  lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NULL(strstr(lua, "combine ="));
  free(lua);
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| Retry-After shorter than the backoff | not probed"));
  free(md);
  /* a new key each attempt: attempt 3 gets the first step (a 503), whose
     4.5 s backoff once read as "max" (tests/cli/learn_configs.sh's capped) */
  policy keyed = {.attempts = 4, .base = 0.5, .factor = 3, .retry_5xx = 1, .retry_429 = 1,
                  .seconds_form = 1, .cap = 10, .new_key_each = 1};
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &keyed, &p, err), 0);
  CU_ASSERT_STRING_EQUAL(p.combine, "");
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RA_COMBINE], "attempt 3 got a 503, not the 429"));
}

/* A 429 retried only when it carries a Retry-After (LangChain): learned
   as such, the quota exception asked with one too, and its Retry-After
   facts probed (before, "429 not retried" and no Retry-After fact). */
static void test_429_only_with_retry_after(void) {
  policy pol = {.attempts = 4, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 20, .ra_required = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(has(&p, "429"));
  CU_ASSERT_EQUAL(p.ra_required, 1);
  CU_ASSERT_EQUAL(p.quota_except, 1);
  CU_ASSERT_EQUAL(p.ra_honoured, 1);
  CU_ASSERT_DOUBLE_EQUAL(p.ra_cap, 20, 1e-9);
  char *lua = xpl_policy_lua(&p, "fake", "1", NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "{ status = 429, except = { \"insufficient_quota\" }, "
                                     "retry_after = \"required\" }"));
  free(lua);
  /* one that retries a 429 with or without: not "required" */
  pol.ra_required = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.ra_required, 0);
  /* one that retries no 429 at all, with a Retry-After or not */
  pol.retry_429 = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(!has(&p, "429"));
  CU_ASSERT_EQUAL(p.ra_required, 0);
  CU_ASSERT_EQUAL(p.ra_honoured, 0);
}

/* A cut stream: retried by one client, not by another, and left out for
   one that does not stream when told to. */
static void test_streams(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .streams = 2};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_probed, 1);
  CU_ASSERT_EQUAL(p.streams_retried, 1);
  CU_ASSERT(has(&p, "stream_error"));
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "streams_retried = true,"));
  free(lua);
  pol.streams = 1;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_probed, 1);
  CU_ASSERT_EQUAL(p.streams_retried, 0);
  CU_ASSERT(!has(&p, "stream_error"));
  lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "streams_retried = false,"));
  free(lua);
  pol.streams = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_probed, 0);
  lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NULL(strstr(lua, "streams_retried"));
  free(lua);
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "not probed (the client did not stream when asked)"));
  free(md);
}

/* A stream cut inside a tool call's arguments, no text before it: a client
   that retries only that one (the AI SDK, LangChain) is "before_content",
   not true; one that retries every cut stays true, one that retries none
   false; and the verdict's word loads. */
static void test_streams_before_content(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .streams = 3};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_probed, 1);
  CU_ASSERT_EQUAL(p.streams_retried, 2);
  CU_ASSERT(has(&p, "stream_error"));
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "streams_retried = \"before_content\","));
  free(lua);
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_STREAMS],
                                "a stream cut inside a tool call's arguments, no text before: retried"));
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| stream cut in a tool call, no text yet | retried |"));
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| stream cut after content | not retried |"));
  free(md);
  pol.streams = 2;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_retried, 1);
  pol.streams = 1;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.streams_retried, 0);
  CU_ASSERT(!has(&p, "stream_error"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_STREAMS],
                                "a stream cut inside a tool call's arguments, no text before: not retried"));
}

/* A 200 that is not JSON and one that is JSON without its fields are two
   facts: each retried alone is learned alone, both are both, neither none. */
static void test_shape_split(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .shape = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(has(&p, "not_json"));
  CU_ASSERT(!has(&p, "missing_fields"));
  CU_ASSERT(!has(&p, "shape"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RETRIES], "200 JSON without its fields"));
  pol.shape = 2;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(!has(&p, "not_json"));
  CU_ASSERT(has(&p, "missing_fields"));
  pol.shape = 3;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(has(&p, "not_json") && has(&p, "missing_fields"));
  pol.shape = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(!has(&p, "not_json") && !has(&p, "missing_fields"));
}

/* --confidence: each yes/no probe played until a flaky fact would show;
   a 401 retried every other time is then seen to differ, the majority
   written and the evidence says so; with one play (the default) it is not. */
static void test_confidence(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .flaky_401 = 1};
  xpl_learn_opts o = {.confidence = 0.75};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.plays, 3);
  CU_ASSERT_DOUBLE_EQUAL(p.confidence, 0.75, 1e-9);
  CU_ASSERT_EQUAL(p.nflaky, 1);
  CU_ASSERT(has(&p, "401")); /* 2 of 3 */
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RETRIES], "401 (2 of 3 plays)"));
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "from 3 plays: one that flips half the time would have shown with chance 0.75"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "1 of them differed between plays"));
  free(lua);
  o.confidence = 0;
  pol.asked_401 = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.plays, 1);
  CU_ASSERT_EQUAL(p.nflaky, 0);
  CU_ASSERT_EQUAL(pol.asked_401, 1);
}

/* The card: the facts, then the evidence; the HTML one escaped. */
static void test_card(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 20};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  char *md = xpl_policy_markdown(&p, "fake", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "| Retry-After read as | seconds, decimal |"));
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "- backoff: first gap 0.50-0.50 s over 5 plays, gaps 1 and 2 spread 0 % "
                                     "and 0 %, growth x2.00"));
  CU_ASSERT_PTR_NOT_NULL(strstr(md, "- Retry-After cap: a 429 asking for 61 s: no retry; bisection: 20 s waited out, 21 s not"));
  free(md);
  char *html = xpl_policy_html(&p, "<fake & co>", "how");
  CU_ASSERT_PTR_NOT_NULL(strstr(html, "<title>Retry policy of &lt;fake &amp; co&gt;</title>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(html, "<tr><td>attempts per call</td><td>3</td></tr>"));
  CU_ASSERT_PTR_NOT_NULL(strstr(html, "<li><b>Retry-After forms</b>: a 429 asking for"));
  CU_ASSERT_PTR_NULL(strstr(html, "<fake"));
  free(html);
}

/* x-should-retry: obeyed when it stops a 503's retry or asks for a 400's;
   ignored when neither. */
static void test_should_retry(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .obeys_should = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.should_retry, 1);
  CU_ASSERT(!has(&p, "400"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RETRIES], "; none after: 400,"));
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RETRIES], "400 with x-should-retry: true;"));
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "x_should_retry = true,"));
  free(lua);
  pol.obeys_should = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.should_retry, 0);
  lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "x_should_retry = false,"));
  free(lua);
}

/* What a kept attempt timeout covers: a stalled body waited out is
   "headers"; given up on, a slow head and slow body tell idle from whole. */
static void test_covers(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1};
  const char *want[3] = {"headers", "idle", "whole"};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  for (int i = 0; i < 3; i++) {
    pol.covers = want[i];
    CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
    CU_ASSERT_EQUAL(p.timeout_seen, 1);
    CU_ASSERT_STRING_EQUAL(p.covers, want[i]);
  }
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "timeout_covers = \"whole\","));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "told 2 s, a head after 1.2 s and its body 1.2 s later: given up"));
  free(lua);
  CU_ASSERT_DOUBLE_EQUAL(p.timeout_len, 0, 1e-9); /* waited 66 s: none that short */
  pol.timeout = 30; /* httpx's default */
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_DOUBLE_EQUAL(p.timeout_len, 30, 1e-9);
  lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "  timeout = 30,\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "told none, an answer after 66 s: given up after 30.00 s"));
  free(lua);
  pol.covers = NULL; /* no timeout kept: not probed */
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.timeout_seen, 0);
  CU_ASSERT_STRING_EQUAL(p.covers, "");
}

/* retry-after-ms and Retry-After together: the one that wins comes first
   in forms (the verdict tries them in that order). */
static void test_forms_rank(void) {
  policy pol = {.attempts = 3, .base = 0.5, .factor = 2, .retry_5xx = 1, .retry_429 = 1,
                .seconds_form = 1, .cap = 100, .ms_form = 2, .decimal = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL_FATAL(p.nforms, 2);
  CU_ASSERT_STRING_EQUAL(p.forms[0], "retry-after-ms");
  CU_ASSERT_STRING_EQUAL(p.forms[1], "seconds");
  pol.ms_form = 1;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL_FATAL(p.nforms, 2);
  CU_ASSERT_STRING_EQUAL(p.forms[0], "seconds");
  CU_ASSERT_STRING_EQUAL(p.forms[1], "retry-after-ms");
  CU_ASSERT_PTR_NOT_NULL(strstr(p.evidence[XPL_EV_RA_FORMS], "together: retried after"));
}

/* Every 4xx probed retried, the quota 429 too: "400-499", so a 402 the
   probes do not name is judged retried (the tenacity wrapper's learned
   profile failed its own client on payment_402); with the quota 429 not
   retried, the statuses one by one. */
static void test_all_4xx(void) {
  policy pol = {.attempts = 3, .base = 1, .factor = 1, .retry_5xx = 1, .retry_429 = 1,
                .retry_quota = 1, .retry_4xx = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(has(&p, "400-499"));
  CU_ASSERT(has(&p, ">=500"));
  CU_ASSERT(!has(&p, "401"));
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "retries = { \"400-499\", \">=500\","));
  free(lua);
  pol.retry_quota = 0;
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT(!has(&p, "400-499"));
  CU_ASSERT(has(&p, "401"));
  CU_ASSERT_EQUAL(p.quota_except, 1);
}

static void test_retries_nothing(void) {
  policy pol = {.attempts = 1};
  xpl_learn_opts o = {0};
  xpl_policy p;
  char err[XPL_ERRLEN];
  CU_ASSERT_EQUAL_FATAL(xpl_learn(&o, play, &pol, &p, err), 0);
  CU_ASSERT_EQUAL(p.max_attempts, 1);
  CU_ASSERT_EQUAL(p.nretries, 0);
  CU_ASSERT_EQUAL(p.ra_honoured, 0);
  char *lua = xpl_policy_lua(&p, NULL, NULL, NULL, NULL);
  CU_ASSERT_PTR_NULL(strstr(lua, "backoff"));
  CU_ASSERT_PTR_NOT_NULL(strstr(lua, "retry_after = { honoured = false }"));
  free(lua);
}

int suite_learn(void) {
  CU_pSuite s = CU_add_suite("learn", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "a known policy is learned back", test_known_policy);
  CU_add_test(s, "a client that retries nothing", test_retries_nothing);
  CU_add_test(s, "the client's own time is taken out", test_own_time_taken_out);
  CU_add_test(s, "a late retry at once is played again", test_late_retry_at_once);
  CU_add_test(s, "the client's own time read from the backoff's growth", test_own_time_from_growth);
  CU_add_test(s, "a jittered backoff's growth: p-retry's 2 under load", test_jittered_growth);
  CU_add_test(s, "a jittered backoff's growth learned otherwise", test_jittered_growth_other);
  CU_add_test(s, "a backoff cap, seen or not", test_backoff_cap);
  CU_add_test(s, "a Retry-After shorter than the backoff: max or replace", test_ra_combine);
  CU_add_test(s, "a 429 retried only with a Retry-After", test_429_only_with_retry_after);
  CU_add_test(s, "broken streams", test_streams);
  CU_add_test(s, "a stream retried only before content", test_streams_before_content);
  CU_add_test(s, "not JSON and fields missing are two facts", test_shape_split);
  CU_add_test(s, "x-should-retry obeyed or ignored", test_should_retry);
  CU_add_test(s, "what the attempt timeout covers", test_covers);
  CU_add_test(s, "which of two Retry-After headers wins", test_forms_rank);
  CU_add_test(s, "a negative Retry-After, a past date and a decimal", test_ra_negative_decimal);
  CU_add_test(s, "a decimal read, the whole seconds a hair early", test_ra_decimal_early_timer);
  CU_add_test(s, "every 4xx retried is 400-499", test_all_4xx);
  CU_add_test(s, "--confidence plays a yes/no probe until a flaky fact shows", test_confidence);
  CU_add_test(s, "the policy card, Markdown and HTML, with the evidence", test_card);
  return 0;
}
