/*
 * answer_match.c - the one rule that decides whether a text a client
 * accepted is an answer fusebox served: the text of ONE attempt that
 * completed (attempt_state.c), white space around it aside. Anything else
 * is named: the text of an attempt that did not complete, two attempts'
 * texts joined (a splice), or text no attempt sent.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "reports/reports_int.h"

#define JSON_DEPTH_MAX 32 /* nesting looked into in a printed document */

static int space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* The text without white space around it: [*s, *s + *n). */
static void trim(const char *t, const char **s, size_t *n) {
  while (space(*t)) t++;
  size_t len = strlen(t);
  while (len > 0 && space(t[len - 1])) len--;
  *s = t;
  *n = len;
}

/* 1 when the client's text (trimmed: s, n) is the attempt's text, white
   space around both aside; a text the server cut at its cap only has to be
   a prefix of what the client kept. */
static int same_text(const char *s, size_t n, const char *sent) {
  const char *t;
  size_t m;
  trim(sent, &t, &m);
  if (m == 0) return 0;
  if (strlen(sent) >= RPT__TEXT_CAP) return n >= m && memcmp(s, t, m) == 0;
  return n == m && memcmp(s, t, m) == 0;
}

/* An attempt whose text can be an answer: it carried some. */
static int has_text(const rpt__arrival *a) { return a->text != NULL && a->text[0] != '\0'; }

/* The attempt whose text s is, preferring one that completed; -1 none. */
static int whole_match(const rpt_trace *tr, const char *s, size_t n, int *complete) {
  int other = -1;
  for (int k = 0; k < tr->narr; k++) {
    const rpt__arrival *a = &tr->arr[k];
    if (!has_text(a) || !same_text(s, n, a->text)) continue;
    if (rpt__state_complete(a->state)) {
      *complete = 1;
      return k;
    }
    if (other < 0) other = k;
  }
  *complete = 0;
  return other;
}

/*
 * A splice: s starts with an attempt's text (the longest such) and goes on.
 * *second is the attempt whose text the rest is, or -1. Returns the first
 * attempt, or -1 when s starts with no attempt's text.
 */
static int splice_match(const rpt_trace *tr, const char *s, size_t n, int *second) {
  int best = -1;
  size_t best_len = 0;
  for (int k = 0; k < tr->narr; k++) {
    const rpt__arrival *a = &tr->arr[k];
    if (!has_text(a)) continue;
    const char *t = a->text;
    while (space(*t)) t++;
    size_t m = strlen(t);
    if (m == 0 || m >= n || memcmp(s, t, m) != 0) continue;
    if (m > best_len) {
      best = k;
      best_len = m;
    }
  }
  *second = -1;
  if (best < 0) return -1;
  const char *rest = s + best_len;
  size_t rn = n - best_len;
  while (rn > 0 && space(*rest)) {
    rest++;
    rn--;
  }
  int complete;
  if (rn > 0) *second = whole_match(tr, rest, rn, &complete);
  return best;
}

/* Looks for an attempt's whole text among the strings of a JSON document. */
static int json_match(const rpt_trace *tr, const cJSON *v, int depth, int *complete) {
  if (depth > JSON_DEPTH_MAX) return -1;
  if (cJSON_IsString(v) && v->valuestring) {
    const char *s;
    size_t n;
    trim(v->valuestring, &s, &n);
    return n ? whole_match(tr, s, n, complete) : -1;
  }
  int found = -1, found_complete = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, v) {
    int c = 0, k = json_match(tr, it, depth + 1, &c);
    if (k >= 0 && (found < 0 || (c && !found_complete))) {
      found = k;
      found_complete = c;
    }
  }
  *complete = found_complete;
  return found;
}

/* Decides whether text is an answer fusebox served; see reports_int.h. */
rpt__answer_kind rpt__served_answer(const rpt_trace *tr, const char *text, rpt__answer *out) {
  *out = (rpt__answer){RPT__ANS_EMPTY, -1, -1, 0};
  const char *s;
  size_t n;
  trim(text ? text : "", &s, &n);
  if (n == 0) return out->kind;
  int complete = 0, k = whole_match(tr, s, n, &complete);
  if (k >= 0) {
    out->kind = complete ? RPT__ANS_SERVED : RPT__ANS_UNFINISHED;
    out->first = k;
    return out->kind;
  }
  /* A response body printed as it came: the answer is a string inside it. */
  if (s[0] == '{' || s[0] == '[') {
    cJSON *doc = cJSON_ParseWithLength(s, n);
    if (doc != NULL) {
      k = json_match(tr, doc, 0, &complete);
      cJSON_Delete(doc);
      if (k >= 0) {
        out->kind = complete ? RPT__ANS_SERVED : RPT__ANS_UNFINISHED;
        out->first = k;
        out->in_json = 1;
        return out->kind;
      }
    }
  }
  k = splice_match(tr, s, n, &out->second);
  if (k >= 0) {
    out->kind = RPT__ANS_SPLICE;
    out->first = k;
    return out->kind;
  }
  out->kind = RPT__ANS_NONE;
  return out->kind;
}

/*
 * What a call's text was, for evidence: "printed the text of attempt 1,
 * whose stream ended in an error event: \"Partial\"", a splice, or text no
 * attempt sent. Empty when the text is empty. Returns out.
 */
const char *rpt__answer_describe(const rpt_trace *tr, const rpt__client_ev *ce,
                                 const rpt__answer *m, char *out, size_t n) {
  char verb[32], s1[64], cl[96], l1[64], l2[64];
  if (ce->external) snprintf(verb, sizeof verb, "printed");
  else snprintf(verb, sizeof verb, "call %d kept", ce->call);
  rpt__snippet(ce->text ? ce->text : "", s1, sizeof s1);
  const rpt__arrival *a = m->first >= 0 ? &tr->arr[m->first] : NULL;
  out[0] = '\0';
  if (m->kind == RPT__ANS_UNFINISHED || (m->kind == RPT__ANS_SERVED && a)) {
    snprintf(out, n, "%s the text of attempt %d, %s: \"%s\"", verb, a->attempt,
             rpt__state_clause(a, cl, sizeof cl), s1);
  } else if (m->kind == RPT__ANS_SPLICE && m->second >= 0) {
    const rpt__arrival *b = &tr->arr[m->second];
    snprintf(out, n, "%s a splice: the text of attempt %d (%s) followed by the text of attempt "
             "%d (%s): \"%s\"", verb, a->attempt, rpt__state_label(a, l1, sizeof l1), b->attempt,
             rpt__state_label(b, l2, sizeof l2), s1);
  } else if (m->kind == RPT__ANS_SPLICE) {
    snprintf(out, n, "%s a splice: the text of attempt %d (%s) followed by more: \"%s\"", verb,
             a->attempt, rpt__state_label(a, l1, sizeof l1), s1);
  } else if (m->kind == RPT__ANS_NONE) {
    snprintf(out, n, "%s \"%s\", not an answer fusebox served", verb, s1);
  }
  return out;
}

/* 1 when some attempt of the trace carried answer text. */
int rpt__any_answer_text(const rpt_trace *tr) {
  for (int k = 0; k < tr->narr; k++)
    if (has_text(&tr->arr[k])) return 1;
  return 0;
}

/* "Hello w..." for evidence: at most 24 bytes, not cut inside UTF-8. */
const char *rpt__snippet(const char *s, char *out, size_t n) {
  while (space(*s)) s++;
  size_t len = strlen(s);
  while (len > 0 && space(s[len - 1])) len--;
  size_t cut = len > 24 ? 24 : len;
  while (cut < len && cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80) cut--;
  snprintf(out, n, "%.*s%s", (int)cut, s, cut < len ? "\xE2\x80\xA6" : "");
  return out;
}
