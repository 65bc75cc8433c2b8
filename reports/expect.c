/*
 * expect.c - the expectations engine: parses a scenario's `expect` table,
 * hands each key to its verdict family (verdict_*.c) and collects the
 * verdicts. An unknown key or a bad value is an error, never a silent pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/suggest.h"
#include "reports/reports_int.h"

/* The verdict families, in the order verdicts are reported, and what each
   is to a client judged on the wire alone (rpt_family_kind, reports.h):
   POLICY unless it holds for any client (BEST) or is always judged (ALWAYS). */
#define POLICY RPT_FAMILY_POLICY
#define BEST RPT_FAMILY_BEST_PRACTICE
#define ALWAYS RPT_FAMILY_ALWAYS
static const struct {
  const char *name;
  rpt__verdict_fn fn;
  rpt_family_kind kind;
} families[] = {
    {"attempts", rpt__v_attempts, POLICY},
    {"max_requests", rpt__v_max_requests, BEST},
    {"no_retry_after", rpt__v_no_retry_after, BEST},
    {"retry_after_honoured", rpt__v_retry_after, BEST},
    {"backoff", rpt__v_backoff, POLICY},
    {"within_deadline", rpt__v_within_deadline, POLICY},
    {"herd", rpt__v_herd, BEST},
    {"outcome", rpt__v_outcome, ALWAYS},
    {"side_effects", rpt__v_side_effects, BEST},
    {"no_stream_splice", rpt__v_no_stream_splice, BEST},
    {"cost", rpt__v_cost, BEST},
    {"profile", rpt__v_profile, POLICY},
    {"exercised", rpt__v_exercised, ALWAYS}, /* a declaration: judged with `served` below */
    {"tool_integrity", rpt__v_tool_integrity, BEST},
    {"point", rpt__v_point, ALWAYS}, /* last: it reads the verdicts above */
};
#undef POLICY
#undef BEST
#undef ALWAYS
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

/* --------------------------------------------------- classification */

/* The number of verdict families; see reports.h. */
int rpt_expect_nfamilies(void) { return NFAMILIES; }

/* Family i's expect key, or NULL; see reports.h. */
const char *rpt_expect_family(int i) { return i >= 0 && i < NFAMILIES ? families[i].name : NULL; }

/* What family i is to a client judged on the wire alone; see reports.h. */
rpt_family_kind rpt_expect_best_practice(int i) {
  return i >= 0 && i < NFAMILIES ? families[i].kind : RPT_FAMILY_POLICY;
}

/* What the family keyed key is (POLICY for an unknown key); see reports.h. */
rpt_family_kind rpt_expect_kind_of(const char *key) {
  for (int i = 0; key && i < NFAMILIES; i++)
    if (strcmp(families[i].name, key) == 0) return families[i].kind;
  return RPT_FAMILY_POLICY;
}

/* The best-practice families' keys, ", " between; see reports.h. */
size_t rpt_expect_best_practice_list(char *out, size_t n) {
  size_t len = 0;
  if (out && n) out[0] = '\0';
  for (int i = 0; i < NFAMILIES; i++) {
    if (families[i].kind != RPT_FAMILY_BEST_PRACTICE) continue;
    int w = snprintf(out && len < n ? out + len : NULL, out && len < n ? n - len : 0, "%s%s",
                     len ? ", " : "", families[i].name);
    if (w > 0) len += (size_t)w;
  }
  return len;
}

/* -------------------------------------------------------- judgement */

/*
 * An empty Lua table may arrive as [] rather than {}: both mean an empty
 * expect table. Anything else must be an object.
 */
static int parse_table(const char *json, const char *what, cJSON **out, char *err) {
  *out = NULL;
  if (json == NULL) return 0;
  int oom = 0;
  cJSON *t = rpt__json_parse(json, strlen(json), &oom);
  if (t == NULL && oom) {
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  if (t == NULL) {
    snprintf(err, RPT_ERRLEN, "%s table is not valid JSON", what);
    return RPT_EEXPECT;
  }
  if (cJSON_IsArray(t) && cJSON_GetArraySize(t) == 0) {
    cJSON_Delete(t);
    t = cJSON_CreateObject();
    if (t == NULL) return RPT_ENOMEM;
  }
  if (!cJSON_IsObject(t)) {
    cJSON_Delete(t);
    snprintf(err, RPT_ERRLEN, "%s table must be a JSON object", what);
    return RPT_EEXPECT;
  }
  *out = t;
  return 0;
}

static int family_of(const char *key) {
  for (int i = 0; i < NFAMILIES; i++)
    if (strcmp(families[i].name, key) == 0) return i;
  return -1;
}

/* Checks every key is known and appears once. */
static int check_expect_keys(const cJSON *expect, char *err) {
  const cJSON *it;
  cJSON_ArrayForEach(it, expect) {
    const char *k = it->string ? it->string : "";
    if (family_of(k) < 0) {
      const char *names[NFAMILIES + 1];
      for (int i = 0; i < NFAMILIES; i++) names[i] = families[i].name;
      names[NFAMILIES] = NULL;
      const char *near = fb_suggest(k, names, NULL);
      if (near != NULL) {
        snprintf(err, RPT_ERRLEN, "expect.%.40s: unknown expectation (did you mean '%s'?)", k,
                 near);
        return RPT_EEXPECT;
      }
      char known[RPT_ERRLEN] = "";
      size_t off = 0;
      for (int i = 0; i < NFAMILIES && off < sizeof known; i++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? ", " : "",
                                families[i].name);
      snprintf(err, RPT_ERRLEN, "expect.%.40s: unknown expectation (known: %.190s)", k, known);
      return RPT_EEXPECT;
    }
    for (const cJSON *o = it->next; o; o = o->next)
      if (o->string && strcmp(o->string, k) == 0) {
        snprintf(err, RPT_ERRLEN, "expect.%.40s: given twice", k);
        return RPT_EEXPECT;
      }
  }
  return 0;
}

/* Runs every family present in expect, in the fixed order. */
static int run_families(rpt__ctx *c, const cJSON *expect) {
  for (int i = 0; i < NFAMILIES; i++) {
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(expect, families[i].name);
    if (val == NULL) continue;
    int rc = families[i].fn(c, families[i].name, val);
    if (rc) return rc;
  }
  return 0;
}

/* A scenario that failed at run time: its verdicts mean little; say so. */
static int scenario_errors(rpt__ctx *c) {
  const rpt_trace *tr = c->tr;
  if (tr->nerr == 0) return 0;
  return rpt__verdict_add(c, "scenario_ran", RPT_FAIL,
                          "%d scenario error%s at run time, first at %.0f ms: %s", tr->nerr,
                          tr->nerr == 1 ? "" : "s", tr->errs[0].t, tr->errs[0].message);
}

/* The families judged from a folded trace's summary (trace_fold.c). */
static const char *const FOLDED[] = {"attempts",         "max_requests", "no_retry_after",
                                     "retry_after_honoured", "herd",   "no_stream_splice",
                                     "exercised",        "point",        NULL};

/*
 * 1 when every verdict of this judgement can be told from a folded trace's
 * summary: only FOLDED families (herd and no_retry_after folded for the
 * table's own values), no client account, effect or scenario
 * error (their verdicts read attempts' texts and ledgers), the trace's own
 * time scale (the worst Retry-After gap was folded at it), no concurrency
 * to measure, and a fold that did not break.
 */
static int fold_judgeable(const rpt_trace *tr, const cJSON *expect, const cJSON *client,
                          double scale) {
  if (tr->sum == NULL || tr->sum->broken || tr->ncli || tr->neff || tr->nerr) return 0;
  if (scale != tr->time_scale) return 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, expect) {
    int ok = 0;
    for (int i = 0; FOLDED[i]; i++) ok |= it->string && strcmp(it->string, FOLDED[i]) == 0;
    if (!ok) return 0;
  }
  /* herd and no_retry_after were folded for the table's values: the same. */
  const cJSON *herd = cJSON_GetObjectItemCaseSensitive(expect, "herd");
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(herd, "window");
  if (herd && !(tr->sum->herd_on && cJSON_IsNumber(win) &&
                win->valuedouble * 1000.0 * scale == tr->sum->herd_w))
    return 0;
  const cJSON *nra = cJSON_GetObjectItemCaseSensitive(expect, "no_retry_after");
  rpt__stop_set stops;
  if (nra && !(tr->sum->nra_on && rpt__stop_set_read(nra, &stops) == 0 &&
               memcmp(&stops, &tr->sum->nra_stops, sizeof stops) == 0))
    return 0;
  const cJSON *conc = cJSON_GetObjectItemCaseSensitive(client, "concurrency");
  if (cJSON_IsNumber(conc) && conc->valuedouble > 1) return 0;
  const cJSON *ex = cJSON_GetObjectItemCaseSensitive(expect, "exercised");
  cJSON_ArrayForEach(it, ex) {
    if (cJSON_IsString(it) && strcmp(it->valuestring, "concurrency") == 0) return 0;
  }
  return 1;
}

/*
 * Checks every expectation against the trace; see reports.h. The caller
 * owns *out and releases it with rpt_judgement_free.
 */
int rpt_judge(const rpt_trace *tr, const char *expect_json, const char *client_json,
              const rpt_opts *opts, rpt_judgement **out, char err[RPT_ERRLEN]) {
  if (out) *out = NULL;
  if (tr == NULL || out == NULL || err == NULL) return RPT_EINVAL;
  err[0] = '\0';
  if (expect_json == NULL) {
    snprintf(err, RPT_ERRLEN, "%s: no expect table (none given, none in the trace)",
             tr->path ? tr->path : "trace");
    return RPT_EEXPECT;
  }
  cJSON *expect = NULL, *client = NULL;
  rpt_judgement *j = NULL;
  int rc = parse_table(expect_json, "expect", &expect, err);
  if (rc == 0) rc = parse_table(client_json, "client", &client, err);
  if (rc == 0) rc = check_expect_keys(expect, err);
  if (rc) goto out;
  j = calloc(1, sizeof *j);
  if (j == NULL) {
    rc = RPT_ENOMEM;
    snprintf(err, RPT_ERRLEN, "out of memory");
    goto out;
  }
  rpt_opts o = opts ? *opts : (rpt_opts){0};
  double scale = o.time_scale > 0 ? o.time_scale : tr->time_scale;
  if (rpt__trace_folded(tr) && !fold_judgeable(tr, expect, client, scale)) {
    rc = RPT__NEED_WHOLE; /* rpt_run_add reads it whole */
    rpt_judgement_free(j);
    j = NULL;
    goto out;
  }
  double tol_ms = o.tol_ms > 0 ? o.tol_ms : RPT__DEFAULT_TOL_MS;
  double slack = o.slack_ms > 0 ? o.slack_ms : (o.slack_ms < 0 ? 0 : RPT__DEFAULT_SLACK_MS);
  rpt__ctx c = {.tr = tr, .scale = scale, .tol = tol_ms * scale + slack, .slack = slack,
                .client = client, .expect = expect, .j = j, .err = err};
  rc = scenario_errors(&c);
  if (rc == 0) rc = run_families(&c, expect);
  if (rc == 0) rc = rpt__answer_verdict(&c, expect); /* every judgement: verdict_answer.c */
  if (rc == 0) rc = rpt__scenario_verdicts(&c, expect);
  if (rc == 0 && j->oom) rc = RPT_ENOMEM;
  if (rc) {
    rpt_judgement_free(j);
    j = NULL;
  }
out:
  cJSON_Delete(expect);
  cJSON_Delete(client);
  *out = j;
  return rc;
}

/*
 * Validates an expect table without a trace: unknown keys and bad values
 * give RPT_EEXPECT with the reason in err.
 */
int rpt_expect_check(const char *expect_json, const char *client_json, char err[RPT_ERRLEN]) {
  if (err == NULL) return RPT_EINVAL;
  err[0] = '\0';
  if (expect_json == NULL) return 0;
  cJSON *expect = NULL, *client = NULL;
  int rc = parse_table(expect_json, "expect", &expect, err);
  if (rc == 0) rc = parse_table(client_json, "client", &client, err);
  if (rc == 0) rc = check_expect_keys(expect, err);
  if (rc == 0) {
    rpt__ctx c = {.tr = NULL, .scale = 1, .client = client, .expect = expect, .err = err};
    rc = run_families(&c, expect);
  }
  cJSON_Delete(expect);
  cJSON_Delete(client);
  return rc;
}

/*
 * Reads the trace at path and judges it; NULL tables fall back to the
 * trace's own. The caller owns *out and releases it with rpt_judgement_free.
 */
int rpt_judge_trace_file(const char *path, const char *expect_json, const char *client_json,
                         const rpt_opts *opts, rpt_judgement **out, char err[RPT_ERRLEN]) {
  if (out) *out = NULL;
  if (path == NULL || out == NULL || err == NULL) return RPT_EINVAL;
  rpt_trace *tr = NULL;
  int rc = rpt_trace_read_file(path, &tr, err);
  if (rc) return rc;
  if (expect_json == NULL) expect_json = tr->expect_json;
  if (client_json == NULL) client_json = tr->client_json;
  rc = rpt_judge(tr, expect_json, client_json, opts, out, err);
  rpt_trace_free(tr);
  return rc;
}

