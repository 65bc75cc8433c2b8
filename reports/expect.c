/*
 * expect.c - the expectations engine: parses a scenario's `expect` table,
 * hands each key to its verdict family (verdict_*.c) and collects the
 * verdicts. An unknown key or a bad value is an error, never a silent pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

/* The verdict families, in the order verdicts are reported. */
static const struct {
  const char *name;
  rpt__verdict_fn fn;
} families[] = {
    {"attempts", rpt__v_attempts},
    {"max_requests", rpt__v_max_requests},
    {"no_retry_after", rpt__v_no_retry_after},
    {"retry_after_honoured", rpt__v_retry_after},
    {"backoff", rpt__v_backoff},
    {"within_deadline", rpt__v_within_deadline},
    {"herd", rpt__v_herd},
    {"outcome", rpt__v_outcome},
    {"side_effects", rpt__v_side_effects},
    {"no_stream_splice", rpt__v_no_stream_splice},
    {"cost", rpt__v_cost},
    {"profile", rpt__v_profile},
    {"exercised", rpt__v_exercised}, /* a declaration: judged with `served` below */
    {"tool_integrity", rpt__v_tool_integrity},
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

/* --------------------------------------------------- classification */

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

/* -------------------------------------------------------- judgement */

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
  double tol_ms = o.tol_ms > 0 ? o.tol_ms : RPT__DEFAULT_TOL_MS;
  double slack = o.slack_ms > 0 ? o.slack_ms : (o.slack_ms < 0 ? 0 : RPT__DEFAULT_SLACK_MS);
  rpt__ctx c = {.tr = tr, .scale = scale, .tol = tol_ms * scale + slack, .slack = slack,
                .client = client, .j = j, .err = err};
  rc = scenario_errors(&c);
  if (rc == 0) rc = run_families(&c, expect);
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
    rpt__ctx c = {.tr = NULL, .scale = 1, .client = client, .err = err};
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
