/*
 * report_merge.c - joining JSON reports (`fusebox report --merge`): the
 * shards of one suite, played on several machines, become the report of the
 * whole suite. Each scenario keeps the verdicts its report recorded; its
 * attempts, effects and calls are turned back into a trace so every writer
 * (terminal, JUnit, HTML timelines, JSON) shows it as a run would.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

#define MERGE_MAX_FILE (256u << 20) /* bytes of one JSON report */

/* One report being merged. */
typedef struct merge_in {
  const char *path;
  cJSON *doc;
  const cJSON *results;
  int sharded;
  rpt_shard shard;
} merge_in;

static const char *str_of(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int num_of(const cJSON *o, const char *k, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v)) return 0;
  *out = v->valuedouble;
  return 1;
}

/* Sets the rule merged strings are read through; see reports.h. */
void rpt_run_set_redact(rpt_run *run, rpt_redact_fn fn) {
  if (run != NULL) run->redact = fn;
}

/* Passes every string value under j through fn, in place. depth bounds the
   walk (cJSON's own nesting limit is 1000). RPT_ENOMEM when fn failed. */
static int redact_tree(cJSON *j, rpt_redact_fn fn, int depth) {
  if (depth > 1000) return RPT_OK;
  for (cJSON *c = j; c != NULL; c = c->next) {
    if (cJSON_IsString(c) && c->valuestring != NULL) {
      char *r = fn(c->valuestring, strlen(c->valuestring));
      if (r == NULL) return RPT_ENOMEM;
      if (strcmp(r, c->valuestring) != 0 && cJSON_SetValuestring(c, r) == NULL) {
        free(r);
        return RPT_ENOMEM;
      }
      free(r);
    } else if (c->child != NULL && redact_tree(c->child, fn, depth + 1) != RPT_OK) {
      return RPT_ENOMEM;
    }
  }
  return RPT_OK;
}

/* Parses one report and reads its shard block. */
static int load(merge_in *in, char err[RPT_ERRLEN]) {
  char *text = NULL;
  size_t len = 0;
  int rc = rpt__read_file(in->path, MERGE_MAX_FILE, &text, &len, err);
  if (rc) return rc;
  int oom = 0;
  in->doc = rpt__json_parse(text, len, &oom);
  if (in->doc == NULL) {
    if (oom) {
      snprintf(err, RPT_ERRLEN, "%s: out of memory", in->path);
      free(text);
      return RPT_ENOMEM;
    }
    /* Where cJSON stopped: line and column. */
    const char *at = cJSON_GetErrorPtr();
    int line = 1, col = 1;
    if (at && at >= text && at <= text + len)
      for (const char *p = text; p < at; p++) {
        if (*p == '\n') {
          line++;
          col = 1;
        } else {
          col++;
        }
      }
    snprintf(err, RPT_ERRLEN, "%s:%d:%d: not JSON (a fusebox JSON report is expected)", in->path,
             line, col);
    free(text);
    return RPT_ETRACE;
  }
  free(text);
  double v;
  in->results = cJSON_GetObjectItemCaseSensitive(in->doc, "results");
  if (!cJSON_IsObject(in->doc) || !num_of(in->doc, "fusebox_report", &v) || v != 1 ||
      !cJSON_IsArray(in->results)) {
    snprintf(err, RPT_ERRLEN,
             "%s: not a fusebox JSON report (no \"fusebox_report\": 1 and \"results\"; "
             "write one with run --json)", in->path);
    return RPT_ETRACE;
  }
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(in->doc, "shard");
  if (sh == NULL || cJSON_IsNull(sh)) return RPT_OK;
  double k, n, total;
  const char *set = str_of(sh, "set");
  if (!cJSON_IsObject(sh) || !num_of(sh, "k", &k) || !num_of(sh, "n", &n) ||
      !num_of(sh, "total", &total) || set == NULL || strlen(set) >= sizeof in->shard.set ||
      !(n >= 1 && n <= 1e6 && k >= 1 && k <= n && total >= 0 && total <= RPT__MAX_SCENARIOS) ||
      k != (int)k || n != (int)n || total != (int)total) {
    snprintf(err, RPT_ERRLEN, "%s: a bad \"shard\" block (k, n, total, set)", in->path);
    return RPT_ETRACE;
  }
  in->sharded = 1;
  in->shard.k = (int)k;
  in->shard.n = (int)n;
  in->shard.total = (int)total;
  snprintf(in->shard.set, sizeof in->shard.set, "%s", set);
  return RPT_OK;
}

/* The inputs belong together: one suite's shards, each once, none missing;
   or only unsharded reports. */
static int check_shards(const merge_in *in, int n, char err[RPT_ERRLEN]) {
  for (int i = 1; i < n; i++)
    if (in[i].sharded != in[0].sharded) {
      const merge_in *s = in[i].sharded ? &in[i] : &in[0], *u = in[i].sharded ? &in[0] : &in[i];
      snprintf(err, RPT_ERRLEN, "%s is shard %d/%d of a suite but %s is not a shard: "
               "merge the reports of one `run --shard K/N` suite", s->path, s->shard.k,
               s->shard.n, u->path);
      return RPT_ETRACE;
    }
  if (!in[0].sharded) return RPT_OK;
  const rpt_shard *a = &in[0].shard;
  for (int i = 1; i < n; i++) {
    const rpt_shard *b = &in[i].shard;
    if (strcmp(a->set, b->set) != 0 || a->total != b->total || a->n != b->n) {
      snprintf(err, RPT_ERRLEN, "%s (shard %d/%d of %d scenarios, set %s) and %s (shard %d/%d "
               "of %d, set %s) are shards of different suites", in[0].path, a->k, a->n,
               a->total, a->set, in[i].path, b->k, b->n, b->total, b->set);
      return RPT_ETRACE;
    }
    for (int j = 0; j < i; j++)
      if (in[j].shard.k == b->k) {
        snprintf(err, RPT_ERRLEN, "%s and %s are both shard %d/%d: a shard given twice",
                 in[j].path, in[i].path, b->k, b->n);
        return RPT_ETRACE;
      }
  }
  if (n < a->n) {
    for (int k = 1; k <= a->n; k++) {
      int seen = 0;
      for (int i = 0; i < n; i++) seen |= in[i].shard.k == k;
      if (!seen) {
        snprintf(err, RPT_ERRLEN, "shard %d/%d is missing (%d of %d reports given): a merged "
                 "report must hold the whole suite", k, a->n, n, a->n);
        return RPT_ETRACE;
      }
    }
  }
  return RPT_OK;
}

/* ------------------------------------------------- a trace rebuilt */

/* Appends one event (consumed) as a line to b. */
static int put_event(rpt__buf *b, cJSON *ev) {
  char *s = ev ? cJSON_PrintUnformatted(ev) : NULL;
  cJSON_Delete(ev);
  if (s == NULL) return RPT_ENOMEM;
  int rc = rpt__buf_add(b, s, strlen(s)) || rpt__buf_add(b, "\n", 1) ? RPT_ETOOBIG : 0;
  cJSON_free(s);
  return b->oom ? RPT_ENOMEM : rc;
}

/* A new event object of kind ev at time t, or NULL. */
static cJSON *event(const char *ev, double t) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  if (!cJSON_AddStringToObject(o, "ev", ev) || !cJSON_AddNumberToObject(o, "t", t)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

/* Copies key k of from into to, when present (NULL values included). */
static int copy_key(cJSON *to, const cJSON *from, const char *k, const char *as) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, k);
  if (v == NULL) return 0;
  cJSON *d = cJSON_Duplicate(v, 1);
  if (d == NULL || !cJSON_AddItemToObject(to, as ? as : k, d)) {
    cJSON_Delete(d);
    return -1;
  }
  return 0;
}

/* The trace lines one result's attempts, effects and calls stand for. */
static int rebuild_trace(const cJSON *r, rpt__buf *b) {
  int bad = 0;
  double scale = 1, t_end = 0, v;
  if (num_of(r, "time_scale", &v) && v > 0) scale = v;
  cJSON *s = event("session", 0);
  if (s == NULL) return RPT_ENOMEM;
  bad |= copy_key(s, r, "name", "scenario") | copy_key(s, r, "file", NULL);
  if (!cJSON_AddNumberToObject(s, "time_scale", scale)) bad = 1;
  if (bad) {
    cJSON_Delete(s);
    return RPT_ENOMEM;
  }
  int rc = put_event(b, s);
  const cJSON *x;
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r, "attempts")) {
    if (rc) break;
    double ta = 0, te;
    num_of(x, "arrive_ms", &ta);
    cJSON *a = event("arrive", ta);
    if (a == NULL) return RPT_ENOMEM;
    const char *prov = str_of(x, "provider");
    if (copy_key(a, x, "id", NULL) || copy_key(a, x, "key", NULL) ||
        copy_key(a, x, "attempt", NULL) || copy_key(a, x, "method", NULL) ||
        copy_key(a, x, "path", NULL) || copy_key(a, x, "dialect", NULL) ||
        (prov && strcmp(prov, "(none)") == 0 ? !cJSON_AddNullToObject(a, "provider")
                                             : copy_key(a, x, "provider", NULL)) ||
        copy_key(a, x, "tokens_in", NULL)) {
      cJSON_Delete(a);
      return RPT_ENOMEM;
    }
    if (ta > t_end) t_end = ta;
    rc = put_event(b, a);
    if (rc || !num_of(x, "end_ms", &te)) continue;
    cJSON *e = event("end", te);
    if (e == NULL) return RPT_ENOMEM;
    if (copy_key(e, x, "id", NULL) || copy_key(e, x, "step", NULL) ||
        copy_key(e, x, "status", NULL) || copy_key(e, x, "how", NULL) ||
        copy_key(e, x, "state", NULL) || copy_key(e, x, "error_event", NULL) ||
        copy_key(e, x, "retry_after_ms", NULL) || copy_key(e, x, "tokens_in", NULL) ||
        copy_key(e, x, "tokens_out", NULL) || copy_key(e, x, "code", NULL) ||
        copy_key(e, x, "stalled", NULL)) {
      cJSON_Delete(e);
      return RPT_ENOMEM;
    }
    if (te > t_end) t_end = te;
    rc = put_event(b, e);
  }
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(r, "effects")) {
    if (rc) break;
    double t = 0;
    num_of(x, "t_ms", &t);
    cJSON *e = event("effect", t);
    if (e == NULL || copy_key(e, x, "id", NULL) || copy_key(e, x, "name", NULL) ||
        copy_key(e, x, "key", NULL) || copy_key(e, x, "action", NULL) ||
        copy_key(e, x, "count", NULL)) {
      cJSON_Delete(e);
      return RPT_ENOMEM;
    }
    rc = put_event(b, e);
  }
  /* The calls; an external command's exit status rides on the first. */
  double code = 0;
  int has_exit = num_of(r, "exit_code", &code);
  const cJSON *calls = cJSON_GetObjectItemCaseSensitive(r, "calls");
  int ncalls = cJSON_IsArray(calls) ? cJSON_GetArraySize(calls) : 0;
  for (int i = 0; rc == 0 && i < (ncalls ? ncalls : has_exit); i++) {
    x = ncalls ? cJSON_GetArrayItem(calls, i) : NULL;
    double n = 0;
    cJSON *c = event("client", t_end);
    if (c == NULL) return RPT_ENOMEM;
    cJSON *att = cJSON_AddArrayToObject(c, "attempts");
    int bad2 = att == NULL;
    num_of(x, "attempts", &n);
    for (int k = 0; !bad2 && k < (int)n && k < 100000; k++)
      bad2 = !cJSON_AddItemToArray(att, cJSON_CreateObject());
    bad2 |= copy_key(c, x, "call", NULL) | copy_key(c, x, "reason", NULL) |
            copy_key(c, x, "total_ms", NULL) | copy_key(c, x, "tokens", NULL) |
            copy_key(c, x, "error_line", NULL);
    if (x && str_of(x, "outcome")) bad2 |= copy_key(c, x, "outcome", NULL);
    else bad2 |= !cJSON_AddStringToObject(c, "outcome", "exited");
    if (i == 0 && has_exit) {
      bad2 |= !cJSON_AddBoolToObject(c, "external", 1) ||
              !cJSON_AddNumberToObject(c, "exit_code", code) ||
              copy_key(c, r, "killed_by_timeout", "timed_out");
    }
    if (bad2) {
      cJSON_Delete(c);
      return RPT_ENOMEM;
    }
    rc = put_event(b, c);
  }
  /* The trace's last event: its own time when the report has it. */
  if (num_of(r, "trace_ms", &v) && v > t_end) t_end = v;
  const cJSON *complete = cJSON_GetObjectItemCaseSensitive(r, "complete");
  if (rc == 0 && !cJSON_IsFalse(complete)) rc = put_event(b, event("done", t_end));
  return rc;
}

/* --------------------------------------------------- one result */

static int status_of(const char *w, rpt_status *out) {
  if (w == NULL) return -1;
  if (strcmp(w, "pass") == 0) *out = RPT_PASS;
  else if (strcmp(w, "fail") == 0) *out = RPT_FAIL;
  else if (strcmp(w, "n/a") == 0 || strcmp(w, "skip") == 0) *out = RPT_NA;
  else return -1;
  return 0;
}

/* Appends result r (the i-th of in) to run; err says why not. */
static int add_result(rpt_run *run, const merge_in *in, int i, const cJSON *r,
                      char err[RPT_ERRLEN]) {
  const char *name = str_of(r, "name"), *status = str_of(r, "status");
  const cJSON *vs = cJSON_GetObjectItemCaseSensitive(r, "verdicts");
  if (!cJSON_IsObject(r) || name == NULL || status == NULL || !cJSON_IsArray(vs)) {
    snprintf(err, RPT_ERRLEN, "%s: results[%d]: not a scenario result (name, status, verdicts)",
             in->path, i);
    return RPT_ETRACE;
  }
  rpt_judgement *j = calloc(1, sizeof *j);
  if (j == NULL) return RPT_ENOMEM;
  const cJSON *v;
  int k = 0;
  cJSON_ArrayForEach(v, vs) {
    rpt_status st;
    const char *vn = str_of(v, "name");
    if (vn == NULL || status_of(str_of(v, "status"), &st) != 0) {
      snprintf(err, RPT_ERRLEN, "%s: results[%d].verdicts[%d]: a verdict needs a name and a "
               "status (pass, fail or n/a)", in->path, i, k);
      rpt_judgement_free(j);
      return RPT_ETRACE;
    }
    int rc = rpt__judgement_add(j, vn, st, str_of(v, "evidence"));
    if (rc) {
      snprintf(err, RPT_ERRLEN, "%s: results[%d]: %s", in->path, i, rpt_strerror(rc));
      rpt_judgement_free(j);
      return rc;
    }
    k++;
  }
  const char *error = strcmp(status, "error") == 0 ? str_of(r, "error") : NULL;
  rpt_trace *tr = NULL;
  if (strcmp(status, "error") != 0) {
    rpt__buf b;
    rpt__buf_init(&b, RPT__ARENA_MAX);
    int rc = rebuild_trace(r, &b);
    char terr[RPT_ERRLEN];
    if (rc == 0) rc = rpt_trace_read_mem(rpt__buf_str(&b), b.len, in->path, &tr, terr);
    rpt__buf_free(&b);
    if (rc) {
      char why[100];
      const char *w = rc == RPT_ETRACE ? terr : rpt_strerror(rc);
      size_t wl = strnlen(w, sizeof why - 1);
      memcpy(why, w, wl);
      why[wl] = '\0';
      snprintf(err, RPT_ERRLEN, "%s: results[%d] (%.80s): its attempts do not form a trace: %s",
               in->path, i, name, why);
      rpt_judgement_free(j);
      return rc == RPT_ENOMEM ? rc : RPT_ETRACE;
    }
    const char *warn = str_of(r, "warning");
    if (!rpt_trace_complete(tr) && warn) snprintf(tr->warning, sizeof tr->warning, "%s", warn);
  }
  rpt__entry *e = rpt__run_push(run);
  if (e == NULL) {
    rpt_trace_free(tr);
    rpt_judgement_free(j);
    snprintf(err, RPT_ERRLEN, "too many scenarios, or out of memory");
    return RPT_ETOOBIG;
  }
  int oom = 0;
  const char *strs[4] = {name, str_of(r, "file"), str_of(r, "client"), str_of(r, "trace")};
  char **dst[4] = {&e->name, &e->file, &e->client, &e->trace_path};
  for (int s = 0; s < 4; s++)
    if (strs[s] && (*dst[s] = strdup(strs[s])) == NULL) oom = 1;
  if (strcmp(status, "error") == 0 && (e->error = strdup(error ? error : "error")) == NULL) oom = 1;
  e->trace = tr;
  e->j = j;
  double d;
  if (num_of(r, "time_ms", &d) && d > 0) e->wall_ms = d;
  if (num_of(r, "time_scale", &d) && d > 0) e->scale = d;
  if (num_of(r, "deadline_ms", &d) && d >= 0) e->deadline_ms = d;
  if (num_of(r, "index", &d) && d >= 0 && d < RPT__MAX_SCENARIOS) e->index = (int)d;
  run->n++;
  if (oom) return RPT_ENOMEM;
  if (strcmp(rpt__entry_status(e), status) != 0) {
    snprintf(err, RPT_ERRLEN, "%s: results[%d] (%.80s): status \"%s\" does not follow from its "
             "verdicts (\"%s\"): an edited report?", in->path, i, name, status,
             rpt__entry_status(e));
    return RPT_ETRACE;
  }
  if (in->sharded && (e->index < 0 || e->index >= in->shard.total)) {
    snprintf(err, RPT_ERRLEN, "%s: results[%d] (%.80s): a shard's result needs its \"index\" "
             "in the suite (0..%d)", in->path, i, name, in->shard.total - 1);
    return RPT_ETRACE;
  }
  return RPT_OK;
}

/* Two results of the run (from..n) for the same scenario: refused. */
static int check_duplicates(const rpt_run *run, int from, const int *origin,
                            const merge_in *in, char err[RPT_ERRLEN]) {
  for (int a = from; a < run->n; a++)
    for (int b = from; b < a; b++) {
      const rpt__entry *x = &run->e[a], *y = &run->e[b];
      int same = x->index >= 0 ? x->index == y->index
                               : x->file && y->file && strcmp(x->file, y->file) == 0;
      if (!same) continue;
      snprintf(err, RPT_ERRLEN, "%.60s (%.100s) is in %s and in %s: a scenario given twice",
               x->name, x->file ? x->file : "no file", in[origin[b - from]].path,
               in[origin[a - from]].path);
      return RPT_ETRACE;
    }
  return RPT_OK;
}

static int by_index(const void *x, const void *y) {
  const rpt__entry *a = x, *b = y;
  return (a->index > b->index) - (a->index < b->index);
}

/* Joins JSON reports into run; see reports.h. */
int rpt_run_merge_json(rpt_run *run, const char *const *paths, int n, char err[RPT_ERRLEN]) {
  if (run == NULL || paths == NULL || n < 1 || err == NULL) return RPT_EINVAL;
  err[0] = '\0';
  merge_in *in = calloc((size_t)n, sizeof *in);
  if (in == NULL) return RPT_ENOMEM;
  int rc = RPT_OK, from = run->n, total = 0;
  int *origin = NULL;
  for (int i = 0; i < n && rc == RPT_OK; i++) {
    in[i].path = paths[i];
    rc = load(&in[i], err);
    /* every string of a shard is read through the secret rule (issue 29) */
    if (rc == RPT_OK && run->redact != NULL && redact_tree(in[i].doc, run->redact, 0) != RPT_OK)
      rc = RPT_ENOMEM;
    if (rc == RPT_OK) total += cJSON_GetArraySize(in[i].results);
  }
  if (rc == RPT_OK) rc = check_shards(in, n, err);
  if (rc == RPT_OK && in[0].sharded && total != in[0].shard.total) {
    snprintf(err, RPT_ERRLEN, "the %d shards hold %d results but their suite has %d scenarios",
             n, total, in[0].shard.total);
    rc = RPT_ETRACE;
  }
  if (rc == RPT_OK && (origin = malloc((size_t)(total ? total : 1) * sizeof *origin)) == NULL)
    rc = RPT_ENOMEM;
  for (int i = 0; i < n && rc == RPT_OK; i++) {
    int k = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, in[i].results) {
      origin[run->n - from] = i;
      rc = add_result(run, &in[i], k++, r, err);
      if (rc) break;
    }
  }
  if (rc == RPT_OK) rc = check_duplicates(run, from, origin, in, err);
  if (rc == RPT_OK && in[0].sharded)
    qsort(run->e + from, (size_t)(run->n - from), sizeof *run->e, by_index);
  if (rc == RPT_ENOMEM && !err[0]) snprintf(err, RPT_ERRLEN, "out of memory");
  for (int i = 0; i < n; i++) cJSON_Delete(in[i].doc);
  free(in);
  free(origin);
  return rc;
}
