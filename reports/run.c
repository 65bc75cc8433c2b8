/*
 * run.c - a run: the judged scenarios of one `fusebox run`, `exec` or
 * `report`, in the order they were added, with their traces kept for the
 * HTML timelines.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

/* A new, empty run; NULL when out of memory. The caller owns it and releases it with rpt_run_free. */
rpt_run *rpt_run_new(void) { return calloc(1, sizeof(rpt_run)); }

/* Releases what an entry holds and zeroes it. */
void rpt__entry_clear(rpt__entry *e) {
  free(e->name);
  free(e->file);
  free(e->client);
  free(e->trace_path);
  free(e->error);
  rpt_trace_free(e->trace);
  rpt_judgement_free(e->j);
  memset(e, 0, sizeof *e);
}

/* Releases a run with every trace and judgement in it. NULL is a no-op. */
void rpt_run_free(rpt_run *run) {
  if (run == NULL) return;
  for (int i = 0; i < run->n; i++) rpt__entry_clear(&run->e[i]);
  free(run->e);
  free(run);
}

static char *dup_or_null(const char *s, int *oom) {
  if (s == NULL) return NULL;
  char *d = strdup(s);
  if (d == NULL) *oom = 1;
  return d;
}

/* A new zeroed entry at the end of the run, or NULL. */
rpt__entry *rpt__run_push(rpt_run *run) {
  if (run->n >= RPT__MAX_SCENARIOS) return NULL;
  if (run->n == run->cap) {
    int nc = run->cap ? run->cap * 2 : 16;
    rpt__entry *p = realloc(run->e, (size_t)nc * sizeof *p);
    if (p == NULL) return NULL;
    run->e = p;
    run->cap = nc;
  }
  rpt__entry *e = &run->e[run->n];
  memset(e, 0, sizeof *e);
  e->deadline_ms = -1;
  e->scale = 1;
  e->index = -1;
  return e;
}

/* The scaled deadline of a client table, or -1; *oom when out of memory. */
static double deadline_of(const char *client_json, double scale, int *oom) {
  if (client_json == NULL) return -1;
  cJSON *c = rpt__json_parse(client_json, strlen(client_json), oom);
  double d = -1;
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, "deadline");
  if (cJSON_IsNumber(v) && v->valuedouble > 0) d = v->valuedouble * 1000.0 * scale;
  cJSON_Delete(c);
  return d;
}

/*
 * Reads (or takes) the trace, judges it and appends the scenario to the run.
 * On error nothing is appended and err says why.
 */
int rpt_run_add(rpt_run *run, const rpt_input *in, char err[RPT_ERRLEN]) {
  if (run == NULL || in == NULL || err == NULL) {
    if (in) rpt_trace_free(in->trace);
    return RPT_EINVAL;
  }
  err[0] = '\0';
  rpt_trace *tr = in->trace;
  int rc = 0;
  if (tr == NULL) {
    if (in->trace_path == NULL) {
      snprintf(err, RPT_ERRLEN, "no trace given");
      return RPT_EINVAL;
    }
    /* Read for a report: the first arrivals kept whole, every one folded
       (trace_fold.c); a judgement the fold cannot give reads it whole. */
    int keep = in->opts && in->opts->keep_arrivals > 0 ? in->opts->keep_arrivals
                                                        : RPT__KEEP_ARRIVALS;
    rc = rpt__trace_read_keep(in->trace_path, keep, in->expect_json, &tr, err);
    if (rc == 0 && tr->sum && tr->sum->broken) {
      rpt_trace_free(tr);
      tr = NULL;
      rc = rpt_trace_read_file(in->trace_path, &tr, err);
    }
    if (rc) return rc;
  }
  const char *expect = in->expect_json ? in->expect_json : tr->expect_json;
  const char *client = in->client_json ? in->client_json : tr->client_json;
  rpt_judgement *j = NULL;
  rc = rpt_judge(tr, expect, client, in->opts, &j, err);
  if (rc == RPT__NEED_WHOLE) {
    rpt_trace_free(tr);
    tr = NULL;
    if ((rc = rpt_trace_read_file(in->trace_path, &tr, err))) return rc;
    expect = in->expect_json ? in->expect_json : tr->expect_json;
    client = in->client_json ? in->client_json : tr->client_json;
    rc = rpt_judge(tr, expect, client, in->opts, &j, err);
  }
  if (rc) {
    rpt_trace_free(tr);
    return rc;
  }
  rpt__entry *e = rpt__run_push(run);
  if (e == NULL) {
    snprintf(err, RPT_ERRLEN, "run is full or out of memory");
    rpt_trace_free(tr);
    rpt_judgement_free(j);
    return RPT_ENOMEM;
  }
  int oom = 0;
  const char *name = in->name ? in->name : tr->scenario;
  const char *file = in->file ? in->file : tr->file;
  e->name = dup_or_null(name ? name : (in->trace_path ? in->trace_path : "(unnamed)"), &oom);
  e->file = dup_or_null(file, &oom);
  e->client = dup_or_null(in->client, &oom);
  e->trace_path = dup_or_null(in->trace_path, &oom);
  e->trace = tr;
  e->j = j;
  e->wall_ms = in->wall_ms;
  e->scale = (in->opts && in->opts->time_scale > 0) ? in->opts->time_scale : tr->time_scale;
  e->deadline_ms = deadline_of(client, e->scale, &oom);
  run->n++;
  if (oom) {
    rpt__entry_clear(e);
    run->n--;
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  return 0;
}

/*
 * Appends a scenario that could not be played or judged; it counts as one
 * failure. Strings are copied.
 */
int rpt_run_add_error(rpt_run *run, const char *name, const char *file, const char *message) {
  if (run == NULL) return RPT_EINVAL;
  rpt__entry *e = rpt__run_push(run);
  if (e == NULL) return RPT_ENOMEM;
  int oom = 0;
  e->name = dup_or_null(name ? name : (file ? file : "(unnamed)"), &oom);
  e->file = dup_or_null(file, &oom);
  e->error = dup_or_null(message ? message : "error", &oom);
  run->n++;
  if (oom) {
    rpt__entry_clear(e);
    run->n--;
    return RPT_ENOMEM;
  }
  return 0;
}

/*
 * Appends a scenario the client was not asked to play (it declared it cannot):
 * no trace, one n/a verdict named `verdict` with the reason. It is neither a
 * pass nor a failure. Strings are copied.
 */
int rpt_run_add_skipped(rpt_run *run, const char *name, const char *file, const char *client,
                        const char *verdict, const char *reason) {
  if (run == NULL || verdict == NULL) return RPT_EINVAL;
  rpt__entry *e = rpt__run_push(run);
  if (e == NULL) return RPT_ENOMEM;
  int oom = 0;
  e->name = dup_or_null(name ? name : (file ? file : "(unnamed)"), &oom);
  e->file = dup_or_null(file, &oom);
  e->client = dup_or_null(client, &oom);
  e->deadline_ms = -1;
  e->scale = 1;
  run->n++;
  if (oom || rpt_run_add_verdict(run, verdict, RPT_NA, reason ? reason : "skipped") != 0) {
    rpt__entry_clear(e);
    run->n--;
    return RPT_ENOMEM;
  }
  return 0;
}

/* Appends an extra verdict to the last scenario added. Strings are copied. */
int rpt_run_add_verdict(rpt_run *run, const char *name, rpt_status status, const char *evidence) {
  if (run == NULL || run->n == 0 || name == NULL) return RPT_EINVAL;
  rpt__entry *e = &run->e[run->n - 1];
  if (e->j == NULL) {
    e->j = calloc(1, sizeof *e->j);
    if (e->j == NULL) return RPT_ENOMEM;
  }
  return rpt__judgement_add(e->j, name, status, evidence);
}

/* Scenario status word: "error" (not judged), else the judgement's:
   "fail", "pass" or "n/a" (rpt__judgement_status, judgement.c). */
const char *rpt__entry_status(const rpt__entry *e) {
  if (e->error) return "error";
  return rpt__judgement_status(e->j);
}

/* Verdicts passed and judged (skipped ones excluded) of an entry. */
void rpt__entry_counts(const rpt__entry *e, int *passed, int *judged) {
  *passed = *judged = 0;
  for (int i = 0; e->j && i < e->j->n; i++) {
    if (e->j->v[i].status == RPT_SKIP) continue;
    (*judged)++;
    if (e->j->v[i].status == RPT_PASS) (*passed)++;
  }
}

/* The duration shown for an entry, in ms. */
double rpt__entry_time(const rpt__entry *e) {
  if (e->wall_ms > 0) return e->wall_ms;
  return e->trace ? e->trace->t_last : 0;
}

/* Totals over a run. */
void rpt_run_summary(const rpt_run *run, rpt_summary *out) {
  memset(out, 0, sizeof *out);
  for (int i = 0; run && i < run->n; i++) {
    const rpt__entry *e = &run->e[i];
    out->scenarios++;
    out->time_ms += rpt__entry_time(e);
    if (e->trace && !rpt_trace_complete(e->trace)) out->incomplete++;
    for (int k = 0; e->j && k < e->j->n; k++) {
      out->verdicts++;
      if (e->j->v[k].status == RPT_FAIL) out->verdicts_failed++;
      if (e->j->v[k].status == RPT_SKIP) out->verdicts_skipped++;
    }
    const char *st = rpt__entry_status(e);
    if (e->error) out->errors++;
    else if (strcmp(st, "fail") == 0) out->failed++;
    else if (strcmp(st, "n/a") == 0) out->not_applicable++;
    else out->passed++;
  }
}

/* Failed verdicts plus error scenarios: 0 means the run passed. */
int rpt_run_failed(const rpt_run *run) {
  rpt_summary s;
  rpt_run_summary(run, &s);
  return s.verdicts_failed + s.errors;
}

/* Scenarios whose traces hold scenario errors; see reports.h. */
int rpt_run_scenario_errors(const rpt_run *run, const char **first) {
  int n = 0;
  if (first != NULL) *first = NULL;
  for (int i = 0; run != NULL && i < run->n; i++) {
    const rpt_trace *tr = run->e[i].trace;
    if (tr == NULL || tr->nerr == 0) continue;
    if (n++ == 0 && first != NULL) *first = tr->errs[0].message;
  }
  return n;
}

/* The exit status of an external command's account, or -1; *killed set
   when --timeout killed it. */
int rpt__entry_exit(const rpt__entry *e, int *killed) {
  *killed = 0;
  if (e->trace == NULL || e->trace->ncli == 0 || !e->trace->cli[0].external) return -1;
  *killed = e->trace->cli[0].timed_out;
  return e->trace->cli[0].exit_code;
}

/* Requests that reached the server as attempts (effect lookups excluded). */
int rpt__entry_attempts(const rpt__entry *e) { return (int)rpt__trace_posts(e->trace); }

/*
 * The one sentence every report opens with when no request of the whole
 * run reached the scenario; NULL when some did (or nothing was judged).
 */
const char *rpt_run_headline(const rpt_run *run, char *buf, size_t n) {
  int judged = 0, served = 0, unserved = 0;
  const char *first = NULL, *first_path = NULL; /* the first unserved request's method, path */
  for (int i = 0; run && i < run->n; i++) {
    const rpt__entry *e = &run->e[i];
    if (e->trace == NULL || e->j == NULL) continue;
    const rpt_verdict *ex = rpt_judgement_find(e->j, "exercised");
    if (ex && ex->status == RPT_NA) continue; /* expected no request */
    judged++;
    const rpt_trace *tr = e->trace;
    if (rpt__trace_folded(tr)) {
      served += (int)tr->sum->nserved;
      unserved += (int)tr->sum->nunserved;
      if (!first && tr->sum->nunserved) {
        first = tr->sum->first_unserved_method;
        first_path = tr->sum->first_unserved_path;
      }
      continue;
    }
    for (int k = 0; k < tr->narr; k++) {
      const rpt__arrival *a = &tr->arr[k];
      if (a->unserved) {
        unserved++;
        if (!first) {
          first = a->method;
          first_path = a->path;
        }
      } else {
        served++;
      }
    }
  }
  if (judged == 0 || served > 0 || buf == NULL || n == 0) return NULL;
  if (first)
    snprintf(buf, n, "No request reached the scenario: all %d requests went to paths no provider "
             "serves (first %s %.120s); point the client's base URL at the fake provider.",
             unserved, first, first_path ? first_path : "?");
  else
    snprintf(buf, n, "No request reached the scenario: the client sent nothing to the fake "
             "provider.");
  return buf;
}

/* Number of scenarios in a run. */
int rpt_run_count(const rpt_run *run) { return run ? run->n : 0; }

/* Scenario i of a run; RPT_EINVAL when i is out of range. */
int rpt_run_result(const rpt_run *run, int i, rpt_result *out) {
  if (run == NULL || out == NULL || i < 0 || i >= run->n) return RPT_EINVAL;
  const rpt__entry *e = &run->e[i];
  memset(out, 0, sizeof *out);
  out->name = e->name;
  out->file = e->file;
  out->client = e->client;
  out->status = rpt__entry_status(e);
  out->error = e->error;
  out->attempts = rpt__entry_attempts(e);
  out->exit_code = rpt__entry_exit(e, &out->killed);
  for (int k = 0; e->j && k < e->j->n; k++) {
    out->verdicts++;
    if (e->j->v[k].status == RPT_FAIL) out->failed++;
    if (e->j->v[k].status == RPT_NA) out->not_applicable++;
  }
  out->time_ms = rpt__entry_time(e);
  return 0;
}

/* Verdict k of scenario i, or NULL (valid until rpt_run_free). */
const rpt_verdict *rpt_run_verdict(const rpt_run *run, int i, int k) {
  if (run == NULL || i < 0 || i >= run->n) return NULL;
  return rpt_judgement_verdict(run->e[i].j, k);
}

/* Marks run as one shard of a suite; see reports.h. */
int rpt_run_set_shard(rpt_run *run, const rpt_shard *s, const int *index, int n) {
  if (run == NULL || s == NULL || n != run->n || (n > 0 && index == NULL) || s->n < 1 ||
      s->k < 1 || s->k > s->n || s->total < n)
    return RPT_EINVAL;
  run->shard = *s;
  run->shard.set[sizeof run->shard.set - 1] = '\0';
  run->sharded = 1;
  for (int i = 0; i < n; i++) run->e[i].index = index[i];
  return RPT_OK;
}
