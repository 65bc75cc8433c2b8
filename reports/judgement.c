/*
 * judgement.c - what every verdict family builds with: adding a verdict,
 * the error for a bad value, the checks of an expect value, the class of an
 * arrival, and the judgement's accessors. expect.c hands keys to the
 * families (verdict_*.c); they and expect.c call this file, and nothing here
 * calls back into them.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

/*
 * 1 when the attempt's response was a permanent failure: 400, 401, 402,
 * 403, 404, 413, 422, or a 429 whose recorded error code is
 * insufficient_quota.
 */
int rpt__arrival_permanent(const rpt__arrival *a) {
  switch (a->status) {
  case 400: case 401: case 402: case 403: case 404: case 413: case 422:
    return 1;
  case 429:
    return a->code && strcmp(a->code, "insufficient_quota") == 0;
  default:
    return 0;
  }
}

/*
 * How an attempt ended, as a colour class for people: "ok", "transient",
 * "permanent", "shape", "lost", "error" or "open".
 */
const char *rpt__arrival_class(const rpt__arrival *a) {
  if (!a->has_end) return "open";
  const char *how = a->how ? a->how : "complete";
  if (strcmp(how, "error") == 0) return "error";
  if (strcmp(how, "complete") != 0 || a->stalled) return "lost";
  if (rpt__arrival_permanent(a)) return "permanent";
  if (a->step && (strcmp(a->step, "truncate") == 0 || strcmp(a->step, "garbage") == 0))
    return "shape";
  if (a->status >= 200 && a->status < 300) return "ok";
  if (a->status == 0) return "lost";
  return "transient";
}

/* Adds a verdict to a judgement directly (copies strings). */
int rpt__judgement_add(rpt_judgement *j, const char *name, rpt_status st,
                       const char *evidence) {
  if (j->n >= RPT__MAX_VERDICTS) return RPT_ETOOBIG;
  int oom = 0;
  rpt_verdict *v = &j->v[j->n];
  v->name = rpt__arena_strdup(&j->arena, name ? name : "?", &oom);
  v->evidence = rpt__arena_strdup(&j->arena, evidence ? evidence : "", &oom);
  v->status = st;
  if (oom) {
    j->oom = 1;
    return RPT_ENOMEM;
  }
  j->n++;
  return 0;
}

/* Adds a verdict with formatted evidence to c->j. Returns 0 or an error code. */
int rpt__verdict_add(rpt__ctx *c, const char *name, rpt_status st,
                     const char *fmt, ...) {
  char ev[RPT__EVIDENCE_MAX];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(ev, sizeof ev, fmt, ap);
  va_end(ap);
  if (n >= (int)sizeof ev) memcpy(ev + sizeof ev - 4, "\xE2\x80\xA6", 4);
  int rc = rpt__judgement_add(c->j, name, st, ev);
  if (rc) snprintf(c->err, RPT_ERRLEN, "%s: cannot record verdict: %s", name, rpt_strerror(rc));
  return rc;
}

/* Sets c->err to "expect.NAME: msg" and returns RPT_EEXPECT. Every message
   about the table starts with the dotted path of the offending key, so the
   caller can name its line in the scenario file. */
int rpt__bad_value(rpt__ctx *c, const char *name, const char *fmt, ...) {
  char msg[RPT_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(c->err, RPT_ERRLEN, "expect.%.40s: %.200s", name, msg);
  return RPT_EEXPECT;
}

/* 1 in *out when val is `true`, 0 when `false`, else an error. */
int rpt__want_bool(rpt__ctx *c, const char *name, const cJSON *val, int *out) {
  if (!cJSON_IsBool(val)) return rpt__bad_value(c, name, "expected true or false");
  *out = cJSON_IsTrue(val);
  return 0;
}

/* Checks that every key of obj is in the NULL-terminated list allowed. */
int rpt__check_keys(rpt__ctx *c, const char *name, const cJSON *obj,
                    const char *const *allowed) {
  const cJSON *it;
  cJSON_ArrayForEach(it, obj) {
    int ok = 0;
    for (int i = 0; allowed[i]; i++)
      if (it->string && strcmp(it->string, allowed[i]) == 0) ok = 1;
    if (!ok) {
      snprintf(c->err, RPT_ERRLEN, "expect.%.40s.%.60s: unknown key", name,
               it->string ? it->string : "?");
      return RPT_EEXPECT;
    }
  }
  return 0;
}

/* Reads obj.key as a number >= 0 into *out (absent: *present = 0). */
int rpt__get_nonneg(rpt__ctx *c, const char *name, const cJSON *obj,
                    const char *key, double *out, int *present) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  *present = 0;
  if (v == NULL) return 0;
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || !isfinite(v->valuedouble)) {
    snprintf(c->err, RPT_ERRLEN, "expect.%.40s.%.40s: must be a number >= 0", name, key);
    return RPT_EEXPECT;
  }
  *out = v->valuedouble;
  *present = 1;
  return 0;
}

/* Number of verdicts. */
int rpt_judgement_count(const rpt_judgement *j) { return j ? j->n : 0; }

/* Verdict i, or NULL; valid until rpt_judgement_free. */
const rpt_verdict *rpt_judgement_verdict(const rpt_judgement *j, int i) {
  if (j == NULL || i < 0 || i >= j->n) return NULL;
  return &j->v[i];
}

/* Number of failed verdicts. */
int rpt_judgement_failed(const rpt_judgement *j) {
  int n = 0;
  for (int i = 0; j && i < j->n; i++)
    if (j->v[i].status == RPT_FAIL) n++;
  return n;
}

/* The verdict named name, or NULL; valid until rpt_judgement_free. */
const rpt_verdict *rpt_judgement_find(const rpt_judgement *j, const char *name) {
  for (int i = 0; j && name && i < j->n; i++)
    if (strcmp(j->v[i].name, name) == 0) return &j->v[i];
  return NULL;
}

/* Releases a judgement. NULL is a no-op. */
void rpt_judgement_free(rpt_judgement *j) {
  if (j == NULL) return;
  rpt__arena_free(&j->arena);
  free(j);
}

/* ------------------------------------------------------------ point */

/* The verdicts a scenario may exist for (expect.point), with what a reader
   calls them and, for the ones `fusebox exec` leaves to the client's own
   policy, how to have them judged. */
static const struct {
  const char *name, *what, *how;
  int by_profile; /* a client profile's verdict judges it too (attempts, waits) */
} POINTS[] = {
    {"attempts", "the attempt count", "pass --profile FILE (the client's policy) to judge it", 1},
    {"max_requests", "the requests sent", NULL, 0},
    {"no_retry_after", "no retry after a permanent error", NULL, 0},
    {"retry_after_honoured", "Retry-After", NULL, 0},
    {"backoff", "the backoff", "pass --profile FILE (the client's policy) to judge it", 1},
    {"within_deadline", "the deadline",
     "pass --deadline scenario (or --deadline S) to hold the client to it", 0},
    {"herd", "the herd", NULL, 0},
    {"outcome", "the outcome", NULL, 0},
    {"side_effects", "the side effects", NULL, 0},
    {"no_stream_splice", "stream splicing", NULL, 0},
    {"cost", "the cost", NULL, 0},
    {"tool_integrity", "the tool calls", NULL, 0},
};
#define NPOINTS ((int)(sizeof POINTS / sizeof POINTS[0]))

static int point_index(const char *s) {
  for (int i = 0; i < NPOINTS; i++)
    if (strcmp(POINTS[i].name, s) == 0) return i;
  return -1;
}

/* Levenshtein distance of a and b, both under 64 bytes (else 99). */
static int distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la >= 64 || lb >= 64) return 99;
  int row[65];
  for (size_t k = 0; k <= lb; k++) row[k] = (int)k;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t k = 1; k <= lb; k++) {
      int up = row[k];
      int best = diag + (a[i - 1] != b[k - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[k - 1] + 1 < best) best = row[k - 1] + 1;
      row[k] = best;
      diag = up;
    }
  }
  return row[lb];
}

/* The point name closest to s when it is a likely typo, else NULL. */
static const char *near_point(const char *s) {
  const char *best = NULL;
  int bd = 4;
  for (int i = 0; i < NPOINTS; i++) {
    int d = distance(s, POINTS[i].name);
    if (d < bd) {
      bd = d;
      best = POINTS[i].name;
    }
  }
  return best;
}

/*
 * expect.point = { "within_deadline", ... }: the verdicts the scenario
 * exists for. Validated against the expect table (each must be one of its
 * keys); when judging, adds an n/a `point` verdict saying what would judge
 * the scenario unless one of them passed (a failed one fails the scenario
 * anyway). Runs after every other family, so their verdicts are in c->j.
 */
int rpt__v_point(rpt__ctx *c, const char *name, const cJSON *val) {
  if (!cJSON_IsArray(val) || cJSON_GetArraySize(val) == 0)
    return rpt__bad_value(c, name, "expected a list of verdict names, e.g. { \"within_deadline\" }");
  const cJSON *it;
  cJSON_ArrayForEach(it, val) {
    if (!cJSON_IsString(it)) return rpt__bad_value(c, name, "expected verdict names (strings)");
    const char *s = it->valuestring;
    if (point_index(s) < 0) {
      const char *near = near_point(s);
      if (near)
        return rpt__bad_value(c, name, "unknown verdict '%.40s' (did you mean '%s'?)", s, near);
      return rpt__bad_value(c, name, "unknown verdict '%.40s' (a key of the expect table: "
                            "attempts, outcome, within_deadline, ...)", s);
    }
    for (const cJSON *o = it->next; o; o = o->next)
      if (cJSON_IsString(o) && strcmp(o->valuestring, s) == 0)
        return rpt__bad_value(c, name, "'%.40s' given twice", s);
    /* Validating a scenario: each point is judged by its own table. */
    if (c->tr == NULL && c->expect && !cJSON_GetObjectItemCaseSensitive(c->expect, s))
      return rpt__bad_value(c, name, "'%.40s' is not a key of this expect table", s);
  }
  if (c->tr == NULL) return 0;
  const rpt_verdict *na = NULL; /* the first point verdict that was n/a */
  int first = -1, absent = -1, na_k = -1;
  cJSON_ArrayForEach(it, val) {
    int k = point_index(it->valuestring);
    const rpt_verdict *v = rpt_judgement_find(c->j, it->valuestring);
    /* Not in the table (exec leaves it to the client's policy): a profile
       judges attempts and waits against what the client promises. */
    if (v == NULL && POINTS[k].by_profile) v = rpt_judgement_find(c->j, "profile");
    if (v && v->status != RPT_NA) return 0; /* judged: pass, or a failure */
    if (first < 0) first = k;
    if (v == NULL && absent < 0) absent = k;
    if (v && na == NULL) {
      na = v;
      na_k = k;
    }
  }
  /* Not judged: say what the scenario is about and what would judge it. */
  if (absent >= 0 && POINTS[absent].how)
    return rpt__verdict_add(c, name, RPT_NA, "not judged: this scenario tests %s (%s); %s",
                            POINTS[absent].what, POINTS[absent].name, POINTS[absent].how);
  if (na)
    return rpt__verdict_add(c, name, RPT_NA, "not judged: this scenario tests %s, %s n/a here: %s",
                            POINTS[na_k].what, na->name, na->evidence);
  return rpt__verdict_add(c, name, RPT_NA, "not judged: this scenario tests %s (%s), which this "
                          "run does not judge", POINTS[first].what, POINTS[first].name);
}

/*
 * Scenario status word: "fail" (a verdict failed), "pass" (exercised held,
 * a verdict beyond served / exercised applied, and the scenario's point was
 * judged) or "n/a" (nothing failed, but no evidence either way).
 */
const char *rpt__judgement_status(const rpt_judgement *j) {
  if (rpt_judgement_failed(j)) return "fail";
  int applied = 0, exercised = -1, point = 0;
  for (int i = 0; j && i < j->n; i++) {
    const rpt_verdict *v = &j->v[i];
    if (strcmp(v->name, "exercised") == 0) exercised = v->status == RPT_PASS;
    else if (strcmp(v->name, "point") == 0) point = v->status != RPT_PASS;
    else if (!rpt__verdict_is_meta(v->name) && v->status != RPT_NA) applied++;
  }
  return applied > 0 && exercised != 0 && !point ? "pass" : "n/a";
}
