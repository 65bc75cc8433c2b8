/*
 * learn_play.c - how `fusebox learn` plays its probes: a probe scenario
 * from step text, batches of them, each played as often as --confidence
 * asks and the plays voted on; and the small readings of an outcome (gaps,
 * retried or not) the probes share.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/learn_int.h"

/* A probe scenario: steps (Lua), then the answer. */
static char *lrn_probe_lua(const learner *l, const char *steps) {
  size_t n = strlen(steps) + 1024;
  char *s = malloc(n);
  if (!s) return NULL;
  snprintf(s, n,
           "-- a fusebox learn probe\nreturn scenario {\n  name = \"learn probe\",\n"
           "  provider = {\n%s    %s,\n  },\n"
           "  client = { call = \"%s\"%s%s%s%s, deadline = 120 },\n"
           "  expect = { max_requests = 100 },\n}\n",
           steps, l->stream ? "stream { " CHUNKS " }" : "chat { content = \"The answer is forty-two.\" }",
           l->stream == 2 ? "stream_tools" : l->stream ? "stream" : "chat", l->o->dialect ? ", dialect = \"" : "", l->o->dialect ? l->o->dialect : "",
           l->o->dialect ? "\"" : "", l->client_extra ? l->client_extra : "");
  return s;
}

/* Plays n probes (each its step text) at once into out. */
int lrn_play_n(learner *l, int n, char *const *steps, xpl_outcome *out) {
  char *lua[XPL_BATCH] = {0};
  long idx[XPL_BATCH] = {0};
  for (int i = 0; i < n; i++) {
    lua[i] = lrn_probe_lua(l, steps[i]);
    idx[i] = l->index++;
    if (!lua[i]) {
      for (int j = 0; j < i; j++) free(lua[j]);
      snprintf(l->err, XPL_ERRLEN, "out of memory");
      return -1;
    }
  }
  memset(out, 0, sizeof *out * (size_t)n);
  int rc = l->play(l->arg, 0, n, lua, idx, out, l->err);
  for (int i = 0; i < n; i++) free(lua[i]);
  if (rc != 0) return -1;
  l->p->runs += n;
  for (int i = 0; i < n; i++)
    if (out[i].error) {
      snprintf(l->err, XPL_ERRLEN, "%s", out[i].nv ? out[i].v[0].evidence : "a probe failed");
      return -1;
    }
  return 0;
}

/* Plays any number of probes, XPL_BATCH at a time. */
int lrn_play_all(learner *l, int n, char *const *steps, xpl_outcome *out) {
  for (int at = 0; at < n; at += XPL_BATCH)
    if (lrn_play_n(l, n - at < XPL_BATCH ? n - at : XPL_BATCH, steps + at, out + at) != 0) return -1;
  return 0;
}

/* Appends to the evidence of fact k (what the wire showed). */
void lrn_ev(xpl_policy *p, int k, const char *fmt, ...) {
  size_t len = strlen(p->evidence[k]);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->evidence[k] + len, XPL_EV_LEN - len, fmt, ap);
  va_end(ap);
}

/* Plays each of n probes p->plays times: play j of probe i is out[i * plays + j].
   A malloc'd array, NULL on error (l->err says why). */
xpl_outcome *lrn_play_each(learner *l, int n, char *const *steps) {
  int k = l->p->plays;
  char **list = malloc(sizeof *list * (size_t)(n * k));
  xpl_outcome *out = calloc((size_t)(n * k), sizeof *out);
  if (!list || !out) {
    snprintf(l->err, XPL_ERRLEN, "out of memory");
  } else {
    for (int i = 0; i < n * k; i++) list[i] = steps[i / k];
    if (lrn_play_all(l, n * k, list, out) == 0) {
      free(list);
      return out;
    }
  }
  free(list);
  free(out);
  return NULL;
}

/* Whether the plays of probe i say yes (yes() of each; a tie is yes), their
   count in *count; plays that disagree make the fact flaky. */
int lrn_vote(xpl_policy *p, const xpl_outcome *out, int i, int (*yes)(const xpl_outcome *),
                int *count) {
  int c = 0, k = p->plays;
  for (int j = 0; j < k; j++) c += yes(&out[i * k + j]) != 0;
  if (c != 0 && c != k) p->nflaky++;
  if (count) *count = c;
  return 2 * c >= k;
}

/* " (2 of 3 plays)" when the plays of a fact disagreed, else "". */
const char *lrn_split(const xpl_policy *p, int c, char buf[48]) {
  buf[0] = 0;
  if (c != 0 && c != p->plays) snprintf(buf, 48, " (%d of %d plays)", c, p->plays);
  return buf;
}

/* The gap before arrival k (k >= 1): from the end of the one before. */
double lrn_gap(const xpl_outcome *o, int k) {
  const xpl_arrival *a = &o->arr[k - 1], *b = &o->arr[k];
  double from = a->t_end >= 0 ? a->t_end : a->t_arrive;
  return b->t_arrive - from;
}

int lrn_retried(const xpl_outcome *o) { return o->narr >= 2; }

void lrn_add_retry(xpl_policy *p, const char *what) {
  if (p->nretries < XPL_MAX_RETRIES) snprintf(p->retries[p->nretries++], 24, "%s", what);
}

/* What a retry after a response leads to, in the profile's words. */
const char *lrn_classify(const xpl_policy *p, const xpl_outcome *o) {
  if (!lrn_retried(o)) return "stop";
  /* a gap holds the client's own time per request too: a retry "at once"
     takes that time (overhead, when a Retry-After showed it), a backoff
     that and its wait: at least the shortest backoff gap seen */
  double own = p->overhead > 0 ? p->overhead : p->own_backoff;
  double quick = p->min_gap > 0 ? own + (p->min_gap - own) / 2 : 0.05;
  return lrn_gap(o, 1) < quick ? "immediate" : "backoff";
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double lrn_median(double *v, int n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rounds to two significant figures: a measured 0.4987 s is 0.5. */
double lrn_round2(double x) {
  if (x <= 0) return 0;
  double m = pow(10, floor(log10(x)) - 1);
  return round(x / m) * m;
}
