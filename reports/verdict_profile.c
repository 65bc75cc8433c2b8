/*
 * verdict_profile.c - policy conformance: does a client do what its profile
 * (a file under profiles/, as JSON) says it does? Per logical request: no more
 * attempts than promised; a retry only after a failure the profile retries;
 * no giving up after such a failure with attempts left; each gap at least
 * the profile's backoff (or its Retry-After, when it honours one) and not
 * far over it.
 */
#include "reports/reports_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct profile {
  const char *name;
  int max_attempts;
  double base_ms, factor, cap_ms, fraction;
  const char *jitter;      /* none, subtract, full, equal */
  const cJSON *retries;    /* the list */
  int x_should_retry;
  int ra_honoured;
  const cJSON *ra_forms;   /* "retry-after-ms", "seconds", "date"; NULL = all */
  double ra_cap_ms;        /* < 0: no cap */
  int streams_retried;
} profile;

static double num(const cJSON *o, const char *k, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static int read_profile(rpt__ctx *c, const char *name, const cJSON *val, profile *p) {
  if (!cJSON_IsObject(val)) return rpt__bad_value(c, name, "expected a profile table");
  memset(p, 0, sizeof *p);
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(val, "name");
  p->name = cJSON_IsString(v) ? v->valuestring : "the profile";
  p->max_attempts = (int)num(val, "max_attempts", 0);
  if (p->max_attempts < 1 || p->max_attempts > 1000)
    return rpt__bad_value(c, name, "max_attempts must be a whole number from 1 to 1000");
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(val, "backoff");
  p->base_ms = num(b, "base", 0) * 1000.0;
  p->factor = num(b, "factor", 2);
  p->cap_ms = num(b, "cap", 0) * 1000.0;
  p->fraction = num(b, "fraction", 0);
  v = cJSON_GetObjectItemCaseSensitive(b, "jitter");
  p->jitter = cJSON_IsString(v) ? v->valuestring : "none";
  p->retries = cJSON_GetObjectItemCaseSensitive(val, "retries");
  if (!cJSON_IsArray(p->retries)) return rpt__bad_value(c, name, "retries must be a list");
  p->x_should_retry = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(val, "x_should_retry"));
  const cJSON *ra = cJSON_GetObjectItemCaseSensitive(val, "retry_after");
  p->ra_honoured = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ra, "honoured"));
  p->ra_forms = cJSON_GetObjectItemCaseSensitive(ra, "forms");
  if (!cJSON_IsArray(p->ra_forms)) p->ra_forms = NULL;
  v = cJSON_GetObjectItemCaseSensitive(ra, "cap");
  p->ra_cap_ms = cJSON_IsNumber(v) ? v->valuedouble * 1000.0 : -1;
  p->streams_retried = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(val, "streams_retried"));
  return 0;
}

/* What kind of failure an attempt was, in the profile's words; NULL = ok. */
static const char *failure(const rpt__arrival *a, char *buf, size_t n) {
  const char *how = a->how ? a->how : "open";
  if (!a->has_end || strcmp(how, "client_abort") == 0 || strcmp(how, "shutdown") == 0)
    return "timeout";
  if (strcmp(how, "dropped") == 0 || strcmp(how, "reset") == 0)
    return a->status >= 200 && a->status < 300 && a->chunks > 0 ? "stream_error" : "connection";
  if (strcmp(how, "early_close") == 0) return "body";
  if (a->status >= 200 && a->status < 300) {
    if (a->step && (strcmp(a->step, "truncate") == 0 || strcmp(a->step, "garbage") == 0))
      return "shape";
    if (a->no_end_marker) return "no_end_marker";
    return NULL;
  }
  snprintf(buf, n, "%d", a->status);
  return buf;
}

/* 1 if the profile retries this failure. */
static int retries(const profile *p, const rpt__arrival *a, const char *f) {
  if (p->x_should_retry && a->should_retry) return strcmp(a->should_retry, "true") == 0;
  if (strcmp(f, "stream_error") == 0 && !p->streams_retried) return 0;
  int status = a->status;
  const cJSON *e;
  cJSON_ArrayForEach(e, p->retries) {
    if (cJSON_IsNumber(e) && (int)e->valuedouble == status && f[0] >= '0' && f[0] <= '9')
      return 1;
    if (!cJSON_IsString(e)) continue;
    const char *s = e->valuestring;
    int lo, hi;
    if (f[0] >= '0' && f[0] <= '9') {
      if (sscanf(s, ">=%d", &lo) == 1 && status >= lo) return 1;
      if (sscanf(s, "%d-%d", &lo, &hi) == 2 && status >= lo && status <= hi) return 1;
    } else if (strcmp(s, f) == 0) {
      return 1;
    }
  }
  return 0;
}

static int has_form(const profile *p, const char *form) {
  if (p->ra_forms == NULL) return 1;
  const cJSON *e;
  cJSON_ArrayForEach(e, p->ra_forms)
    if (cJSON_IsString(e) && strcmp(e->valuestring, form) == 0) return 1;
  return 0;
}

/* 1 when the response asked for a wait in a form the client reads. */
static int reads_retry_after(const profile *p, const rpt__arrival *a) {
  if (!p->ra_honoured || a->retry_after_ms < 0) return 0;
  if (p->ra_cap_ms >= 0 && a->retry_after_ms > p->ra_cap_ms) return 0;
  if (a->ra_ms_header && has_form(p, "retry-after-ms")) return 1;
  if (a->ra_header) {
    char *end;
    strtod(a->ra_header, &end);
    return has_form(p, *end == '\0' && end != a->ra_header ? "seconds" : "date");
  }
  return a->ra_ms_header == NULL; /* the trace named no header: trust it */
}

/* The least and most gap the profile allows before retry number n (1-based). */
static void backoff_window(const profile *p, int n, double *lo, double *hi) {
  double b = p->base_ms * pow(p->factor, n - 1);
  if (p->cap_ms > 0 && b > p->cap_ms) b = p->cap_ms;
  *hi = b;
  if (strcmp(p->jitter, "full") == 0) *lo = 0;
  else if (strcmp(p->jitter, "equal") == 0) *lo = b / 2;
  else if (strcmp(p->jitter, "subtract") == 0) *lo = b * (1 - p->fraction);
  else *lo = b;
}

/*
 * profile = { ...a client profile as JSON... }: see the file comment. One
 * verdict, failing on the first request that breaks a promise.
 */
int rpt__v_profile(rpt__ctx *c, const char *name, const cJSON *val) {
  profile p;
  int rc = read_profile(c, name, val, &p);
  if (rc || c->tr == NULL) return rc;
  const rpt_trace *tr = c->tr;
  char fb[16], key[64];
  int checked = 0;
  for (int g = 0; g < tr->ngroups; g++) {
    const rpt__group *gr = &tr->groups[g];
    const rpt__arrival *prev = NULL;
    int n = 0;
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *a = &tr->arr[gr->idx[k]];
      if (a->method && strcmp(a->method, "GET") == 0) continue;
      n++;
      if (n > p.max_attempts)
        return rpt__verdict_add(c, name, RPT_FAIL, "request %s: attempt %d, but %s makes at most %d",
                                rpt__short_key(gr->key, key, sizeof key), n, p.name, p.max_attempts);
      if (prev != NULL) {
        const char *f = failure(prev, fb, sizeof fb);
        if (f == NULL || !retries(&p, prev, f))
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: retried after attempt %d ended %s, which %s does not retry",
                                  rpt__short_key(gr->key, key, sizeof key), n - 1, f ? f : "ok",
                                  p.name);
        double gap = a->t_arrive - (prev->has_end ? prev->t_end : prev->t_arrive);
        double lo, hi;
        backoff_window(&p, n - 1, &lo, &hi);
        int by_ra = reads_retry_after(&p, prev);
        if (by_ra) lo = hi = prev->retry_after_ms;
        lo *= c->scale;
        hi *= c->scale;
        if (gap < lo - c->tol)
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: attempt %d came %.0f ms after attempt %d; %s waits at "
                                  "least %.0f ms (%s)",
                                  rpt__short_key(gr->key, key, sizeof key), n, gap, n - 1, p.name, lo,
                                  by_ra ? "Retry-After" : "backoff");
        /* Late is allowed some slack: a loaded machine wakes up late. */
        if (gap > hi * 1.5 + c->tol + 250.0)
          return rpt__verdict_add(c, name, RPT_FAIL,
                                  "request %s: attempt %d came %.0f ms after attempt %d; %s waits at "
                                  "most %.0f ms (%s)",
                                  rpt__short_key(gr->key, key, sizeof key), n, gap, n - 1, p.name, hi,
                                  by_ra ? "Retry-After" : "backoff");
      }
      prev = a;
    }
    if (prev == NULL) continue;
    checked++;
    const char *f = failure(prev, fb, sizeof fb);
    if (f != NULL && retries(&p, prev, f) && n < p.max_attempts && (tr->has_done && !tr->cut_line))
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "request %s: gave up after attempt %d ended %s, which %s retries "
                              "(up to %d attempts)",
                              rpt__short_key(gr->key, key, sizeof key), n, f, p.name, p.max_attempts);
  }
  return rpt__verdict_add(c, name, RPT_PASS, "%d request%s, each as %s promises", checked,
                          checked == 1 ? "" : "s", p.name);
}
