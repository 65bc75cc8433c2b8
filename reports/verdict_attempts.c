/*
 * verdict_attempts.c - verdicts that count arrivals: `attempts` (per logical
 * request), `max_requests` (all arrivals: amplification), `no_retry_after`
 * (no further attempt after a given status or kind) and `herd` (peak
 * arrivals in a sliding window).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

static int is_get(const rpt__arrival *a) { return a->method && strcmp(a->method, "GET") == 0; }

/* An integer >= 0 from a JSON number, or -1. */
static long whole(const cJSON *v) {
  if (!cJSON_IsNumber(v)) return -1;
  double d = v->valuedouble;
  if (!(d >= 0) || d > 1e9 || floor(d) != d) return -1;
  return (long)d;
}

/* ---------------------------------------------------------- attempts */

/*
 * attempts = N or {min=, max=}: every logical request (arrivals sharing a
 * key, effect lookups by GET not counted) made that many attempts.
 */
int rpt__v_attempts(rpt__ctx *c, const char *name, const cJSON *val) {
  long lo, hi;
  if (cJSON_IsNumber(val)) {
    lo = hi = whole(val);
    if (lo < 0) return rpt__bad_value(c, name, "expected a whole number >= 0 or {min=, max=}");
  } else if (cJSON_IsObject(val)) {
    static const char *const keys[] = {"min", "max", NULL};
    int rc = rpt__check_keys(c, name, val, keys);
    if (rc) return rc;
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(val, "min");
    const cJSON *mx = cJSON_GetObjectItemCaseSensitive(val, "max");
    if (!mn && !mx) return rpt__bad_value(c, name, "give min, max or both");
    lo = mn ? whole(mn) : 0;
    hi = mx ? whole(mx) : 1000000000L;
    if (lo < 0 || hi < 0) return rpt__bad_value(c, name, "min and max must be whole numbers >= 0");
    if (lo > hi) return rpt__bad_value(c, name, "min %ld is over max %ld", lo, hi);
  } else {
    return rpt__bad_value(c, name, "expected a whole number >= 0 or {min=, max=}");
  }
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;

  char want[64];
  if (lo == hi)
    snprintf(want, sizeof want, "%ld", lo);
  else if (hi >= 1000000000L)
    snprintf(want, sizeof want, "at least %ld", lo);
  else
    snprintf(want, sizeof want, "%ld..%ld", lo, hi);

  int nreq = 0, nbad = 0, mn = 0, mx = 0, bad_n = 0;
  const char *bad_key = NULL;
  if (rpt__trace_folded(tr)) {
    /* Requests by number of attempts; the first bad one by first arrival. */
    const rpt__sum *s = tr->sum;
    long bad_seq = -1;
    for (int n = 1; n <= RPT__GROUP_MAX; n++) {
      if (s->hist_n[n] == 0) continue;
      if (nreq == 0) mn = n;
      mx = n;
      nreq += (int)s->hist_n[n];
      if (n < lo || n > hi) {
        nbad += (int)s->hist_n[n];
        if (bad_seq < 0 || s->hist_seq[n] < bad_seq) {
          bad_seq = s->hist_seq[n];
          bad_key = s->hist_key[n];
          bad_n = n;
        }
      }
    }
  }
  for (int g = 0; !rpt__trace_folded(tr) && g < tr->ngroups; g++) {
    int n = tr->groups[g].n_post;
    if (n == 0) continue;
    if (nreq == 0 || n < mn) mn = n;
    if (nreq == 0 || n > mx) mx = n;
    nreq++;
    if (n < lo || n > hi) {
      if (bad_key == NULL) {
        bad_key = tr->groups[g].key;
        bad_n = n;
      }
      nbad++;
    }
  }
  if (nreq == 0) {
    if (lo == 0)
      return rpt__verdict_add(c, name, RPT_PASS, "no request arrived, expected %s", want);
    return rpt__verdict_add(c, name, RPT_FAIL, "no request arrived, expected %s attempt%s",
                            want, hi == 1 ? "" : "s");
  }
  if (nbad > 0) {
    char key[64], more[64] = "";
    if (nbad > 1) snprintf(more, sizeof more, " (and %d more of %d requests)", nbad - 1, nreq);
    return rpt__verdict_add(c, name, RPT_FAIL, "%d attempt%s for request %s, expected %s%s",
                            bad_n, bad_n == 1 ? "" : "s",
                            rpt__short_key(bad_key, key, sizeof key), want, more);
  }
  if (nreq == 1)
    return rpt__verdict_add(c, name, RPT_PASS, "1 request, %d attempt%s (expected %s)", mx,
                            mx == 1 ? "" : "s", want);
  if (mn == mx)
    return rpt__verdict_add(c, name, RPT_PASS, "%d requests, %d attempt%s each (expected %s)",
                            nreq, mx, mx == 1 ? "" : "s", want);
  return rpt__verdict_add(c, name, RPT_PASS, "%d requests, %d to %d attempts (expected %s)",
                          nreq, mn, mx, want);
}

/* ------------------------------------------------------ max_requests */

/* max_requests = N: all arrivals, across every request and layer, <= N. */
int rpt__v_max_requests(rpt__ctx *c, const char *name, const cJSON *val) {
  long max = whole(val);
  if (max < 0) return rpt__bad_value(c, name, "expected a whole number >= 0");
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  int nreq = rpt__trace_requests(tr), lookups = 0, narr = (int)rpt__trace_narr(tr);
  if (rpt__trace_folded(tr)) lookups = (int)tr->sum->nlookups;
  for (int i = 0; !rpt__trace_folded(tr) && i < tr->narr; i++)
    if (is_get(&tr->arr[i])) lookups++;
  char extra[64] = "";
  if (lookups) snprintf(extra, sizeof extra, ", %d of them lookups", lookups);
  if (narr == 0 && max > 0)
    return rpt__verdict_add(c, name, RPT_NA, "no request arrived: no load to bound (max %ld)", max);
  return rpt__verdict_add(c, name, narr <= max ? RPT_PASS : RPT_FAIL,
                          "%d arrival%s for %d logical request%s%s, max %ld", narr,
                          narr == 1 ? "" : "s", nreq, nreq == 1 ? "" : "s", extra, max);
}

/* ---------------------------------------------------- no_retry_after */

#define MAX_STATUSES RPT__MAX_STOPS
typedef rpt__stop_set stop_set;

static int add_stop(rpt__ctx *c, const char *name, const cJSON *v, stop_set *s) {
  if (cJSON_IsNumber(v)) {
    long st = whole(v);
    if (st < 100 || st > 599) return rpt__bad_value(c, name, "a status must be 100..599");
    if (s->nstatus == MAX_STATUSES) return rpt__bad_value(c, name, "too many statuses");
    s->status[s->nstatus++] = (int)st;
    return 0;
  }
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "permanent") == 0)
      s->permanent = 1;
    else if (strcmp(v->valuestring, "quota") == 0 ||
             strcmp(v->valuestring, "insufficient_quota") == 0)
      s->quota = 1;
    else
      return rpt__bad_value(c, name, "unknown kind '%.40s' (known: permanent, quota)",
                            v->valuestring);
    return 0;
  }
  return rpt__bad_value(c, name, "expected statuses (numbers) and kinds (\"permanent\", \"quota\")");
}

/* 1 when a ended so that no retry may follow it; see reports_int.h. */
int rpt__stops(const stop_set *s, const rpt__arrival *a, int *uncoded_429) {
  if (!a->has_end || a->status == 0) return 0;
  /* A ledger lookup's 404 is its answer ("no such effect"), not a
     permanent error of the request: asking again is no retry after it. */
  if (is_get(a) && a->status == 404) return 0;
  for (int i = 0; i < s->nstatus; i++)
    if (s->status[i] == a->status) return 1;
  int quota = (a->status == 429 && a->code && strcmp(a->code, "insufficient_quota") == 0) ||
              a->status == 402;
  if (s->quota && quota) return 1;
  if (s->permanent && rpt__arrival_permanent(a)) return 1;
  if ((s->permanent || s->quota) && a->status == 429 && a->code == NULL) *uncoded_429 = 1;
  return 0;
}

/* The verdict when no retry followed: seen such responses. */
static int no_retry_after_say(rpt__ctx *c, const char *name, long seen, int uncoded) {
  const char *note = uncoded ? " (a 429 without a recorded error code counted as a rate limit)" : "";
  if (seen == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no such response in the trace%s", note);
  return rpt__verdict_add(c, name, RPT_PASS, "no retry after %ld such response%s%s", seen,
                          seen == 1 ? "" : "s", note);
}

/* Reads the value of no_retry_after into *s. */
static int parse_stops(rpt__ctx *c, const char *name, const cJSON *val, stop_set *s) {
  int rc = 0;
  memset(s, 0, sizeof *s);
  if (cJSON_IsArray(val)) {
    const cJSON *it;
    if (cJSON_GetArraySize(val) == 0) return rpt__bad_value(c, name, "empty list");
    cJSON_ArrayForEach(it, val) if ((rc = add_stop(c, name, it, s))) return rc;
    return 0;
  }
  return add_stop(c, name, val, s);
}

/* Reads an expect.no_retry_after value; see reports_int.h. */
int rpt__stop_set_read(const cJSON *val, rpt__stop_set *s) {
  char err[RPT_ERRLEN];
  rpt__ctx c = {.err = err};
  return parse_stops(&c, "no_retry_after", val, s);
}

/* no_retry_after from a folded trace: the first retry after such a
   response, by the order of first arrival (trace_fold.c). */
static int no_retry_after_folded(rpt__ctx *c, const char *name) {
  const rpt__sum *s = c->tr->sum;
  if (s->nra_found) {
    char key[64], gap[32];
    return rpt__verdict_add(
        c, name, RPT_FAIL, "attempt %d of request %s arrived %s after a %d%s%s at %s",
        s->nra_attempt, rpt__short_key(s->nra_key, key, sizeof key),
        rpt__fmt_ms(s->nra_gap, gap, sizeof gap), s->nra_status, s->nra_code ? " " : "",
        s->nra_code ? s->nra_code : "", s->nra_provider);
  }
  return no_retry_after_say(c, name, s->nra_seen, s->nra_uncoded);
}

/*
 * no_retry_after = {401, "permanent", ...}: after an attempt that ended with
 * one of these statuses or kinds, no later attempt of the same logical
 * request (same method) may arrive at the same provider. A fallback to
 * another provider is not a retry.
 */
int rpt__v_no_retry_after(rpt__ctx *c, const char *name, const cJSON *val) {
  stop_set s;
  int rc = parse_stops(c, name, val, &s);
  if (rc) return rc;
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  if (rpt__trace_folded(tr)) return no_retry_after_folded(c, name);
  int seen = 0, uncoded = 0;
  for (int g = 0; g < tr->ngroups; g++) {
    const rpt__group *gr = &tr->groups[g];
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *a = &tr->arr[gr->idx[k]];
      if (!rpt__stops(&s, a, &uncoded)) continue;
      seen++;
      for (int m = k + 1; m < gr->n; m++) {
        const rpt__arrival *b = &tr->arr[gr->idx[m]];
        if (strcmp(b->provider, a->provider) != 0 || strcmp(b->method, a->method) != 0)
          continue;
        if (b->t_arrive < a->t_end) continue; /* concurrent, not a retry after it */
        char key[64], gap[32];
        return rpt__verdict_add(
            c, name, RPT_FAIL, "attempt %d of request %s arrived %s after a %d%s%s at %s",
            b->attempt, rpt__short_key(gr->key, key, sizeof key),
            rpt__fmt_ms(b->t_arrive - a->t_end, gap, sizeof gap), a->status,
            a->code ? " " : "", a->code ? a->code : "", a->provider);
      }
    }
  }
  return no_retry_after_say(c, name, seen, uncoded);
}

/* -------------------------------------------------------------- herd */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

/* The herd verdict from the peak and where its window starts. */
static int herd_say(rpt__ctx *c, const char *name, int peak, double at, double w, double window,
                    long max) {
  char wbuf[32], tbuf[32];
  return rpt__verdict_add(c, name, peak <= max ? RPT_PASS : RPT_FAIL,
                          "peak %d arrival%s within %s (%g s x %g) from t=%s; max %ld", peak,
                          peak == 1 ? "" : "s", rpt__fmt_ms(w, wbuf, sizeof wbuf), window,
                          c->scale, rpt__fmt_ms(at, tbuf, sizeof tbuf), max);
}

/*
 * herd = {window = seconds, max = N}: the most arrivals in any window of
 * that length (scenario seconds x time scale) is at most N.
 */
int rpt__v_herd(rpt__ctx *c, const char *name, const cJSON *val) {
  if (!cJSON_IsObject(val)) return rpt__bad_value(c, name, "expected {window=seconds, max=N}");
  static const char *const keys[] = {"window", "max", NULL};
  int rc = rpt__check_keys(c, name, val, keys);
  if (rc) return rc;
  double window;
  int present;
  if ((rc = rpt__get_nonneg(c, name, val, "window", &window, &present))) return rc;
  if (!present || window <= 0) return rpt__bad_value(c, name, "window (seconds > 0) is required");
  long max = whole(cJSON_GetObjectItemCaseSensitive(val, "max"));
  if (max < 0) return rpt__bad_value(c, name, "max (a whole number >= 0) is required");
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  double w = window * 1000.0 * c->scale;
  char wbuf[32];
  if (rpt__trace_narr(tr) == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no arrivals; max %ld per %s", max,
                            rpt__fmt_ms(w, wbuf, sizeof wbuf));
  if (rpt__trace_folded(tr)) /* a sliding window over the arrivals as they came */
    return herd_say(c, name, (int)tr->sum->herd_peak, tr->sum->herd_at, w, window, max);
  double *t = malloc((size_t)tr->narr * sizeof *t);
  if (t == NULL) return RPT_ENOMEM;
  for (int i = 0; i < tr->narr; i++) t[i] = tr->arr[i].t_arrive;
  qsort(t, (size_t)tr->narr, sizeof *t, cmp_double);
  int peak = 0;
  double at = t[0];
  for (int i = 0, j = 0; i < tr->narr; i++) {
    while (t[i] - t[j] >= w) j++;
    if (i - j + 1 > peak) {
      peak = i - j + 1;
      at = t[j];
    }
  }
  free(t);
  return herd_say(c, name, peak, at, w, window, max);
}
