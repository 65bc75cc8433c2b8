/*
 * verdict_timing.c - verdicts on time: `retry_after_honoured`, `backoff`
 * (minimum and maximum gaps, growth, jitter) and `within_deadline`.
 *
 * A gap is the wait between the end of one attempt and the arrival of the
 * next attempt of the same logical request at the same provider (a switch
 * of provider is a fallback, not a retry). Every duration is trace time:
 * wall milliseconds of a run whose scenario seconds were multiplied by the
 * time scale.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

typedef struct gap {
  double ms;
  int index;                  /* 1 = the wait after the first attempt */
  const rpt__arrival *prev, *next;
  const rpt__group *group;
  int seq;                    /* sequence: arrival index of the first attempt
                                 at this (request, provider, method) */
  int pos;                    /* position in collection order */
} gap;

typedef struct gaps {
  gap *g;
  int n, cap;
} gaps;

/* Collects every gap of the trace, in group order then attempt order. */
static int collect_gaps(const rpt_trace *tr, gaps *out) {
  memset(out, 0, sizeof *out);
  for (int g = 0; g < tr->ngroups; g++) {
    const rpt__group *gr = &tr->groups[g];
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *b = &tr->arr[gr->idx[k]];
      /* The previous attempt at the same provider with the same method. */
      const rpt__arrival *a = NULL;
      int index = 1, seq = gr->idx[k];
      for (int m = k - 1; m >= 0; m--) {
        const rpt__arrival *x = &tr->arr[gr->idx[m]];
        if (strcmp(x->provider, b->provider) || strcmp(x->method, b->method)) continue;
        if (a == NULL) a = x;
        else index++;
        seq = gr->idx[m];
      }
      if (a == NULL) continue; /* the first attempt at this provider */
      if (!a->has_end || b->t_arrive < a->t_end) continue;
      if (out->n == out->cap) {
        int nc = out->cap ? out->cap * 2 : 32;
        gap *p = realloc(out->g, (size_t)nc * sizeof *p);
        if (p == NULL) {
          free(out->g);
          return RPT_ENOMEM;
        }
        out->g = p;
        out->cap = nc;
      }
      out->g[out->n] = (gap){b->t_arrive - a->t_end, index, a, b, gr, seq, out->n};
      out->n++;
    }
  }
  return 0;
}

/* "2000 ms" or "2000 ms (x0.1 = 200 ms)" for a scenario-time duration. */
static const char *scaled(double ms, double scale, char *out, size_t n) {
  char a[32], b[32];
  if (scale == 1)
    snprintf(out, n, "%s", rpt__fmt_ms(ms, a, sizeof a));
  else
    snprintf(out, n, "%s (x%g = %s)", rpt__fmt_ms(ms, a, sizeof a), scale,
             rpt__fmt_ms(ms * scale, b, sizeof b));
  return out;
}

/* --------------------------------------------------- retry_after_honoured */

/* The verdict from n gaps after a Retry-After (asked: responses that asked,
   when n = 0) and the worst of them: its request key, margin (gap minus the
   wait asked, scaled), gap, the wait asked, the attempt that came after and
   the status that asked. */
static int retry_after_say(rpt__ctx *c, const char *name, long n, long asked, const char *wkey,
                           double margin, double gap_ms, double asked_ms, int attempt,
                           int status) {
  char key[64], ms[32], want_s[64], tol[32];
  if (n == 0) {
    if (asked)
      return rpt__verdict_add(c, name, RPT_NA,
                              "%ld response%s asked for Retry-After, but no retry followed one",
                              asked, asked == 1 ? "" : "s");
    return rpt__verdict_add(c, name, RPT_NA, "no response asked for Retry-After");
  }
  rpt__short_key(wkey, key, sizeof key);
  rpt__fmt_ms(gap_ms, ms, sizeof ms);
  scaled(asked_ms, c->scale, want_s, sizeof want_s);
  rpt__fmt_ms(c->tol, tol, sizeof tol);
  if (margin + c->tol < 0)
    return rpt__verdict_add(c, name, RPT_FAIL,
                            "attempt %d of request %s arrived %s after a %d asking for %s "
                            "(tolerance %s)",
                            attempt, key, ms, status, want_s, tol);
  return rpt__verdict_add(c, name, RPT_PASS,
                          "%ld retr%s after Retry-After; closest: attempt %d arrived %s after a "
                          "%d asking for %s",
                          n, n == 1 ? "y" : "ies", attempt, ms, status, want_s);
}

/* retry_after_honoured from a folded trace: the worst gap was folded at the
   trace's time scale (rpt_judge reads it whole at any other). */
static int retry_after_folded(rpt__ctx *c, const char *name) {
  const rpt__sum *s = c->tr->sum;
  return retry_after_say(c, name, s->ra_n, s->asked, s->ra_key, s->ra_margin, s->ra_ms,
                         s->ra_asked_ms, s->ra_attempt, s->ra_status);
}

/*
 * retry_after_honoured = true: every retry after a response that asked for
 * Retry-After (end.retry_after_ms, header units) arrives no sooner than
 * retry_after_ms x time scale, minus the tolerance.
 */
int rpt__v_retry_after(rpt__ctx *c, const char *name, const cJSON *val) {
  int want, rc;
  if ((rc = rpt__want_bool(c, name, val, &want))) return rc;
  if (!want || c->tr == NULL) return 0;
  if (rpt__trace_folded(c->tr)) return retry_after_folded(c, name);
  gaps gs;
  if ((rc = collect_gaps(c->tr, &gs))) return rc;
  int n = 0;
  const gap *worst = NULL;
  double worst_margin = 0;
  for (int i = 0; i < gs.n; i++) {
    const gap *g = &gs.g[i];
    double ra = g->prev->retry_after_ms;
    if (ra < 0) continue;
    n++;
    double margin = g->ms - ra * c->scale;
    if (worst == NULL || margin < worst_margin) {
      worst = g;
      worst_margin = margin;
    }
  }
  if (worst == NULL) {
    int asked = 0;
    for (int i = 0; i < c->tr->narr; i++)
      if (c->tr->arr[i].retry_after_ms >= 0) asked++;
    free(gs.g);
    return retry_after_say(c, name, 0, asked, NULL, 0, 0, 0, 0, 0);
  }
  rc = retry_after_say(c, name, n, 0, worst->group->key, worst_margin, worst->ms,
                       worst->prev->retry_after_ms, worst->next->attempt, worst->prev->status);
  free(gs.g);
  return rc;
}

/* ---------------------------------------------------------------- backoff */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static int cmp_seq(const void *x, const void *y) {
  const gap *a = x, *b = y;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Jitter: the widest spread of the gaps at one retry index across requests. */
static int judge_jitter(rpt__ctx *c, const gaps *gs, char *out, size_t outlen) {
  int maxidx = 0;
  for (int i = 0; i < gs->n; i++)
    if (gs->g[i].index > maxidx) maxidx = gs->g[i].index;
  double *v = malloc(((size_t)(unsigned)gs->n + 1) * sizeof *v);
  if (v == NULL) return RPT_ENOMEM;
  int best_n = 0, found = 0, judged = 0;
  double best_spread = 0, best_med = 0;
  int best_idx = 0;
  for (int idx = 1; idx <= maxidx && !found; idx++) {
    int n = 0;
    for (int i = 0; i < gs->n; i++)
      if (gs->g[i].index == idx) v[n++] = gs->g[i].ms;
    if (n < 2) continue;
    judged = 1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    /* Interquartile range when there are enough samples, so that a few
       late wake-ups on a loaded machine do not pass for jitter. */
    double spread = n >= 4 ? v[(3 * n) / 4] - v[n / 4] : v[n - 1] - v[0];
    double med = v[n / 2];
    double need = fmax(0.05 * med, c->slack / 2);
    if (spread > best_spread || best_n == 0) {
      best_spread = spread;
      best_med = med;
      best_n = n;
      best_idx = idx;
    }
    if (spread >= need && spread > 0) found = 1;
  }
  free(v);
  char a[32], b[32];
  if (!judged) {
    snprintf(out, outlen, "jitter needs 2 or more requests that retried; found %s",
             gs->n ? "1" : "none");
    return RPT_FAIL;
  }
  snprintf(out, outlen, "%s at retry %d across %d requests: spread %s around %s",
           found ? "jitter" : "no jitter", best_idx, best_n,
           rpt__fmt_ms(best_spread, a, sizeof a), rpt__fmt_ms(best_med, b, sizeof b));
  return found ? RPT_PASS : RPT_FAIL;
}

/*
 * backoff = {min_gap = s, max_gap = s, growth = bool, jitter = bool}:
 * min_gap: every gap >= min_gap x scale - tolerance;
 * max_gap: every gap not forced by Retry-After <= max_gap x scale + tolerance;
 * growth: in each request, gaps not forced by Retry-After never fall below
 *   half the previous one, and the last exceeds the first by 15 % (and the
 *   tolerance): a fixed wait fails, a capped schedule with jitter passes;
 * jitter: at some retry index, the gaps of different requests spread by at
 *   least 5 % of their median and half the slack (interquartile range from
 *   4 samples on).
 */
int rpt__v_backoff(rpt__ctx *c, const char *name, const cJSON *val) {
  if (!cJSON_IsObject(val))
    return rpt__bad_value(c, name, "expected {min_gap=, max_gap=, growth=, jitter=}");
  static const char *const keys[] = {"min_gap", "max_gap", "growth", "jitter", NULL};
  int rc = rpt__check_keys(c, name, val, keys);
  if (rc) return rc;
  double min_gap = 0, max_gap = 0;
  int has_min, has_max, growth = 0, jitter = 0;
  if ((rc = rpt__get_nonneg(c, name, val, "min_gap", &min_gap, &has_min))) return rc;
  if ((rc = rpt__get_nonneg(c, name, val, "max_gap", &max_gap, &has_max))) return rc;
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(val, "growth")) &&
      (rc = rpt__want_bool(c, name, v, &growth)))
    return rc;
  if ((v = cJSON_GetObjectItemCaseSensitive(val, "jitter")) &&
      (rc = rpt__want_bool(c, name, v, &jitter)))
    return rc;
  if (has_min && has_max && min_gap > max_gap)
    return rpt__bad_value(c, name, "min_gap is over max_gap");
  if (!has_min && !has_max && !growth && !jitter)
    return rpt__bad_value(c, name, "nothing to check: give min_gap, max_gap, growth or jitter");
  if (c->tr == NULL) return 0;

  gaps gs;
  if ((rc = collect_gaps(c->tr, &gs))) return rc;
  char key[64], a[32], b[32], w[64], jit[160] = "";
  if (gs.n == 0) {
    free(gs.g);
    return rpt__verdict_add(c, name, RPT_NA, "no retry in the trace: no gap to judge");
  }
  double lo = min_gap * 1000.0 * c->scale, hi = max_gap * 1000.0 * c->scale;
  double shortest = gs.g[0].ms;
  for (int i = 0; i < gs.n; i++) {
    const gap *g = &gs.g[i];
    if (g->ms < shortest) shortest = g->ms;
    if (has_min && g->ms + c->tol < lo) {
      rc = rpt__verdict_add(c, name, RPT_FAIL,
                            "attempt %d of request %s came %s after attempt %d ended; "
                            "min gap %s",
                            g->next->attempt, rpt__short_key(g->group->key, key, sizeof key),
                            rpt__fmt_ms(g->ms, a, sizeof a), g->prev->attempt,
                            scaled(min_gap * 1000, c->scale, w, sizeof w));
      goto out;
    }
    if (has_max && g->prev->retry_after_ms < 0 && g->ms > hi + c->tol) {
      rc = rpt__verdict_add(c, name, RPT_FAIL,
                            "attempt %d of request %s came %s after attempt %d ended; "
                            "max gap %s",
                            g->next->attempt, rpt__short_key(g->group->key, key, sizeof key),
                            rpt__fmt_ms(g->ms, a, sizeof a), g->prev->attempt,
                            scaled(max_gap * 1000, c->scale, w, sizeof w));
      goto out;
    }
  }
  if (growth) {
    /* Gaps of one sequence together, in their order. */
    qsort(gs.g, (size_t)gs.n, sizeof *gs.g, cmp_seq);
    int longest = 0;
    for (int i = 0; i < gs.n;) {
      /* One sequence: the backoff gaps (no Retry-After) of one request. */
      int s = gs.g[i].seq, count = 0;
      const gap *first = NULL, *prev = NULL;
      for (; i < gs.n && gs.g[i].seq == s; i++) {
        const gap *g = &gs.g[i];
        if (g->prev->retry_after_ms >= 0) continue;
        count++;
        if (prev && g->ms < 0.5 * prev->ms - c->tol) {
          rc = rpt__verdict_add(c, name, RPT_FAIL,
                                "no growth: request %s waited %s before attempt %d after "
                                "%s before attempt %d",
                                rpt__short_key(g->group->key, key, sizeof key),
                                rpt__fmt_ms(g->ms, a, sizeof a), g->next->attempt,
                                rpt__fmt_ms(prev->ms, b, sizeof b), prev->next->attempt);
          goto out;
        }
        if (!first) first = g;
        prev = g;
      }
      if (count > longest) longest = count;
      if (count >= 2 && prev->ms - first->ms < fmax(0.15 * first->ms, c->tol)) {
        rc = rpt__verdict_add(c, name, RPT_FAIL,
                              "no growth: request %s waited %s first and %s last (%d waits)",
                              rpt__short_key(first->group->key, key, sizeof key),
                              rpt__fmt_ms(first->ms, a, sizeof a),
                              rpt__fmt_ms(prev->ms, b, sizeof b), count);
        goto out;
      }
    }
    if (longest < 2) {
      rc = rpt__verdict_add(c, name, RPT_FAIL,
                            "growth needs a request with 2 or more backoff waits; most: %d",
                            longest);
      goto out;
    }
  }
  if (jitter) {
    int st = judge_jitter(c, &gs, jit, sizeof jit);
    if (st < 0) {
      rc = st;
      goto out;
    }
    if (st == RPT_FAIL) {
      rc = rpt__verdict_add(c, name, RPT_FAIL, "%s", jit);
      goto out;
    }
  }
  rc = rpt__verdict_add(c, name, RPT_PASS, "%d gap%s, shortest %s%s%s%s%s", gs.n,
                        gs.n == 1 ? "" : "s", rpt__fmt_ms(shortest, a, sizeof a),
                        has_min ? " (min " : "",
                        has_min ? scaled(min_gap * 1000, c->scale, w, sizeof w) : "",
                        has_min ? ")" : "", growth ? ", growing" : "");
  if (rc == 0 && jitter) {
    /* Append the jitter detail to the evidence just recorded. */
    rpt_verdict *vd = &c->j->v[c->j->n - 1];
    char ev[RPT__EVIDENCE_MAX];
    snprintf(ev, sizeof ev, "%s, %s", vd->evidence, jit);
    c->j->n--;
    rc = rpt__judgement_add(c->j, name, RPT_PASS, ev);
  }
out:
  free(gs.g);
  return rc;
}

/* -------------------------------------------------------- start-up */

/* An external command's start-up; see reports_int.h. */
int rpt__client_startup(const rpt_trace *tr, const rpt__client_ev *ce, double *startup_ms,
                        double *counted_ms) {
  *startup_ms = *counted_ms = -1;
  if (tr == NULL || ce == NULL || !ce->external || ce->started_t < 0) return 0;
  double first = -1;
  for (int i = 0; i < tr->narr; i++)
    if (first < 0 || tr->arr[i].t_arrive < first) first = tr->arr[i].t_arrive;
  if (first < 0) return 1;
  *startup_ms = first > ce->started_t ? first - ce->started_t : 0;
  if (ce->total_ms >= 0) {
    *counted_ms = ce->total_ms - *startup_ms;
    if (*counted_ms < 0) *counted_ms = 0;
  }
  return 1;
}

/* "started its first request after 8.9 s"; see reports_int.h. */
const char *rpt__startup_note(const rpt_trace *tr, const rpt__client_ev *ce, char *out,
                              size_t n) {
  double up, counted;
  char a[32];
  out[0] = '\0';
  if (!rpt__client_startup(tr, ce, &up, &counted)) return out;
  if (up < 0)
    snprintf(out, n, "sent no request in %s",
             rpt__fmt_ms(ce->total_ms >= 0 ? ce->total_ms : tr->t_last, a, sizeof a));
  else
    snprintf(out, n, "started its first request after %s", rpt__fmt_ms(up, a, sizeof a));
  return out;
}

/* -------------------------------------------------------- within_deadline */

/*
 * within_deadline = true (the client table's deadline) or a number of
 * seconds: for every logical request, first arrival to last end (an attempt
 * still open counts to the end of the trace), and every client account's
 * total_ms, within deadline x scale plus 5 % and the tolerance. An external
 * command's time counts from its first request's arrival to its exit: its
 * start-up (process start to first request) is shown, never counted.
 */
int rpt__v_within_deadline(rpt__ctx *c, const char *name, const cJSON *val) {
  double secs = -1;
  if (cJSON_IsNumber(val)) {
    if (!(val->valuedouble > 0) || !isfinite(val->valuedouble))
      return rpt__bad_value(c, name, "expected true or a number of seconds > 0");
    secs = val->valuedouble;
  } else {
    int want, rc;
    if ((rc = rpt__want_bool(c, name, val, &want))) return rc;
    if (!want) return 0;
    const cJSON *d = c->client ? cJSON_GetObjectItemCaseSensitive(c->client, "deadline") : NULL;
    if (d != NULL && (!cJSON_IsNumber(d) || !(d->valuedouble > 0)))
      return rpt__bad_value(c, name, "client.deadline must be a number of seconds > 0");
    if (d != NULL) secs = d->valuedouble;
    else if (c->tr != NULL || c->client != NULL)
      return rpt__bad_value(c, name, "true needs a deadline in the client table");
  }
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  double dl = secs * 1000.0 * c->scale;
  double allow = dl * 1.05 + c->tol;
  char key[64], a[32], w[64], t[32];
  scaled(secs * 1000, c->scale, w, sizeof w);
  rpt__fmt_ms(allow - dl, t, sizeof t);
  double longest = -1, longest_call = -1;
  for (int g = 0; g < tr->ngroups; g++) {
    const rpt__group *gr = &tr->groups[g];
    double first = 0, last = 0;
    int open = 0;
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *x = &tr->arr[gr->idx[k]];
      double end = x->has_end ? x->t_end : tr->t_last;
      if (!x->has_end) open = 1;
      if (k == 0 || x->t_arrive < first) first = x->t_arrive;
      if (end > last) last = end;
    }
    double span = last - first;
    if (span > allow)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "request %s took %s from its first arrival to %s; deadline %s "
                              "(+%s tolerance)",
                              rpt__short_key(gr->key, key, sizeof key),
                              rpt__fmt_ms(span, a, sizeof a),
                              open ? "the end of the trace (still open)" : "its last end", w, t);
    if (span > longest) longest = span;
  }
  char up[96] = ""; /* an external command's start-up, shown beside the result */
  for (int i = 0; i < tr->ncli; i++) {
    const rpt__client_ev *ce = &tr->cli[i];
    double took = ce->total_ms, startup, counted;
    if (rpt__client_startup(tr, ce, &startup, &counted)) {
      char note[80];
      snprintf(up, sizeof up, " (%s, not counted)", rpt__startup_note(tr, ce, note, sizeof note));
      took = counted; /* no request: nothing of the call to time */
    }
    if (took < 0) continue;
    if (took > allow)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "call %d took %s by the client's account%s; deadline %s (+%s "
                              "tolerance)%s",
                              ce->call, rpt__fmt_ms(took, a, sizeof a),
                              up[0] ? ", from its first request to its exit" : "", w, t, up);
    if (took > longest_call) longest_call = took;
  }
  if (tr->ngroups == 0 && longest_call < 0)
    return rpt__verdict_add(c, name, RPT_NA, "no request and no call to time; deadline %s%s", w,
                            up);
  char lr[64] = "no request", lc[64] = "";
  if (longest >= 0) snprintf(lr, sizeof lr, "longest request %s", rpt__fmt_ms(longest, a, sizeof a));
  if (longest_call >= 0)
    snprintf(lc, sizeof lc, ", longest call %s", rpt__fmt_ms(longest_call, a, sizeof a));
  return rpt__verdict_add(c, name, RPT_PASS, "%s%s; deadline %s%s", lr, lc, w, up);
}
