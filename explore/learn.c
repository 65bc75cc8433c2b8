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

#include "explore/learn_int.h"

/* The statuses a profile's facts name (cli/policy_facts.c compares them). */
static const int STATUSES[] = {400, 401, 403, 404, 408, 409, 410, 413, 422, 429, 451,
                               500, 501, 502, 503, 504, 529};
#define NSTATUSES ((int)(sizeof STATUSES / sizeof STATUSES[0]))

/* Where a status is in STATUSES (it is there). */
static int status_at(int status) {
  int i = 0;
  while (i < NSTATUSES - 1 && STATUSES[i] != status) i++;
  return i;
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
    "    fail { status = 400, headers = { [\"x-should-retry\"] = \"true\" } },\n",
    "    garbage { body = '{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"m\"}' },\n"};
static const char *const EXTRA_NAMES[] = {"quota 429", "dropped connection", "cut body",
                                          "200 not JSON", "429 with Retry-After: 1",
                                          "quota 429 with Retry-After: 1",
                                          "503 with x-should-retry: false",
                                          "400 with x-should-retry: true",
                                          "200 JSON without its fields"};
#define NEXTRA ((int)(sizeof EXTRA_STEPS / sizeof EXTRA_STEPS[0]))

/* The evidence of the retry probes: which got a second attempt. */
static void retries_evidence(xpl_policy *p, const int *yes, const int *count) {
  char b[48];
  for (int pass = 1; pass >= 0; pass--) {
    lrn_ev(p, XPL_EV_RETRIES, "%s", pass ? "a second attempt came after:" : "; none after:");
    int any = 0;
    for (int i = 0; i < NSTATUSES + NEXTRA; i++) {
      if (yes[i] != pass) continue;
      if (i < NSTATUSES) lrn_ev(p, XPL_EV_RETRIES, "%s %d", any ? "," : "", STATUSES[i]);
      else lrn_ev(p, XPL_EV_RETRIES, "%s %s", any ? "," : "", EXTRA_NAMES[i - NSTATUSES]);
      lrn_ev(p, XPL_EV_RETRIES, "%s", lrn_split(p, count[i], b));
      any = 1;
    }
    if (!any) lrn_ev(p, XPL_EV_RETRIES, " nothing");
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
  xpl_outcome *out = lrn_play_each(l, N, steps);
  if (!out) return -1;
  xpl_policy *p = l->p;
  int yes[N], count[N];
  for (int i = 0; i < N; i++) yes[i] = lrn_vote(p, out, i, lrn_retried, &count[i]);
  free(out);
  retries_evidence(p, yes, count);
  int r[NSTATUSES];
  for (int i = 0; i < NSTATUSES; i++) r[i] = yes[i];
  int quota = yes[NSTATUSES];
  /* a 429 retried only when it carries a Retry-After: then whether a quota
     429 is retried is asked with one too */
  int i429 = status_at(429);
  if (!r[i429] && yes[NSTATUSES + 4]) {
    r[i429] = 1;
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
  if (all4) lrn_add_retry(p, "400-499");
  for (int i = 0; i < NSTATUSES; i++) {
    if (!r[i] || (all5 && STATUSES[i] >= 500) || (all4 && STATUSES[i] < 500)) continue;
    char w[24];
    snprintf(w, sizeof w, "%d", STATUSES[i]);
    if (STATUSES[i] == 429 && !quota) p->quota_except = 1;
    lrn_add_retry(p, w);
  }
  if (all5) lrn_add_retry(p, ">=500");
  p->retries_429 = r[i429];
  if (yes[NSTATUSES + 1]) lrn_add_retry(p, "connection");
  if (yes[NSTATUSES + 2]) lrn_add_retry(p, "body");
  /* a 200 not JSON and one JSON without its answer apart: LangChain
     retries the first (a SyntaxError without a status) only */
  if (yes[NSTATUSES + 3]) lrn_add_retry(p, "not_json");
  if (yes[NSTATUSES + 8]) lrn_add_retry(p, "missing_fields");
  /* x-should-retry obeyed: it stops a retry the status would get, or
     asks for one the status would not (either shows the client reads it) */
  p->should_retry = (yes[status_at(503)] && !yes[NSTATUSES + 6]) ||
                    (!yes[status_at(400)] && yes[NSTATUSES + 7]);
  return 0;
}

static int timeout_retried(const xpl_outcome *o) { return o->narr >= 2; }
/* retried, or abandoned before any status line */
static int timeout_given_up(const xpl_outcome *o) {
  return o->narr >= 2 || (o->narr == 1 && o->arr[0].t_end >= 0 && o->arr[0].status == 0);
}

/* The attempt timeout: the client is asked for a 1 s one (FUSEBOX_ATTEMPT_TIMEOUT
   under exec; the guard's attempt_timeout) and the first answer comes after
   5 s. A second attempt: "timeout" is retried; one attempt the client gave up
   before the answer: not retried; one answered attempt: the client has no
   such timeout to tell (unknown, left out). */
static int probe_timeout(learner *l) {
  char *steps[1] = {"    delay { 5, chat { content = \"The answer is forty-two.\" } },\n"};
  l->client_extra = ", attempt_timeout = 1";
  xpl_outcome *out = lrn_play_each(l, 1, steps);
  l->client_extra = NULL;
  if (!out) return -1;
  xpl_policy *p = l->p;
  int again, ended, c;
  char b[48];
  again = lrn_vote(p, out, 0, timeout_retried, &c);
  lrn_ev(p, XPL_EV_TIMEOUT, "told a 1 s attempt timeout, the answer after 5 s: %s%s",
     again ? "a second attempt came" : "no second attempt", lrn_split(p, c, b));
  ended = again || lrn_vote(p, out, 0, timeout_given_up, NULL);
  free(out);
  if (again) lrn_add_retry(p, "timeout");
  if (ended) p->timeout_seen = 1;
  else lrn_ev(p, XPL_EV_TIMEOUT, "; the client waited for the answer (no such timeout to tell)");
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
  xpl_outcome *out = lrn_play_each(l, 1, st);
  l->client_extra = NULL;
  if (!out) return -1;
  char b[48];
  int c, body = lrn_vote(p, out, 0, gave_up_early, &c);
  free(out);
  lrn_ev(p, XPL_EV_TIMEOUT, "; told 1 s, a body that stalls 5 s after its head: %s%s",
     body ? "given up" : "waited out", lrn_split(p, c, b));
  if (!body) {
    snprintf(p->covers, sizeof p->covers, "headers");
    return 0;
  }
  char *sl[1] = {"    delay { 1.2, h2_window { after = 0, stall = 1.2 } },\n"};
  l->client_extra = ", attempt_timeout = 2";
  out = lrn_play_each(l, 1, sl);
  l->client_extra = NULL;
  if (!out) return -1;
  int whole = lrn_vote(p, out, 0, gave_up_whole, &c);
  free(out);
  lrn_ev(p, XPL_EV_TIMEOUT, "; told 2 s, a head after 1.2 s and its body 1.2 s later: %s%s",
     whole ? "given up" : "read to its end", lrn_split(p, c, b));
  snprintf(p->covers, sizeof p->covers, "%s", whole ? "whole" : "idle");
  return 0;
}

/* The length of the client's own attempt timeout, none told: an answer
   after the longest probed wait (--max-wait) + 5 s; the first attempt
   given up before it shows the length. A longer one (openai's 10 min) is
   left out, and said so. */
static int probe_timeout_length(learner *l) {
  xpl_policy *p = l->p;
  double w = (l->o->max_wait > 0 ? l->o->max_wait : 61) + 5;
  char step[128];
  snprintf(step, sizeof step, "    delay { %.0f, chat { content = \"The answer is forty-two.\" } },\n", w);
  char *st[1] = {step};
  xpl_outcome *out = lrn_play_each(l, 1, st);
  if (!out) return -1;
  const xpl_arrival *a = out[0].narr > 0 ? &out[0].arr[0] : NULL;
  double took = a && a->t_end >= 0 ? a->t_end - a->t_arrive : -1;
  if (took >= 0 && took < w - 1) {
    p->timeout_len = lrn_round2(took);
    lrn_ev(p, XPL_EV_TIMEOUT, "; told none, an answer after %.0f s: given up after %.2f s (one play)",
           w, took);
  } else {
    lrn_ev(p, XPL_EV_TIMEOUT, "; told none, an answer after %.0f s: waited for (no timeout that short)",
           w);
  }
  free(out);
  return 0;
}

static int stream_asked(const xpl_outcome *o) { return o->narr > 0 && o->arr[0].stream; }
static int stream_retried(const xpl_outcome *o) { return stream_asked(o) && lrn_retried(o); }

/* The step of the tool-call probe: a stream whose first chunk starts a
   tool call and is cut inside its arguments, no text before it. */
#define TOOL_CUT "    stream { tool_calls = { { name = \"get_weather\", arguments = { city = " \
                 "\"Paris\" } } }, drop_after = 1 },\n"

/* A stream cut inside a tool call's arguments, the client told to stream
   with tools: 1 retried, 0 not, -1 it did not stream (not asked), -2 error. */
static int probe_tool_cut(learner *l, int *count) {
  char *steps[1] = {TOOL_CUT};
  l->stream = 2;
  xpl_outcome *out = lrn_play_each(l, 1, steps);
  l->stream = 0;
  if (!out) return -2;
  int asked = lrn_vote(l->p, out, 0, stream_asked, NULL);
  int yes = asked ? lrn_vote(l->p, out, 0, stream_retried, count) : -1;
  free(out);
  return yes;
}

/* Broken streams, asked with the client told to stream: one cut after two
   chunks of text ("stream_error"; retried, streams_retried), one that ends
   without its end marker ("no_end_marker") and one ended by an error
   event (also "stream_error" to a profile: the evidence says when the two
   differ); then, with tools offered, one cut inside a tool call's
   arguments before any text: retried there but not after text is
   streams_retried = "before_content" (a client that buffers tool-call
   deltas: nothing reached its caller). A client that does
   not ask for a stream when told to (its first request has no stream:
   true) tells nothing of streams: left out, and said so. */
static int probe_streams(learner *l) {
  char *steps[3] = {"    stream { " CHUNKS ", drop_after = 2 },\n",
                    "    stream { " CHUNKS ", no_end = true },\n",
                    "    stream { " CHUNKS ", error_after = 2 },\n"};
  l->stream = 1;
  xpl_outcome *out = lrn_play_each(l, 3, steps);
  l->stream = 0;
  if (!out) return -1;
  xpl_policy *p = l->p;
  int asked = lrn_vote(p, out, 0, stream_asked, NULL), c1, c2;
  int cut = lrn_vote(p, out, 0, stream_retried, &c1), noend = lrn_vote(p, out, 1, stream_retried, &c2), c3;
  int event = lrn_vote(p, out, 2, stream_retried, &c3);
  free(out);
  if (!asked) {
    lrn_ev(p, XPL_EV_STREAMS, "told to stream, the client's request did not ask for a stream: not probed");
    return 0;
  }
  int c4 = 0, tool = probe_tool_cut(l, &c4);
  if (tool == -2) return -1;
  char b1[48], b2[48];
  lrn_ev(p, XPL_EV_STREAMS, "a stream cut after two chunks: %s%s; a stream without its end marker: %s%s",
     cut ? "retried" : "not retried", lrn_split(p, c1, b1), noend ? "retried" : "not retried",
     lrn_split(p, c2, b2));
  char b3[48], b4[48];
  lrn_ev(p, XPL_EV_STREAMS, "; a stream ended by an error event after two chunks: %s%s%s",
     event ? "retried" : "not retried", lrn_split(p, c3, b3),
     event != cut ? " (a profile's one \"stream_error\" cannot tell it from the cut one: the cut "
                    "one decides)" : "");
  if (tool < 0)
    lrn_ev(p, XPL_EV_STREAMS, "; told to stream with tools, it did not stream: the tool-call cut not probed");
  else
    lrn_ev(p, XPL_EV_STREAMS, "; a stream cut inside a tool call's arguments, no text before: %s%s",
           tool ? "retried" : "not retried", lrn_split(p, c4, b4));
  p->streams_probed = 1;
  p->tool_cut = tool;
  if (cut) p->streams_retried = 1;
  else if (tool > 0) p->streams_retried = 2;
  if (cut || tool > 0) lrn_add_retry(p, "stream_error");
  if (noend) lrn_add_retry(p, "no_end_marker");
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
    double g1 = lrn_gap(&out[r], 1), g2 = lrn_gap(&out[r], 2);
    own[n++] = g1 - (g2 - g1) / (f - 1);
  }
  double o = lrn_median(own, n);
  *factor = f;
  /* noise can make it negative; more than half the first gap is not the
     client's own time but another factor */
  if (o <= 0) return 0;
  double g1[16];
  int m = 0;
  for (int r = 0; r < reps && m < 16; r++)
    if (out[r].narr >= 2) g1[m++] = lrn_gap(&out[r], 1);
  if (o > lrn_median(g1, m) / 2) {
    *factor = 0;
    return 0;
  }
  return o;
}

/* The most pairs of one play's gaps: XPL_MAX_ARRIVALS - 1 gaps a play. */
#define MAX_PAIRS (16 * (XPL_MAX_ARRIVALS - 1) * (XPL_MAX_ARRIVALS - 2) / 2)

/*
 * The growth of a jittered backoff: the median, over every pair of one
 * play's gaps i < j (up to gap kmax), of (g_j / g_i)^(1 / (j - i)); 0 when
 * no play has two such gaps. Multiplicative jitter (p-retry's x U[1, 2])
 * spreads the ratio of two neighbouring gaps over [f/2, 2f], and the
 * median of those ratios read LangChain's 2 as 2.11 (its fifth retry's
 * floor 24 % too high, and its own profile verdict failed); a pair j - i
 * retries apart carries that spread over j - i factors, so the distant
 * pairs hold the median to f. Simulated for LangChain's policy (5 plays of
 * 6 gaps, 0.1 s of own time and up to 0.1 s late each gap) it lands within
 * 6 % of 2 in 98 % of the learns, against 79 % for neighbouring ratios (a
 * growth that is no known factor is written as measured: the window below
 * holds every gap seen with any growth, a wrong one only widens it); a
 * least-squares slope of log gaps does as well but a full jitter's
 * near-zero gaps throw it, the median does not mind them.
 */
static double growth_of_pairs(const xpl_outcome *out, int reps, int kmax) {
  double pair[MAX_PAIRS];
  int n = 0;
  for (int r = 0; r < reps && r < 16; r++)
    for (int i = 1; i < out[r].narr && i <= kmax; i++)
      for (int j = i + 1; j < out[r].narr && j <= kmax && n < MAX_PAIRS; j++) {
        double gi = lrn_gap(&out[r], i), gj = lrn_gap(&out[r], j);
        if (gi > 0.01 && gj > 0.01) pair[n++] = pow(gj / gi, 1.0 / (j - i));
      }
  return lrn_median(pair, n);
}

/* The one of FACTORS a jittered backoff's measured growth lies near, else
   0: from 10 % under it (the client's own time and late wake-ups only
   lengthen gaps, the first ones most, so they only lower the growth: 3 %
   for a 0.5 s base with 0.1 s of them) to 6 % over it (the median's
   spread). */
static double known_factor(double growth) {
  for (size_t i = 0; i < sizeof FACTORS / sizeof FACTORS[0]; i++)
    if (growth >= FACTORS[i] * 0.9 && growth <= FACTORS[i] * 1.06) return FACTORS[i];
  return 0;
}

/*
 * A jittered backoff (gaps that spread over the plays), from its gaps up
 * to kmax (those under a cap): its growth from pairs of gaps (a factor
 * clients use when near one), then its window from every gap of every
 * play divided by factor^(k-1), which multiplicative jitter makes draws of
 * one first wait (30 for LangChain's 6 gaps over 5 plays, where the first
 * gaps alone were 5): the longest is the base, and the floor is the
 * shortest lowered by the share t of the span that n draws of a uniform
 * miss below with chance 1 in 200 ((1 - t)^n = 0.005), so that the learned
 * window holds the client's own shortest wait (a floor over it fails the
 * client's own profile verdict; with 1 in 50, 3 of 400 seeded learns of
 * tests/unit_explore's p-retry client under load had one, with 1 in 200,
 * 1). Full jitter when a gap was seen under 0.3 of the longest. Sets
 * factor, base, jitter, fraction and the evidence.
 */
static void read_jittered(const xpl_outcome *out, int reps, int kmax, xpl_policy *p) {
  double growth = growth_of_pairs(out, reps, kmax), known = known_factor(growth);
  /* one retry a play shows no growth: the profile's default, which no
     wait uses (or, under a cap, the caller's) */
  p->factor = known > 0 ? known : growth == 0 ? 2 : growth >= 1 ? lrn_round2(growth) : 1;
  double lo = 1e18, hi = 0;
  int n = 0;
  for (int r = 0; r < reps; r++)
    for (int k = 1; k < out[r].narr && k <= kmax; k++) {
      double w = lrn_gap(&out[r], k) / pow(p->factor, k - 1);
      lo = w < lo ? w : lo;
      hi = w > hi ? w : hi;
      n++;
    }
  /* n draws of a uniform span cover (n - 1) / (n + 1) of it */
  double t = 1 - pow(0.005, 1.0 / n), floor_w = lo - t * (hi - lo) * (n + 1) / (n > 1 ? n - 1 : 1);
  p->base = lrn_round2(hi);
  if (lo < 0.3 * hi) {
    snprintf(p->jitter, sizeof p->jitter, "full");
  } else {
    snprintf(p->jitter, sizeof p->jitter, "subtract");
    double fr = 1 - floor_w / hi;
    p->fraction = ceil(fmin(fr, 1) * 20 - 1e-9) / 20; /* to 0.05, upwards: a wider window */
  }
  if (growth == 0) lrn_ev(p, XPL_EV_BACKOFF, ", one retry: no growth to read");
  else lrn_ev(p, XPL_EV_BACKOFF, ", growth x%.2f (median over pairs of one play's gaps)", growth);
  if (known > 0) lrn_ev(p, XPL_EV_BACKOFF, ", read as x%g", known);
  lrn_ev(p, XPL_EV_BACKOFF, "; %d gaps each over x%g^(k-1): %.2f-%.2f s, floor %.2f s", n, p->factor,
         lo, hi, floor_w > 0 ? floor_w : 0);
}

/* A jitter-free backoff from its gaps up to kmax (those under a cap): the
   growth the median ratio of a gap to the one before, the client's own
   time read from it when it lies just under a factor clients use, the
   base the shortest first gap less that time (the own time only ever
   lengthens a gap). Sets factor, own_backoff, base, jitter and the
   evidence. */
static void read_plain(const xpl_outcome *out, int reps, int kmax, xpl_policy *p) {
  double ratio[64], lo1 = 1e18;
  int nr = 0;
  for (int r = 0; r < reps; r++) {
    if (out[r].narr >= 2 && lrn_gap(&out[r], 1) < lo1) lo1 = lrn_gap(&out[r], 1);
    for (int k = 2; k < out[r].narr && k <= kmax && nr < 64; k++) {
      double g0 = lrn_gap(&out[r], k - 1), g1 = lrn_gap(&out[r], k);
      if (g0 > 0.01) ratio[nr++] = g1 / g0;
    }
  }
  double growth = nr ? lrn_median(ratio, nr) : 0, f = 0;
  p->factor = nr ? lrn_round2(growth) : 2;
  if (p->factor < 1) p->factor = 1;
  double own = nr ? own_time(out, reps, growth, &f) : 0;
  if (f > 0) p->factor = f;
  p->own_backoff = own;
  p->base = lrn_round2(lo1 - own);
  snprintf(p->jitter, sizeof p->jitter, "none");
  if (nr) lrn_ev(p, XPL_EV_BACKOFF, ", growth x%.2f (median of %d)", growth, nr);
  if (own > 0) lrn_ev(p, XPL_EV_BACKOFF, "; the client's own %.2f s per request, read from the growth, "
                  "taken out", own);
}

/* How far gap k spreads over the plays: 1 - shortest / longest (0 for k 0
   or a single play). */
static double spread_at(const xpl_outcome *out, int reps, int k) {
  double lo = 1e18, hi = 0;
  for (int r = 0; k > 0 && r < reps; r++) {
    double g = lrn_gap(&out[r], k);
    lo = g < lo ? g : lo;
    hi = g > hi ? g : hi;
  }
  return hi > 0 && reps >= 2 ? 1 - lo / hi : 0;
}

/* The level of gap k over the plays that reached it: the second longest
   (the longest of fewer than 3), which jitter moves little and one late
   wake-up not at all. */
static double level_at(const xpl_outcome *out, int reps, int k) {
  double a = 0, b = 0; /* the longest, the second */
  int n = 0;
  for (int r = 0; r < reps; r++) {
    if (out[r].narr <= k) continue;
    double g = lrn_gap(&out[r], k);
    n++;
    if (g > a) b = a, a = g;
    else if (g > b) b = g;
  }
  return n >= 3 ? b : a;
}

/*
 * Where a backoff cap shows in the gaps up to kmax: from a retry j on,
 * every gap's level no more than 1.25 times the one before (the factors
 * clients use are 1.5 and more), after gaps that grew (the level before j
 * 1.3 times the first or more). Returns that j (the gap before it is the
 * first at the cap, those from j on are capped), 0 when there is none.
 */
static int cap_from(const xpl_outcome *out, int reps, int kmax) {
  for (int j = 3; j <= kmax; j++) {
    int flat = 1;
    for (int k = j; k <= kmax && flat; k++)
      flat = level_at(out, reps, k) < 1.25 * level_at(out, reps, k - 1);
    if (flat && level_at(out, reps, j - 1) >= 1.3 * level_at(out, reps, 1)) return j;
  }
  return 0;
}

/*
 * The cap of a backoff whose gaps stopped growing at retry j: every gap
 * from j on (of any play) is at it; jitter-free, their median less the
 * client's own time; jittered, their longest (a jitter applied after the
 * cap lowers a wait, p-retry's before it leaves it whole). With a single
 * gap under the cap there is no growth to read: the one to the cap is
 * written (any more gives the same waits).
 */
static void read_cap(const xpl_outcome *out, int reps, int j, xpl_policy *p) {
  double g[16 * XPL_MAX_ARRIVALS], hi = 0;
  int n = 0;
  for (int r = 0; r < reps; r++)
    for (int k = j; k < out[r].narr; k++) {
      g[n++] = lrn_gap(&out[r], k);
      hi = g[n - 1] > hi ? g[n - 1] : hi;
    }
  int plain = strcmp(p->jitter, "none") == 0;
  p->cap = lrn_round2(plain ? lrn_median(g, n) - p->own_backoff : hi);
  if (j == 3 && p->base > 0) p->factor = lrn_round2(p->cap / p->base);
  lrn_ev(p, XPL_EV_BACKOFF, "; from retry %d on the gaps stop growing: capped at %.2f s (the %s of %d "
         "gaps)%s", j - 1, p->cap, plain ? "median" : "longest", n,
         j == 3 ? ", the second already at it (its growth written as the one to the cap)" : "");
}

/*
 * The backoff from the gaps of a 503 on every attempt (att the most
 * attempts seen): a cap where the gaps stop growing, then jitter from the
 * spread of the two latest gaps under it that every play reached (the
 * longest: the client's own time per request counts least there; either
 * spread 12 % or more is jitter: one alone missed p-retry's x U[1, 2] now
 * and then, 5 draws of it spread under 12 % once in 160 learns (6 in 400
 * with load in tests/unit_explore), two such gaps once in 25000), and the
 * rest read as jittered or not. A cap is written only when seen: two gaps
 * at one level for a jitter-free backoff, three for a jittered one (two
 * could be the jitter's), never for full jitter; unseen, the evidence says
 * the gaps grew to the last one.
 */
static void read_backoff(const xpl_outcome *out, int reps, int att, xpl_policy *p) {
  double lo1 = 1e18, mx = 0;
  int nf = 0, kmax = 0;
  for (int r = 0; r < reps; r++)
    if (out[r].narr >= 2) {
      double g = lrn_gap(&out[r], 1);
      lo1 = g < lo1 ? g : lo1;
      mx = g > mx ? g : mx;
      nf++;
    }
  for (int k = 1; k < att; k++) {
    int have = 0;
    for (int r = 0; r < reps; r++) have += out[r].narr > k;
    if (have == reps) kmax = k;
  }
  int j = cap_from(out, reps, kmax), under = j ? j - 2 : kmax;
  double spread = spread_at(out, reps, under), before = under > 1 ? spread_at(out, reps, under - 1) : 0;
  int jittered = spread >= JITTER_MIN || before >= JITTER_MIN;
  p->min_gap = lo1;
  lrn_ev(p, XPL_EV_BACKOFF, "first gap %.2f-%.2f s over %d plays", lo1, mx, nf);
  if (under > 1) lrn_ev(p, XPL_EV_BACKOFF, ", gaps %d and %d spread %.0f %% and %.0f %%", under - 1, under,
                        before * 100, spread * 100);
  else if (under > 0) lrn_ev(p, XPL_EV_BACKOFF, ", gap %d spread %.0f %%", under, spread * 100);
  if (jittered && j && kmax - j < 1) {
    lrn_ev(p, XPL_EV_BACKOFF, ", the last two gaps at one level (a cap, or the jitter: not read)");
    j = 0, under = kmax;
  }
  if (jittered) read_jittered(out, reps, under, p);
  else read_plain(out, reps, under, p);
  if (j && strcmp(p->jitter, "full") == 0)
    lrn_ev(p, XPL_EV_BACKOFF, "; the gaps stop growing at retry %d, but under full jitter a cap is "
           "not read", j - 1);
  else if (j) read_cap(out, reps, j, p);
  else if (kmax > 1)
    lrn_ev(p, XPL_EV_BACKOFF, "; no cap seen: the gaps grew to the last (gap %d), a cap, if any, is "
           "longer", kmax);
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
  if (lrn_play_all(l, reps, list, out) != 0) {
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
  for (int r = 0; r < reps; r++) att = out[r].narr > att ? out[r].narr : att;
  p->max_attempts = att;
  lrn_ev(p, XPL_EV_ATTEMPTS, "a 503 on every attempt, %d plays: attempts", reps);
  for (int r = 0; r < reps; r++) lrn_ev(p, XPL_EV_ATTEMPTS, " %d", out[r].narr);
  /* the Idempotency-Key: one reused by every attempt (they count as one
     request: attempt 2, 3...) or a new one each time (each is attempt 1) */
  snprintf(p->idem, sizeof p->idem, "false");
  for (int r = 0; r < reps; r++)
    if (out[r].narr >= 2 && out[r].arr[0].idem && out[r].arr[1].idem)
      snprintf(p->idem, sizeof p->idem, "%s", out[r].arr[1].attempt >= 2 ? "per_call" : "per_attempt");
  lrn_ev(p, XPL_EV_IDEM, "%s", strcmp(p->idem, "per_call") == 0 ? "attempts 1 and 2 carried one Idempotency-Key"
                           : strcmp(p->idem, "per_attempt") == 0 ? "attempts 1 and 2 carried different Idempotency-Keys"
                                                                 : "no attempt carried an Idempotency-Key");
  if (att >= 2) read_backoff(out, reps, att, p);
  free(out);
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
  snprintf(p->negative, sizeof p->negative, "backoff");
  if (probe_backoff(&l) != 0 || probe_retries(&l) != 0 || probe_timeout(&l) != 0 ||
      probe_streams(&l) != 0 || probe_covers(&l) != 0 || probe_timeout_length(&l) != 0 ||
      lrn_probe_retry_after(&l) != 0)
    return -1;
  return 0;
}
