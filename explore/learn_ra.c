/*
 * learn_ra.c - the Retry-After probes of `fusebox learn`: which forms the
 * client reads (played side by side, each as often as --confidence asks)
 * and which wins when two come, the client's own time a waited-out value
 * shows, the cap found by bisection and what a longer value leads to, an
 * unparsable value, a negative number, a date in the past (curl backs off
 * on the one and hangs on the other) and a decimal (read, its whole
 * seconds waited, or something else done).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/learn_int.h"

/* What followed a probe's first attempt, for the evidence: a static text. */
static const char *lrn_after(const xpl_outcome *o) {
  static char b[64];
  if (!lrn_retried(o)) return "no retry";
  snprintf(b, sizeof b, "retried after %.2f s", lrn_gap(o, 1));
  return b;
}

/* One 429 probe with step text; 1 when the retry waited at least want s. */
static int lrn_wait_probe(learner *l, const char *step, double want, xpl_outcome *out) {
  char *s[1] = {(char *)step};
  if (lrn_play_n(l, 1, s, out) != 0) return -1;
  return lrn_retried(out) && lrn_gap(out, 1) >= want * 0.95 - 0.02;
}

/*
 * What a bad Retry-After (step) leads to, in the profile's words, with the
 * outcome in out. A retry shorter than every backoff gap seen may be one
 * "at once" that a loaded machine slowed (openai 6.49 retries an unparsable
 * value at once, and under a -j2 test suite its 0.2 s gap once read as a
 * backoff): such a probe is played up to twice more and the shortest
 * retry judged, since a real backoff never comes sooner than its wait.
 */
static const char *bad_value_probe(learner *l, const char *step, xpl_outcome *out) {
  xpl_policy *p = l->p;
  if (lrn_wait_probe(l, step, 0, out) < 0) return NULL;
  for (int i = 0; i < 2; i++) {
    if (strcmp(lrn_classify(p, out), "backoff") != 0 || lrn_gap(out, 1) >= p->min_gap) break;
    xpl_outcome again;
    if (lrn_wait_probe(l, step, 0, &again) < 0) return NULL;
    if (lrn_retried(&again) && lrn_gap(&again, 1) < lrn_gap(out, 1)) *out = again;
  }
  return lrn_classify(p, out);
}

/*
 * Retry-After: v + 0.5, where a whole v was read (7.5 for curl): waited
 * in full (beyond own, the client's own time per retry) is the form
 * "decimal"; its whole seconds waited is "truncate" (curl); else what the
 * retry shows (urllib3 gives up). 0 or -1.
 */
static int probe_decimal(learner *l, double v, double own) {
  xpl_policy *p = l->p;
  char step[128];
  xpl_outcome out;
  snprintf(step, sizeof step, "    fail { status = 429, retry_after = %.1f },\n", v + 0.5);
  if (lrn_wait_probe(l, step, 0, &out) < 0) return -1;
  double g = lrn_retried(&out) ? lrn_gap(&out, 1) : -1;
  if (g - (own > 0 ? own : 0) >= v + 0.25) p->decimal[0] = '\0';
  else if (g >= v * 0.95 - 0.02) snprintf(p->decimal, sizeof p->decimal, "truncate");
  else snprintf(p->decimal, sizeof p->decimal, "%s", lrn_classify(p, &out));
  lrn_ev(p, XPL_EV_RA_BAD, "%sRetry-After: %.1f: %s%s", p->evidence[XPL_EV_RA_BAD][0] ? "; " : "",
         v + 0.5, lrn_after(&out),
         !p->decimal[0] ? " (read)" : strcmp(p->decimal, "truncate") == 0 ? " (its whole seconds)" : "");
  return 0;
}

/* The least wait the learned backoff allows before retry n (1-based): its
   window's floor, as the profile verdict reads it. */
static double backoff_floor(const xpl_policy *p, int n) {
  double w = p->base * pow(p->factor > 1 ? p->factor : 1, n - 1);
  if (p->cap > 0 && w > p->cap) w = p->cap;
  if (strcmp(p->jitter, "full") == 0) return 0;
  return strcmp(p->jitter, "subtract") == 0 ? w * (1 - p->fraction) : w;
}

/*
 * What a Retry-After shorter than the backoff's wait at its retry leads
 * to: waited as asked ("replace", most clients) or the backoff waited
 * ("max": LangChain JS's p-retry sleeps its own delay, then the
 * Retry-After only when that is longer). Asked at the first retry n whose
 * learned backoff waits at least 2 r + 1 s, r = 1 s the Retry-After (in
 * the first form the client reads): n - 1 503s (retried: the backoff
 * probe) then a 429 asking for r, as often as --confidence asks. A retry
 * from halfway between r and that wait on is "max", one sooner (but not
 * sooner than r) "replace". No retry, or one sooner than r (the value not
 * read there), tells neither, nor does a client whose attempt n did not
 * get the 429 (a new Idempotency-Key each attempt makes each a new request
 * to the server, whose steps start over: the test client "capped" was
 * read as "max" from a 503's backoff); a client whose backoff never waits
 * that long within its attempts is not asked. Either way the fact is left out (the
 * profile's default, "replace") and the evidence says so. 0 or -1.
 */
static int probe_combine(learner *l) {
  xpl_policy *p = l->p;
  const double r = 1;
  int n = 1;
  while (n < p->max_attempts && backoff_floor(p, n) < 2 * r + 1) n++;
  if (n >= p->max_attempts) {
    lrn_ev(p, XPL_EV_RA_COMBINE, "no retry within %d attempts backs off %.0f s or more: a %.0f s "
           "Retry-After shorter than the backoff not probed", p->max_attempts, 2 * r + 1, r);
    return 0;
  }
  char step[1024] = "";
  for (int i = 1; i < n; i++) strcat(step, "    fail { status = 503 },\n");
  const char *f = p->forms[0];
  int date = strcmp(f, "date") == 0;
  size_t len = strlen(step);
  snprintf(step + len, sizeof step - len, "    fail { status = 429, %s = %.0f },\n",
           strcmp(f, "retry-after-ms") == 0 ? "retry_after_ms" : date ? "retry_after_date"
                                                                     : "retry_after",
           strcmp(f, "retry-after-ms") == 0 ? r * 1000 : r);
  char *st[1] = {step};
  xpl_outcome *out = lrn_play_each(l, 1, st);
  if (!out) return -1;
  double b = backoff_floor(p, n), mid = r + (b - r) / 2, least = date ? 0 : r * 0.95 - 0.02;
  int max = 0, replace = 0, served = 0;
  double g = -1;
  for (int j = 0; j < p->plays; j++) {
    const xpl_outcome *o = &out[j];
    /* a client whose attempts are new requests to the server (a new
       Idempotency-Key each) got the first step, a 503, every time */
    if (o->narr < n || o->arr[n - 1].status != 429) continue;
    served++;
    if (o->narr <= n) continue;
    double gj = lrn_gap(o, n);
    if (gj >= mid) max++;
    else if (gj >= least) replace++;
    if (g < 0) g = gj; /* the first play's, for the evidence */
  }
  free(out);
  lrn_ev(p, XPL_EV_RA_COMBINE, "a 429 asking for %.0f s at retry %d (the backoff's %.2f s or "
         "more): ", r, n, b);
  if (max + replace == 0) {
    if (!served)
      lrn_ev(p, XPL_EV_RA_COMBINE, "attempt %d got a 503, not the 429 (each attempt a new request "
             "to the server, whose steps start over): not told apart", n);
    else lrn_ev(p, XPL_EV_RA_COMBINE, "%s: not told apart", g < 0 ? "no retry" : "retried sooner than it asked");
    return 0;
  }
  char buf[48];
  snprintf(p->combine, sizeof p->combine, "%s", max > replace ? "max" : "replace");
  if (max && replace) p->nflaky++;
  lrn_ev(p, XPL_EV_RA_COMBINE, "retried after %.2f s (%s)%s", g,
         max > replace ? "the backoff, the longer" : "the Retry-After",
         lrn_split(p, max > replace ? max : replace, buf));
  return 0;
}

/* Retry-After: each form, the cap (by bisection), bad and past values. */
int lrn_probe_retry_after(learner *l) {
  xpl_policy *p = l->p;
  if (!p->retries_429 || p->max_attempts < 2) return 0;
  /* a value that stands out from the backoff */
  double v = ceil(3 * p->base * (p->factor > 1 ? p->factor : 1) + 1);
  if (v < 2) v = 2;
  char step[256];
  xpl_outcome out;
  /* each form, its plays side by side; a Retry-After waited out shows the
     client's own time per request: the gap beyond the wait asked (the
     shortest of the forms read) */
  char fs[3][128];
  snprintf(fs[0], sizeof fs[0], "    fail { status = 429, retry_after_ms = %.0f },\n", v * 1000);
  snprintf(fs[1], sizeof fs[1], "    fail { status = 429, retry_after = %.0f },\n", v);
  snprintf(fs[2], sizeof fs[2], "    fail { status = 429, retry_after_date = %.0f },\n", v + 1);
  char *fl[3] = {fs[0], fs[1], fs[2]};
  static const char *const FORM[3] = {"retry-after-ms", "seconds", "an HTTP-date"};
  xpl_outcome *fo = lrn_play_each(l, 3, fl);
  if (!fo) return -1;
  int read[3];
  double over = -1; /* meaningful once have_over: a retry a hair early makes it negative */
  int have_over = 0;
  lrn_ev(p, XPL_EV_RA_FORMS, "a 429 asking for %.0f s:", v);
  for (int i = 0; i < 3; i++) {
    int c = 0;
    double g = -1;
    for (int j = 0; j < p->plays; j++) {
      const xpl_outcome *o = &fo[i * p->plays + j];
      int w = lrn_retried(o) && lrn_gap(o, 1) >= v * 0.95 - 0.02;
      c += w;
      if (w && (!have_over || lrn_gap(o, 1) - v < over)) {
        over = lrn_gap(o, 1) - v;
        have_over = 1;
      }
      if (lrn_retried(o) && (g < 0 || lrn_gap(o, 1) < g)) g = lrn_gap(o, 1);
    }
    if (c != 0 && c != p->plays) p->nflaky++;
    read[i] = 2 * c >= p->plays;
    char b[48];
    if (g < 0) lrn_ev(p, XPL_EV_RA_FORMS, "%s as %s: no retry", i ? ";" : "", FORM[i]);
    else lrn_ev(p, XPL_EV_RA_FORMS, "%s as %s: retried after %.2f s%s", i ? ";" : "", FORM[i], g,
            lrn_split(p, c, b));
  }
  free(fo);
  int ms = read[0], sec = read[1], date = read[2];
  if (over > 0 && over < p->min_gap) {
    /* the backoff as the client waits it, without that time */
    p->overhead = over;
    double raw = p->own_backoff > 0 ? p->min_gap : p->base;
    p->base = lrn_round2(raw - over > 0.01 ? raw - over : raw);
  }
  /* both headers read: which wins when both come (v ms and v + 2 s) */
  int ms_first = 1;
  if (ms && (sec || date)) {
    snprintf(step, sizeof step, "    fail { status = 429, retry_after_ms = %.0f, retry_after = %.0f },\n",
             v * 1000, v + 2);
    if (lrn_wait_probe(l, step, v + 2, &out) < 0) return -1;
    ms_first = !(lrn_retried(&out) && lrn_gap(&out, 1) >= (v + 2) * 0.95 - 0.02);
    lrn_ev(p, XPL_EV_RA_FORMS, "; retry-after-ms %.0f and Retry-After %.0f together: %s (one play)",
       v * 1000, v + 2, lrn_after(&out));
  }
  if (ms && ms_first) snprintf(p->forms[p->nforms++], 16, "retry-after-ms");
  if (sec) snprintf(p->forms[p->nforms++], 16, "seconds");
  int dec_at = sec ? p->nforms++ : -1; /* "decimal" goes here if read */
  if (date) snprintf(p->forms[p->nforms++], 16, "date");
  if (ms && !ms_first) snprintf(p->forms[p->nforms++], 16, "retry-after-ms");
  p->ra_honoured = p->nforms > 0;
  if (!p->ra_honoured) return 0;
  if (sec) { /* a decimal, where whole seconds are read */
    if (probe_decimal(l, v, over) < 0) return -1;
    if (p->decimal[0]) { /* not read: its slot goes */
      memmove(p->forms[dec_at], p->forms[dec_at + 1], (size_t)(p->nforms - dec_at - 1) * 16);
      p->nforms--;
    } else {
      snprintf(p->forms[dec_at], 16, "decimal");
    }
  }
  const char *form = sec ? "retry_after" : ms ? "retry_after_ms" : "retry_after_date";
  double mult = ms && !sec ? 1000 : 1;
  /* the cap: is 61 s waited out? else bisect between v and 61 */
  double lo = v, hi = l->o->max_wait > 0 ? l->o->max_wait : 61;
  snprintf(step, sizeof step, "    fail { status = 429, %s = %.0f },\n", form, hi * mult);
  int r = lrn_wait_probe(l, step, hi, &out);
  if (r < 0) return -1;
  if (r) {
    p->ra_cap = 0; /* none up to hi */
    p->ra_cap_probed = hi;
    lrn_ev(p, XPL_EV_RA_CAP, "a 429 asking for %.0f s: waited out (one play)", hi);
  } else {
    snprintf(p->over_cap, sizeof p->over_cap, "%s", lrn_classify(p, &out));
    lrn_ev(p, XPL_EV_RA_CAP, "a 429 asking for %.0f s: %s; ", hi, lrn_after(&out));
    for (int i = 0; i < 8 && hi - lo > 1; i++) {
      double mid = floor((lo + hi) / 2);
      snprintf(step, sizeof step, "    fail { status = 429, %s = %.0f },\n", form, mid * mult);
      if ((r = lrn_wait_probe(l, step, mid, &out)) < 0) return -1;
      if (r) lo = mid;
      else hi = mid;
    }
    p->ra_cap = lo;
    lrn_ev(p, XPL_EV_RA_CAP, "bisection: %.0f s waited out, %.0f s not (one play each)", lo, hi);
  }
  /* an unparsable value, a negative number and a date in the past */
  const char *what;
  snprintf(step, sizeof step, "    fail { status = 429, retry_after = \"soon\" },\n");
  if ((what = bad_value_probe(l, step, &out)) == NULL) return -1;
  snprintf(p->invalid, sizeof p->invalid, "%s", what);
  lrn_ev(p, XPL_EV_RA_BAD, "%sRetry-After: soon: %s", p->evidence[XPL_EV_RA_BAD][0] ? "; " : "",
         lrn_after(&out));
  snprintf(step, sizeof step, "    fail { status = 429, retry_after = \"-5\" },\n");
  if ((what = bad_value_probe(l, step, &out)) == NULL) return -1;
  snprintf(p->negative, sizeof p->negative, "%s", what);
  lrn_ev(p, XPL_EV_RA_BAD, "; Retry-After: -5: %s", lrn_after(&out));
  snprintf(step, sizeof step, "    fail { status = 429, retry_after_date = -5 },\n");
  if ((what = bad_value_probe(l, step, &out)) == NULL) return -1;
  snprintf(p->past, sizeof p->past, "%s", what);
  lrn_ev(p, XPL_EV_RA_BAD, "; a date 5 s past: %s (one play each, up to three when a "
         "retry came sooner than any backoff: the shortest)", lrn_after(&out));
  return probe_combine(l);
}
