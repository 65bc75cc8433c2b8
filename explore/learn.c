/*
 * learn.c - `fusebox learn`: probe scenarios played against a client, and
 * its retry policy inferred from what it did on the wire (docs/learn.md).
 * Probes adapt: what is learned first (does it retry a 429? its backoff)
 * decides what is asked next (which Retry-After forms, how long a probe
 * value must be to stand out from the backoff, where its cap lies).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

/* The statuses a profile's facts name (cli/policy_facts.c compares them). */
static const int STATUSES[] = {400, 401, 403, 404, 408, 409, 410, 413, 422, 429, 451,
                               500, 501, 502, 503, 504, 529};
#define NSTATUSES ((int)(sizeof STATUSES / sizeof STATUSES[0]))

/* Gaps that spread less than this are one wait measured with noise (the
   client's own time per request, multiplied under --warp), not jitter. */
#define JITTER_MIN 0.12

typedef struct learner {
  const xpl_learn_opts *o;
  xpl_play_fn play;
  void *arg;
  xpl_policy *p;
  long index;
  char *err;
  const char *client_extra; /* more of the probes' client table (", attempt_timeout = 1") */
  int stream;               /* the probes ask for a stream (call = "stream") */
} learner;

/* The answer a probe ends with, and the text its stream faults cut. */
#define CHUNKS "chunks = { \"The answer \", \"is \", \"forty-two.\" }, interval = 0.01"

/* A probe scenario: steps (Lua), then the answer. */
static char *probe_lua(const learner *l, const char *steps) {
  size_t n = strlen(steps) + 1024;
  char *s = malloc(n);
  if (!s) return NULL;
  snprintf(s, n,
           "-- a fusebox learn probe\nreturn scenario {\n  name = \"learn probe\",\n"
           "  provider = {\n%s    %s,\n  },\n"
           "  client = { call = \"%s\"%s%s%s%s, deadline = 120 },\n"
           "  expect = { max_requests = 100 },\n}\n",
           steps, l->stream ? "stream { " CHUNKS " }" : "chat { content = \"The answer is forty-two.\" }",
           l->stream ? "stream" : "chat", l->o->dialect ? ", dialect = \"" : "", l->o->dialect ? l->o->dialect : "",
           l->o->dialect ? "\"" : "", l->client_extra ? l->client_extra : "");
  return s;
}

/* Plays n probes (each its step text) at once into out. */
static int play_n(learner *l, int n, char *const *steps, xpl_outcome *out) {
  char *lua[XPL_BATCH];
  long idx[XPL_BATCH];
  for (int i = 0; i < n; i++) {
    lua[i] = probe_lua(l, steps[i]);
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
static int play_all(learner *l, int n, char *const *steps, xpl_outcome *out) {
  for (int at = 0; at < n; at += XPL_BATCH)
    if (play_n(l, n - at < XPL_BATCH ? n - at : XPL_BATCH, steps + at, out + at) != 0) return -1;
  return 0;
}

/* Appends to the evidence of fact k (what the wire showed). */
static void ev(xpl_policy *p, int k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ev(xpl_policy *p, int k, const char *fmt, ...) {
  size_t len = strlen(p->evidence[k]);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->evidence[k] + len, XPL_EV_LEN - len, fmt, ap);
  va_end(ap);
}

/* Plays each of n probes p->plays times: play j of probe i is out[i * plays + j].
   A malloc'd array, NULL on error (l->err says why). */
static xpl_outcome *play_each(learner *l, int n, char *const *steps) {
  int k = l->p->plays;
  char **list = malloc(sizeof *list * (size_t)(n * k));
  xpl_outcome *out = calloc((size_t)(n * k), sizeof *out);
  if (!list || !out) {
    snprintf(l->err, XPL_ERRLEN, "out of memory");
  } else {
    for (int i = 0; i < n * k; i++) list[i] = steps[i / k];
    if (play_all(l, n * k, list, out) == 0) {
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
static int vote(xpl_policy *p, const xpl_outcome *out, int i, int (*yes)(const xpl_outcome *),
                int *count) {
  int c = 0, k = p->plays;
  for (int j = 0; j < k; j++) c += yes(&out[i * k + j]) != 0;
  if (c != 0 && c != k) p->nflaky++;
  if (count) *count = c;
  return 2 * c >= k;
}

/* " (2 of 3 plays)" when the plays of a fact disagreed, else "". */
static const char *split(const xpl_policy *p, int c, char buf[48]) {
  buf[0] = 0;
  if (c != 0 && c != p->plays) snprintf(buf, 48, " (%d of %d plays)", c, p->plays);
  return buf;
}

/* The gap before arrival k (k >= 1): from the end of the one before. */
static double gap(const xpl_outcome *o, int k) {
  const xpl_arrival *a = &o->arr[k - 1], *b = &o->arr[k];
  double from = a->t_end >= 0 ? a->t_end : a->t_arrive;
  return b->t_arrive - from;
}

static int retried(const xpl_outcome *o) { return o->narr >= 2; }

static void add_retry(xpl_policy *p, const char *what) {
  if (p->nretries < XPL_MAX_RETRIES) snprintf(p->retries[p->nretries++], 24, "%s", what);
}

/* What a retry after a response leads to, in the profile's words. */
static const char *classify(const xpl_policy *p, const xpl_outcome *o) {
  if (!retried(o)) return "stop";
  /* a gap holds the client's own time per request too: a retry "at once"
     takes that time (overhead, when a Retry-After showed it), a backoff
     that and its wait: at least the shortest backoff gap seen */
  double own = p->overhead > 0 ? p->overhead : p->own_backoff;
  double quick = p->min_gap > 0 ? own + (p->min_gap - own) / 2 : 0.05;
  return gap(o, 1) < quick ? "immediate" : "backoff";
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  if (n == 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rounds to two significant figures: a measured 0.4987 s is 0.5. */
static double round2(double x) {
  if (x <= 0) return 0;
  double m = pow(10, floor(log10(x)) - 1);
  return round(x / m) * m;
}

/* The retry probes past the statuses, and how the evidence names them. */
static const char *const EXTRA_STEPS[] = {
    "    fail { status = 429, code = \"insufficient_quota\", type = \"insufficient_quota\", "
    "message = \"quota\" },\n",
    "    drop {},\n",
    "    truncate { chat { content = \"The answer is forty-two.\" }, at = 12, mode = \"early-close\" },\n",
    "    garbage {},\n",
    "    fail { status = 429, retry_after = 1 },\n",
    "    fail { status = 429, code = \"insufficient_quota\", type = \"insufficient_quota\", "
    "message = \"quota\", retry_after = 1 },\n",
    "    fail { status = 503, headers = { [\"x-should-retry\"] = \"false\" } },\n",
    "    fail { status = 400, headers = { [\"x-should-retry\"] = \"true\" } },\n"};
static const char *const EXTRA_NAMES[] = {"quota 429", "dropped connection", "cut body",
                                          "200 not JSON", "429 with Retry-After: 1",
                                          "quota 429 with Retry-After: 1",
                                          "503 with x-should-retry: false",
                                          "400 with x-should-retry: true"};
#define NEXTRA ((int)(sizeof EXTRA_STEPS / sizeof EXTRA_STEPS[0]))

/* The evidence of the retry probes: which got a second attempt. */
static void retries_evidence(xpl_policy *p, const int *yes, const int *count) {
  char b[48];
  for (int pass = 1; pass >= 0; pass--) {
    ev(p, XPL_EV_RETRIES, "%s", pass ? "a second attempt came after:" : "; none after:");
    int any = 0;
    for (int i = 0; i < NSTATUSES + NEXTRA; i++) {
      if (yes[i] != pass) continue;
      if (i < NSTATUSES) ev(p, XPL_EV_RETRIES, "%s %d", any ? "," : "", STATUSES[i]);
      else ev(p, XPL_EV_RETRIES, "%s %s", any ? "," : "", EXTRA_NAMES[i - NSTATUSES]);
      ev(p, XPL_EV_RETRIES, "%s", split(p, count[i], b));
      any = 1;
    }
    if (!any) ev(p, XPL_EV_RETRIES, " nothing");
  }
}

/* Which statuses and failures are retried; the quota 429 apart, and a 429
   with a Retry-After apart (some clients retry a 429 only when it says
   when: LangChain). */
static int probe_retries(learner *l) {
  enum { N = NSTATUSES + NEXTRA };
  char *steps[N];
  char buf[NSTATUSES][64];
  for (int i = 0; i < NSTATUSES; i++) {
    snprintf(buf[i], sizeof buf[i], "    fail { status = %d },\n", STATUSES[i]);
    steps[i] = buf[i];
  }
  for (int i = 0; i < NEXTRA; i++) steps[NSTATUSES + i] = (char *)EXTRA_STEPS[i];
  xpl_outcome *out = play_each(l, N, steps);
  if (!out) return -1;
  xpl_policy *p = l->p;
  int yes[N], count[N];
  for (int i = 0; i < N; i++) yes[i] = vote(p, out, i, retried, &count[i]);
  free(out);
  retries_evidence(p, yes, count);
  int r[NSTATUSES];
  for (int i = 0; i < NSTATUSES; i++) r[i] = yes[i];
  int quota = yes[NSTATUSES];
  /* a 429 retried only when it carries a Retry-After: then whether a quota
     429 is retried is asked with one too */
  if (!r[9] && yes[NSTATUSES + 4]) {
    r[9] = 1;
    p->ra_required = 1;
    quota = yes[NSTATUSES + 5];
  }
  /* 500-504 and 529 all retried: ">=500"; every 4xx probed retried, the
     quota 429 too and without conditions: "400-499" (a 402 or 418 the
     probes do not name is then retried too, as such a client does) */
  int all5 = 1, all4 = quota && !p->ra_required;
  for (int i = 0; i < NSTATUSES; i++) {
    if (STATUSES[i] >= 500 && !r[i]) all5 = 0;
    if (STATUSES[i] < 500 && !r[i]) all4 = 0;
  }
  if (all4) add_retry(p, "400-499");
  for (int i = 0; i < NSTATUSES; i++) {
    if (!r[i] || (all5 && STATUSES[i] >= 500) || (all4 && STATUSES[i] < 500)) continue;
    char w[24];
    snprintf(w, sizeof w, "%d", STATUSES[i]);
    if (STATUSES[i] == 429 && !quota) p->quota_except = 1;
    add_retry(p, w);
  }
  if (all5) add_retry(p, ">=500");
  p->retries_429 = r[9];
  if (yes[NSTATUSES + 1]) add_retry(p, "connection");
  if (yes[NSTATUSES + 2]) add_retry(p, "body");
  if (yes[NSTATUSES + 3]) add_retry(p, "shape");
  /* x-should-retry obeyed: it stops a retry the status would get, or
     asks for one the status would not (either shows the client reads it) */
  int s503 = yes[14], s400 = yes[0]; /* STATUSES[14] is 503, [0] 400 */
  p->should_retry = (s503 && !yes[NSTATUSES + 6]) || (!s400 && yes[NSTATUSES + 7]);
  return 0;
}

/* The attempt timeout: the client is asked for a 1 s one (FUSEBOX_ATTEMPT_TIMEOUT
   under exec; the guard's attempt_timeout) and the first answer comes after
   5 s. A second attempt: "timeout" is retried; one attempt the client gave up
   before the answer: not retried; one answered attempt: the client has no
   such timeout to tell (unknown, left out). */
static int timeout_retried(const xpl_outcome *o) { return o->narr >= 2; }
/* abandoned before any status line */
static int timeout_given_up(const xpl_outcome *o) {
  return o->narr >= 2 || (o->narr == 1 && o->arr[0].t_end >= 0 && o->arr[0].status == 0);
}

static int probe_timeout(learner *l) {
  char *steps[1] = {"    delay { 5, chat { content = \"The answer is forty-two.\" } },\n"};
  l->client_extra = ", attempt_timeout = 1";
  xpl_outcome *out = play_each(l, 1, steps);
  l->client_extra = NULL;
  if (!out) return -1;
  xpl_policy *p = l->p;
  int again, ended, c;
  char b[48];
  again = vote(p, out, 0, timeout_retried, &c);
  ev(p, XPL_EV_TIMEOUT, "told a 1 s attempt timeout, the answer after 5 s: %s%s",
     again ? "a second attempt came" : "no second attempt", split(p, c, b));
  ended = again || vote(p, out, 0, timeout_given_up, NULL);
  free(out);
  if (again) add_retry(p, "timeout");
  if (ended) p->timeout_seen = 1;
  else ev(p, XPL_EV_TIMEOUT, "; the client waited for the answer (no such timeout to tell)");
  return 0;
}

/* The first attempt ended (the client gave up) well before a 5 s stall. */
static int gave_up_early(const xpl_outcome *o) {
  return o->narr >= 1 && o->arr[0].t_end >= 0 && o->arr[0].t_end - o->arr[0].t_arrive < 3.5;
}
/* ... before an answer whose head waits 1.2 s and body 1.2 s more was over. */
static int gave_up_whole(const xpl_outcome *o) {
  return o->narr >= 1 && o->arr[0].t_end >= 0 && o->arr[0].t_end - o->arr[0].t_arrive < 2.2;
}

/* What the attempt timeout covers on a call that is not streamed, for a
   client that keeps the one it is told: a body that stalls 5 s after its
   head (h2_window; on HTTP/1.1 the head, then nothing) waited out under a
   1 s timeout is "headers"; given up on, the body is covered, and an
   answer whose head waits 1.2 s and whose body waits 1.2 s more under a
   2 s timeout tells "idle" (read to its end: no wait was 2 s) from
   "whole" (given up). A stream is not asked: clients bound it otherwise
   (openai 7.59 bounds a plain body by its timeout, never a stream). */
static int probe_covers(learner *l) {
  xpl_policy *p = l->p;
  if (!p->timeout_seen) return 0;
  char *st[1] = {"    h2_window { after = 0, stall = 5 },\n"};
  l->client_extra = ", attempt_timeout = 1";
  xpl_outcome *out = play_each(l, 1, st);
  l->client_extra = NULL;
  if (!out) return -1;
  char b[48];
  int c, body = vote(p, out, 0, gave_up_early, &c);
  free(out);
  ev(p, XPL_EV_TIMEOUT, "; told 1 s, a body that stalls 5 s after its head: %s%s",
     body ? "given up" : "waited out", split(p, c, b));
  if (!body) {
    snprintf(p->covers, sizeof p->covers, "headers");
    return 0;
  }
  char *sl[1] = {"    delay { 1.2, h2_window { after = 0, stall = 1.2 } },\n"};
  l->client_extra = ", attempt_timeout = 2";
  out = play_each(l, 1, sl);
  l->client_extra = NULL;
  if (!out) return -1;
  int whole = vote(p, out, 0, gave_up_whole, &c);
  free(out);
  ev(p, XPL_EV_TIMEOUT, "; told 2 s, a head after 1.2 s and its body 1.2 s later: %s%s",
     whole ? "given up" : "read to its end", split(p, c, b));
  snprintf(p->covers, sizeof p->covers, "%s", whole ? "whole" : "idle");
  return 0;
}

static int stream_asked(const xpl_outcome *o) { return o->narr > 0 && o->arr[0].stream; }
static int stream_retried(const xpl_outcome *o) { return stream_asked(o) && retried(o); }

/* Broken streams, asked with the client told to stream: one cut after two
   chunks ("stream_error"; retried, streams_retried), one that ends
   without its end marker ("no_end_marker") and one ended by an error
   event (also "stream_error" to a profile: the evidence says when the two
   differ). A client that does not ask
   for a stream when told to (its first request has no stream: true)
   tells nothing of streams: left out, and said so. */
static int probe_streams(learner *l) {
  char *steps[3] = {"    stream { " CHUNKS ", drop_after = 2 },\n",
                    "    stream { " CHUNKS ", no_end = true },\n",
                    "    stream { " CHUNKS ", error_after = 2 },\n"};
  l->stream = 1;
  xpl_outcome *out = play_each(l, 3, steps);
  l->stream = 0;
  if (!out) return -1;
  xpl_policy *p = l->p;
  int asked = vote(p, out, 0, stream_asked, NULL), c1, c2;
  int cut = vote(p, out, 0, stream_retried, &c1), noend = vote(p, out, 1, stream_retried, &c2), c3;
  int event = vote(p, out, 2, stream_retried, &c3);
  free(out);
  if (!asked) {
    ev(p, XPL_EV_STREAMS, "told to stream, the client's request did not ask for a stream: not probed");
    return 0;
  }
  char b1[48], b2[48];
  ev(p, XPL_EV_STREAMS, "a stream cut after two chunks: %s%s; a stream without its end marker: %s%s",
     cut ? "retried" : "not retried", split(p, c1, b1), noend ? "retried" : "not retried",
     split(p, c2, b2));
  char b3[48];
  ev(p, XPL_EV_STREAMS, "; a stream ended by an error event after two chunks: %s%s%s",
     event ? "retried" : "not retried", split(p, c3, b3),
     event != cut ? " (a profile's one \"stream_error\" cannot tell it from the cut one: the cut "
                    "one decides)" : "");
  p->streams_probed = 1;
  if (cut) {
    p->streams_retried = 1;
    add_retry(p, "stream_error");
  }
  if (noend) add_retry(p, "no_end_marker");
  return 0;
}

/* The factors a backoff grows by in the clients we know; a measured growth
   near one of them is that one, lowered by the client's own time. */
static const double FACTORS[] = {1.5, 2, 3};

/* The client's own time per request, read from the backoff's growth: each
   gap is own + base * factor^(k-1), so with the factor known the first two
   gaps give own = g1 - (g2 - g1) / (factor - 1). The factor is the one of
   FACTORS that the measured growth (which own lowers) lies just under;
   without such a factor, or without jitter-free gaps, 0: unknown. */
static double own_time(const xpl_outcome *out, int reps, double growth, double *factor) {
  double f = 0;
  for (size_t i = 0; i < sizeof FACTORS / sizeof FACTORS[0]; i++)
    if (growth > FACTORS[i] * 0.85 && growth < FACTORS[i] * 1.05) f = FACTORS[i];
  if (f == 0) return 0;
  double own[16];
  int n = 0;
  for (int r = 0; r < reps && n < 16; r++) {
    if (out[r].narr < 3) continue;
    double g1 = gap(&out[r], 1), g2 = gap(&out[r], 2);
    own[n++] = g1 - (g2 - g1) / (f - 1);
  }
  double o = median(own, n);
  *factor = f;
  /* noise can make it negative; more than half the first gap is not the
     client's own time but another factor */
  if (o <= 0) return 0;
  double g1[16];
  int m = 0;
  for (int r = 0; r < reps && m < 16; r++)
    if (out[r].narr >= 2) g1[m++] = gap(&out[r], 1);
  if (o > median(g1, m) / 2) {
    *factor = 0;
    return 0;
  }
  return o;
}

/* Attempts, backoff and jitter: a 503 on every attempt, played repeats times. */
static int probe_backoff(learner *l) {
  char steps[512] = "";
  for (int i = 0; i < 10; i++) strcat(steps, "    fail { status = 503 },\n");
  int reps = l->o->repeats > 0 ? l->o->repeats : 5;
  if (reps > 16) reps = 16;
  char *list[16];
  for (int i = 0; i < reps; i++) list[i] = steps;
  xpl_outcome *out = calloc((size_t)reps, sizeof *out);
  if (!out) return -1;
  if (play_all(l, reps, list, out) != 0) {
    free(out);
    return -1;
  }
  xpl_policy *p = l->p;
  int att = 0, silent = 1;
  for (int r = 0; r < reps; r++) silent &= out[r].narr == 0;
  if (silent) {
    snprintf(l->err, XPL_ERRLEN, "the client sent no request in %d probes: nothing to learn from "
             "(is its base URL the one exec sets?)", reps);
    free(out);
    return -1;
  }
  double first[16], ratio[64];
  int nf = 0, nr = 0;
  for (int r = 0; r < reps; r++) {
    if (out[r].narr > att) att = out[r].narr;
    if (out[r].narr >= 2) first[nf++] = gap(&out[r], 1);
    for (int k = 2; k < out[r].narr && nr < 64; k++) {
      double g0 = gap(&out[r], k - 1), g1 = gap(&out[r], k);
      if (g0 > 0.01) ratio[nr++] = g1 / g0;
    }
  }
  p->max_attempts = att;
  ev(p, XPL_EV_ATTEMPTS, "a 503 on every attempt, %d plays: attempts", reps);
  for (int r = 0; r < reps; r++) ev(p, XPL_EV_ATTEMPTS, " %d", out[r].narr);
  /* the Idempotency-Key: one reused by every attempt (they count as one
     request: attempt 2, 3...) or a new one each time (each is attempt 1) */
  snprintf(p->idem, sizeof p->idem, "false");
  for (int r = 0; r < reps; r++)
    if (out[r].narr >= 2 && out[r].arr[0].idem && out[r].arr[1].idem)
      snprintf(p->idem, sizeof p->idem, "%s", out[r].arr[1].attempt >= 2 ? "per_call" : "per_attempt");
  ev(p, XPL_EV_IDEM, "%s", strcmp(p->idem, "per_call") == 0 ? "attempts 1 and 2 carried one Idempotency-Key"
                           : strcmp(p->idem, "per_attempt") == 0 ? "attempts 1 and 2 carried different Idempotency-Keys"
                                                                 : "no attempt carried an Idempotency-Key");
  if (att >= 2) {
    double mx = 0;
    for (int i = 0; i < nf; i++) mx = first[i] > mx ? first[i] : mx;
    p->factor = nr ? round2(median(ratio, nr)) : 2;
    if (p->factor < 1) p->factor = 1;
    /* Jitter from the spread of one retry's gap across the repeats, the
       latest retry that every repeat reached (the longest gaps: the
       client's own time per request counts least there) */
    int k = 0;
    for (int kk = 1; kk < att; kk++) {
      int have = 0;
      for (int r = 0; r < reps; r++) have += out[r].narr > kk;
      if (have == reps) k = kk;
    }
    double lo = 1e18, hi = 0, lo1 = 1e18;
    for (int r = 0; k > 0 && r < reps; r++) {
      double g = gap(&out[r], k);
      lo = g < lo ? g : lo;
      hi = g > hi ? g : hi;
    }
    for (int i = 0; i < nf; i++) lo1 = first[i] < lo1 ? first[i] : lo1;
    double spread = hi > 0 && reps >= 2 ? 1 - lo / hi : 0;
    /* without jitter the shortest gap is the truer base (the client's own
       time per request only ever lengthens one); with it, the longest
       gap stands for the undisturbed wait */
    double f = 0, own = spread < JITTER_MIN && nr ? own_time(out, reps, median(ratio, nr), &f) : 0;
    if (f > 0) p->factor = f;
    p->own_backoff = own;
    p->base = round2(spread < JITTER_MIN ? lo1 - own : mx);
    p->min_gap = lo1;
    if (spread < JITTER_MIN) snprintf(p->jitter, sizeof p->jitter, "none");
    else if (lo1 < 0.3 * mx) snprintf(p->jitter, sizeof p->jitter, "full");
    else {
      snprintf(p->jitter, sizeof p->jitter, "subtract");
      /* n samples of a uniform span cover (n - 1) / (n + 1) of it */
      double fr = spread * (reps + 1) / (reps - 1);
      p->fraction = round((fr > 1 ? 1 : fr) * 20) / 20; /* to 0.05 */
    }
    ev(p, XPL_EV_BACKOFF, "first gap %.2f-%.2f s over %d plays", lo1, mx, nf);
    if (nr) ev(p, XPL_EV_BACKOFF, ", growth x%.2f (median of %d)", median(ratio, nr), nr);
    if (k > 0) ev(p, XPL_EV_BACKOFF, ", gap %d spread %.0f %%", k, spread * 100);
    if (own > 0) ev(p, XPL_EV_BACKOFF, "; the client's own %.2f s per request, read from the growth, "
                    "taken out", own);
  }
  free(out);
  return 0;
}

/* What followed a probe's first attempt, for the evidence: a static text. */
static const char *after(const xpl_outcome *o) {
  static char b[64];
  if (!retried(o)) return "no retry";
  snprintf(b, sizeof b, "retried after %.2f s", gap(o, 1));
  return b;
}

/* One 429 probe with step text; 1 when the retry waited at least want s. */
static int wait_probe(learner *l, const char *step, double want, xpl_outcome *out) {
  char *s[1] = {(char *)step};
  if (play_n(l, 1, s, out) != 0) return -1;
  return retried(out) && gap(out, 1) >= want * 0.95 - 0.02;
}

/* Retry-After: each form, the cap (by bisection), bad and past values. */
static int probe_retry_after(learner *l) {
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
  xpl_outcome *fo = play_each(l, 3, fl);
  if (!fo) return -1;
  int read[3];
  double over = -1;
  ev(p, XPL_EV_RA_FORMS, "a 429 asking for %.0f s:", v);
  for (int i = 0; i < 3; i++) {
    int c = 0;
    double g = -1;
    for (int j = 0; j < p->plays; j++) {
      const xpl_outcome *o = &fo[i * p->plays + j];
      int w = retried(o) && gap(o, 1) >= v * 0.95 - 0.02;
      c += w;
      if (w && (over < 0 || gap(o, 1) - v < over)) over = gap(o, 1) - v;
      if (retried(o) && (g < 0 || gap(o, 1) < g)) g = gap(o, 1);
    }
    if (c != 0 && c != p->plays) p->nflaky++;
    read[i] = 2 * c >= p->plays;
    char b[48];
    if (g < 0) ev(p, XPL_EV_RA_FORMS, "%s as %s: no retry", i ? ";" : "", FORM[i]);
    else ev(p, XPL_EV_RA_FORMS, "%s as %s: retried after %.2f s%s", i ? ";" : "", FORM[i], g,
            split(p, c, b));
  }
  free(fo);
  int ms = read[0], sec = read[1], date = read[2];
  if (over > 0 && over < p->min_gap) {
    /* the backoff as the client waits it, without that time */
    p->overhead = over;
    double raw = p->own_backoff > 0 ? p->min_gap : p->base;
    p->base = round2(raw - over > 0.01 ? raw - over : raw);
  }
  /* both headers read: which wins when both come (v ms and v + 2 s) */
  int ms_first = 1;
  if (ms && (sec || date)) {
    snprintf(step, sizeof step, "    fail { status = 429, retry_after_ms = %.0f, retry_after = %.0f },\n",
             v * 1000, v + 2);
    if (wait_probe(l, step, v + 2, &out) < 0) return -1;
    ms_first = !(retried(&out) && gap(&out, 1) >= (v + 2) * 0.95 - 0.02);
    ev(p, XPL_EV_RA_FORMS, "; retry-after-ms %.0f and Retry-After %.0f together: %s (one play)",
       v * 1000, v + 2, after(&out));
  }
  if (ms && ms_first) snprintf(p->forms[p->nforms++], 16, "retry-after-ms");
  if (sec) snprintf(p->forms[p->nforms++], 16, "seconds");
  if (date) snprintf(p->forms[p->nforms++], 16, "date");
  if (ms && !ms_first) snprintf(p->forms[p->nforms++], 16, "retry-after-ms");
  p->ra_honoured = p->nforms > 0;
  if (!p->ra_honoured) return 0;
  const char *form = sec ? "retry_after" : ms ? "retry_after_ms" : "retry_after_date";
  double mult = ms && !sec ? 1000 : 1;
  /* the cap: is 61 s waited out? else bisect between v and 61 */
  double lo = v, hi = l->o->max_wait > 0 ? l->o->max_wait : 61;
  snprintf(step, sizeof step, "    fail { status = 429, %s = %.0f },\n", form, hi * mult);
  int r = wait_probe(l, step, hi, &out);
  if (r < 0) return -1;
  if (r) {
    p->ra_cap = 0; /* none up to hi */
    p->ra_cap_probed = hi;
    ev(p, XPL_EV_RA_CAP, "a 429 asking for %.0f s: waited out (one play)", hi);
  } else {
    snprintf(p->over_cap, sizeof p->over_cap, "%s", classify(p, &out));
    ev(p, XPL_EV_RA_CAP, "a 429 asking for %.0f s: %s; ", hi, after(&out));
    for (int i = 0; i < 8 && hi - lo > 1; i++) {
      double mid = floor((lo + hi) / 2);
      snprintf(step, sizeof step, "    fail { status = 429, %s = %.0f },\n", form, mid * mult);
      if ((r = wait_probe(l, step, mid, &out)) < 0) return -1;
      if (r) lo = mid;
      else hi = mid;
    }
    p->ra_cap = lo;
    ev(p, XPL_EV_RA_CAP, "bisection: %.0f s waited out, %.0f s not (one play each)", lo, hi);
  }
  /* an unparsable value, and a date in the past */
  snprintf(step, sizeof step, "    fail { status = 429, retry_after = \"soon\" },\n");
  if (wait_probe(l, step, 0, &out) < 0) return -1;
  snprintf(p->invalid, sizeof p->invalid, "%s", classify(p, &out));
  ev(p, XPL_EV_RA_BAD, "Retry-After: soon: %s; ", after(&out));
  snprintf(step, sizeof step, "    fail { status = 429, retry_after_date = -5 },\n");
  if (wait_probe(l, step, 0, &out) < 0) return -1;
  snprintf(p->past, sizeof p->past, "%s", classify(p, &out));
  ev(p, XPL_EV_RA_BAD, "a date 5 s past: %s (one play each)", after(&out));
  return 0;
}

int xpl_learn(const xpl_learn_opts *o, xpl_play_fn play, void *arg, xpl_policy *p,
              char err[XPL_ERRLEN]) {
  memset(p, 0, sizeof *p);
  learner l = {.o = o, .play = play, .arg = arg, .p = p, .err = err};
  /* k plays of a fact that flips half the time disagree with chance
     1 - 2^(1 - k): the fewest plays that reach the confidence asked */
  p->plays = 1;
  if (o->confidence > 0)
    while (1 - pow(0.5, p->plays - 1) < o->confidence && p->plays < XPL_MAX_PLAYS) p->plays++;
  p->confidence = 1 - pow(0.5, p->plays - 1);
  snprintf(p->jitter, sizeof p->jitter, "none");
  snprintf(p->over_cap, sizeof p->over_cap, "backoff");
  snprintf(p->invalid, sizeof p->invalid, "backoff");
  snprintf(p->past, sizeof p->past, "backoff");
  if (probe_backoff(&l) != 0 || probe_retries(&l) != 0 || probe_timeout(&l) != 0 ||
      probe_streams(&l) != 0 || probe_covers(&l) != 0 || probe_retry_after(&l) != 0)
    return -1;
  return 0;
}
