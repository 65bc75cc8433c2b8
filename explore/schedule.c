/*
 * schedule.c - the fault steps a hunt draws from: their names, the values
 * each may take (ladders, smallest first, spread far enough apart that a
 * verdict's tolerance never decides between two rungs), where each fits,
 * and a schedule's canonical text.
 */
#include <stdio.h>
#include <string.h>

#include "common/suggest.h"
#include "explore/explore_int.h"

#define STREAMS ((1u << XPL_CALL_STREAM) | (1u << XPL_CALL_STREAM_TOOLS))
#define MODEL_CALLS ((1u << XPL_CALL_CHAT) | (1u << XPL_CALL_TOOLS) | STREAMS)
#define ALL_CALLS (MODEL_CALLS | (1u << XPL_CALL_EFFECT))

/* The table of kinds: name, calls it fits, ladder sizes of a and b, and
   rank (how strong a fault it is: shrinking prefers a lower one). */
const xpl__kind_info xpl__kinds[XPL_NKINDS] = {
    [XPL_S_5XX] = {"5xx", ALL_CALLS, 4, 1, 0},
    [XPL_S_429] = {"429", ALL_CALLS, 4, 5, 1},
    [XPL_S_QUOTA] = {"quota", MODEL_CALLS, 1, 1, 2},
    [XPL_S_529] = {"529", MODEL_CALLS, 1, 1, 1},
    [XPL_S_4XX] = {"4xx", ALL_CALLS, 4, 1, 2},
    [XPL_S_SHOULD_RETRY] = {"should_retry", MODEL_CALLS, 2, 1, 2},
    [XPL_S_DROP] = {"drop", MODEL_CALLS, 1, 1, 3},
    [XPL_S_RESET] = {"reset", MODEL_CALLS, 1, 1, 4},
    [XPL_S_HANG] = {"hang", MODEL_CALLS, 1, 1, 5},
    [XPL_S_DELAY] = {"delay", MODEL_CALLS, 1, 3, 3},
    [XPL_S_TRUNCATE] = {"truncate", (1u << XPL_CALL_CHAT) | (1u << XPL_CALL_TOOLS), 2, 3, 4},
    [XPL_S_GARBAGE] = {"garbage", (1u << XPL_CALL_CHAT) | (1u << XPL_CALL_TOOLS), 1, 1, 4},
    [XPL_S_STREAM_DROP] = {"stream_drop", STREAMS, 1, 3, 3},
    [XPL_S_STREAM_STALL] = {"stream_stall", STREAMS, 1, 3, 5},
    [XPL_S_STREAM_ERROR] = {"stream_error", STREAMS, 1, 3, 3},
    [XPL_S_STREAM_NO_END] = {"stream_no_end", 1u << XPL_CALL_STREAM, 1, 1, 4},
    [XPL_S_TOOL_CUT] = {"tool_cut", 1u << XPL_CALL_STREAM_TOOLS, 1, 1, 4},
    [XPL_S_TOOL_BAD_JSON] = {"tool_bad_json", 1u << XPL_CALL_TOOLS, 1, 1, 4},
    [XPL_S_TOOL_UNKNOWN] = {"tool_unknown", (1u << XPL_CALL_TOOLS), 1, 1, 4},
    [XPL_S_EFFECT_DROP] = {"effect_drop", 1u << XPL_CALL_EFFECT, 3, 1, 3},
    [XPL_S_EFFECT_LOST] = {"effect_lost", 1u << XPL_CALL_EFFECT, 1, 1, 3},
};

const int xpl__5xx[4] = {503, 500, 502, 504};
const int xpl__4xx[4] = {400, 401, 403, 404};
/* Retry-After seconds: 1 s is what a fixed one-second wait satisfies, 5 s is
   not; 86400 is a day (the client should rather give up than sleep it). */
const int xpl__ra_s[5] = {1, 5, 30, 120, 86400};
const char *const xpl__ra_form[4] = {"none", "seconds", "ms", "date"};
const double xpl__delay_s[3] = {0.5, 3, 30};
const int xpl__trunc_at[3] = {1, 12, 60};
const int xpl__chunks[3] = {0, 1, 2};

static const char *const call_names[XPL_NCALLS] = {"chat", "stream", "tools", "stream_tools",
                                                   "effect"};

int xpl_ra_index(double s) {
  int i = 0;
  while (i + 1 < 5 && xpl__ra_s[i + 1] <= s) i++;
  return i;
}

const char *xpl_kind_name(int kind) {
  return kind >= 0 && kind < XPL_NKINDS ? xpl__kinds[kind].name : NULL;
}

const char *xpl_call_name(int call) {
  return call >= 0 && call < XPL_NCALLS ? call_names[call] : NULL;
}

int xpl_step_fits(int call, int kind) {
  if (call < 0 || call >= XPL_NCALLS || kind < 0 || kind >= XPL_NKINDS) return 0;
  return (xpl__kinds[kind].calls >> call) & 1u;
}

/* Calls one word of a comma list: fn(word, len, arg) returns -1 on error. */
static int each_word(const char *list, int (*fn)(const char *, size_t, void *, char *), void *arg,
                     char err[XPL_ERRLEN]) {
  const char *p = list;
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len == 0 || len >= XPL_NAMELEN) {
      snprintf(err, XPL_ERRLEN, "empty or overlong name in '%s'", list);
      return -1;
    }
    if (fn(p, len, arg, err) != 0) return -1;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

/* The index of word among n names, or -1 with a suggestion in err. */
static int lookup(const char *word, size_t len, const char *const *names, int n,
                  const char *what, char *err) {
  char w[XPL_NAMELEN];
  memcpy(w, word, len);
  w[len] = '\0';
  for (int i = 0; i < n; i++)
    if (strcmp(w, names[i]) == 0) return i;
  const char *known[XPL_NKINDS + 1];
  for (int i = 0; i < n && i < XPL_NKINDS; i++) known[i] = names[i];
  known[n < XPL_NKINDS ? n : XPL_NKINDS] = NULL;
  const char *near = fb_suggest(w, known, NULL);
  snprintf(err, XPL_ERRLEN, "unknown %s '%s'%s%s%s", what, w, near ? " (did you mean '" : "",
           near ? near : "", near ? "'?)" : "");
  return -1;
}

static int add_kind(const char *w, size_t len, void *arg, char *err) {
  const char *names[XPL_NKINDS];
  for (int i = 0; i < XPL_NKINDS; i++) names[i] = xpl__kinds[i].name;
  int k = lookup(w, len, names, XPL_NKINDS, "step", err);
  if (k < 0) return -1;
  ((xpl_space *)arg)->kinds |= 1u << k;
  return 0;
}

int xpl_space_kinds(xpl_space *space, const char *list, char err[XPL_ERRLEN]) {
  space->kinds = 0;
  return each_word(list, add_kind, space, err);
}

static int add_call(const char *w, size_t len, void *arg, char *err) {
  xpl_space *sp = arg;
  if (len == 3 && memcmp(w, "any", 3) == 0) {
    sp->calls = (1u << XPL_NCALLS) - 1;
    return 0;
  }
  int c = lookup(w, len, call_names, XPL_NCALLS, "call", err);
  if (c < 0) return -1;
  sp->calls |= (uint8_t)(1u << c);
  return 0;
}

int xpl_space_calls(xpl_space *space, const char *list, char err[XPL_ERRLEN]) {
  space->calls = 0;
  return each_word(list, add_call, space, err);
}

/* One step as text, the way the schedule's identity and the doc say it. */
void xpl__step_text(const xpl_step *st, char *out, size_t n) {
  int a = st->a, b = st->b;
  switch (st->kind) {
  case XPL_S_5XX: snprintf(out, n, "%d", xpl__5xx[a]); break;
  case XPL_S_429:
    if (a == 0) snprintf(out, n, "429 without Retry-After");
    else if (a == 1) snprintf(out, n, "429 Retry-After: %d", xpl__ra_s[b]);
    else if (a == 2) snprintf(out, n, "429 retry-after-ms: %d", xpl__ra_s[b] * 1000);
    else snprintf(out, n, "429 Retry-After as a date %d s ahead", xpl__ra_s[b]);
    break;
  case XPL_S_QUOTA: snprintf(out, n, "429 insufficient_quota"); break;
  case XPL_S_529: snprintf(out, n, "529 overloaded"); break;
  case XPL_S_4XX: snprintf(out, n, "%d", xpl__4xx[a]); break;
  case XPL_S_SHOULD_RETRY:
    snprintf(out, n, "%s", a ? "409 with x-should-retry: true" : "500 with x-should-retry: false");
    break;
  case XPL_S_DELAY: snprintf(out, n, "answered after %g s", xpl__delay_s[b]); break;
  case XPL_S_TRUNCATE:
    snprintf(out, n, "body cut at %d bytes (%s)", xpl__trunc_at[b], a ? "early-close" : "short-body");
    break;
  case XPL_S_STREAM_DROP: snprintf(out, n, "stream cut after %d chunks", xpl__chunks[b]); break;
  case XPL_S_STREAM_STALL: snprintf(out, n, "stream stalled after %d chunks", xpl__chunks[b]); break;
  case XPL_S_STREAM_ERROR:
    snprintf(out, n, "error event after %d chunks", xpl__chunks[b]);
    break;
  case XPL_S_STREAM_NO_END: snprintf(out, n, "stream without its end"); break;
  case XPL_S_TOOL_CUT: snprintf(out, n, "tool call cut inside its arguments"); break;
  case XPL_S_TOOL_BAD_JSON: snprintf(out, n, "tool call arguments not JSON"); break;
  case XPL_S_TOOL_UNKNOWN: snprintf(out, n, "tool call to a tool not offered"); break;
  case XPL_S_EFFECT_DROP:
    snprintf(out, n, "effect applied, then its answer %s",
             a == 0 ? "dropped" : a == 1 ? "reset" : "never sent");
    break;
  case XPL_S_EFFECT_LOST: snprintf(out, n, "dropped before the effect applied"); break;
  default: snprintf(out, n, "%s", xpl__kinds[st->kind].name); break;
  }
}

void xpl_schedule_text(const xpl_schedule *s, char *out, size_t n) {
  size_t at = (size_t)snprintf(out, n, "%s:", xpl_call_name(s->call));
  for (int i = 0; i < s->n && at < n; i++) {
    char one[96];
    xpl__step_text(&s->s[i], one, sizeof one);
    at += (size_t)snprintf(out + at, n - at, " %s,", one);
  }
  if (at < n) snprintf(out + at, n - at, " then answered");
}

long xpl_schedule_weight(const xpl_schedule *s) {
  long w = (long)s->n * 1000;
  for (int i = 0; i < s->n; i++) w += xpl__kinds[s->s[i].kind].rank * 10 + s->s[i].a + s->s[i].b;
  return w;
}

void xpl_schedule_code(const xpl_schedule *s, char *out, size_t n) {
  size_t at = (size_t)snprintf(out, n, "%s", xpl_call_name(s->call));
  for (int i = 0; i < s->n && at < n; i++)
    at += (size_t)snprintf(out + at, n - at, " %s.%d.%d", xpl__kinds[s->s[i].kind].name,
                           s->s[i].a, s->s[i].b);
}

int xpl_schedule_parse(const char *code, xpl_schedule *out, char err[XPL_ERRLEN]) {
  memset(out, 0, sizeof *out);
  char word[XPL_NAMELEN + 16];
  int used = 0, first = 1;
  const char *p = code;
  while (sscanf(p, " %63s%n", word, &used) == 1) {
    p += used;
    if (first) {
      first = 0;
      int c = -1;
      for (int i = 0; i < XPL_NCALLS; i++)
        if (strcmp(word, call_names[i]) == 0) c = i;
      if (c < 0) {
        snprintf(err, XPL_ERRLEN, "schedule: unknown call '%.40s'", word);
        return -1;
      }
      out->call = (uint8_t)c;
      continue;
    }
    char orig[sizeof word];
    memcpy(orig, word, sizeof word);
    char *dot = strchr(word, '.');
    int a = -1, b = -1, k = -1;
    if (dot) {
      *dot = '\0';
      if (sscanf(dot + 1, "%d.%d", &a, &b) != 2) a = -1;
    }
    for (int i = 0; i < XPL_NKINDS; i++)
      if (strcmp(word, xpl__kinds[i].name) == 0) k = i;
    if (out->n >= XPL_MAX_STEPS || k < 0 || a < 0 || b < 0 || a >= xpl__kinds[k].na ||
        b >= xpl__kinds[k].nb || !xpl_step_fits(out->call, k)) {
      snprintf(err, XPL_ERRLEN, "schedule: bad step '%.40s' (KIND.A.B of a kind that fits '%s', "
               "at most %d)", orig, call_names[out->call], XPL_MAX_STEPS);
      return -1;
    }
    out->s[out->n++] = (xpl_step){(uint8_t)k, (uint8_t)a, (uint8_t)b};
  }
  if (first || out->n == 0) {
    snprintf(err, XPL_ERRLEN, "schedule: expected a call and at least one step");
    return -1;
  }
  return 0;
}
