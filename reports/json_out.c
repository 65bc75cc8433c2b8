/*
 * json_out.c - the run as one JSON document: totals, then per scenario its
 * status, verdicts with evidence, attempts (arrive/end joined), effects and
 * the client's account.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

static const char *status_word(rpt_status s) { return rpt_status_word(s); }

/* cJSON_Add*ToObject returns NULL on failure; collect that in *bad. */
static void add_str(cJSON *o, const char *k, const char *v, int *bad) {
  if (v == NULL) {
    if (cJSON_AddNullToObject(o, k) == NULL) *bad = 1;
    return;
  }
  char *clean = rpt__utf8_dup(v);
  if (clean == NULL || cJSON_AddStringToObject(o, k, clean) == NULL) *bad = 1;
  free(clean);
}
static void add_num(cJSON *o, const char *k, double v, int *bad) {
  if (cJSON_AddNumberToObject(o, k, v) == NULL) *bad = 1;
}
static void add_bool(cJSON *o, const char *k, int v, int *bad) {
  if (cJSON_AddBoolToObject(o, k, v) == NULL) *bad = 1;
}

/* One attempt (arrive and end joined). */
static cJSON *attempt_json(const rpt__arrival *a, int *bad) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) {
    *bad = 1;
    return NULL;
  }
  add_num(o, "id", (double)a->id, bad);
  add_str(o, "key", a->key, bad);
  add_num(o, "attempt", a->attempt, bad);
  add_str(o, "provider", a->provider, bad);
  add_str(o, "method", a->method, bad);
  add_str(o, "path", a->path, bad);
  add_str(o, "dialect", a->dialect, bad);
  add_num(o, "arrive_ms", a->t_arrive, bad);
  if (a->has_end) add_num(o, "end_ms", a->t_end, bad);
  else add_str(o, "end_ms", NULL, bad);
  add_str(o, "step", a->step, bad);
  add_num(o, "status", a->status, bad);
  add_str(o, "how", a->has_end ? a->how : NULL, bad);
  add_str(o, "state", a->state, bad); /* end.state, or derived (docs/trace.md) */
  if (a->error_event) add_bool(o, "error_event", 1, bad);
  add_str(o, "class", rpt__arrival_class(a), bad);
  if (a->code) add_str(o, "code", a->code, bad);
  if (a->stalled) add_bool(o, "stalled", 1, bad);
  if (a->retry_after_ms >= 0) add_num(o, "retry_after_ms", a->retry_after_ms, bad);
  add_num(o, "tokens_in", (double)a->tokens_in, bad);
  add_num(o, "tokens_out", (double)a->tokens_out, bad);
  return o;
}

/* One side-effect ledger event. */
static cJSON *effect_json(const rpt_trace *tr, int i, int *bad) {
  cJSON *x = cJSON_CreateObject();
  if (x == NULL) {
    *bad = 1;
    return NULL;
  }
  add_num(x, "t_ms", tr->eff[i].t, bad);
  add_num(x, "id", (double)tr->eff[i].id, bad);
  add_str(x, "name", tr->eff[i].name, bad);
  add_str(x, "key", tr->eff[i].key, bad);
  add_str(x, "action", tr->eff[i].action, bad);
  add_num(x, "count", tr->eff[i].count, bad);
  return x;
}

/* One call of the client's own account. */
static cJSON *call_json(const rpt_trace *tr, int i, int *bad) {
  cJSON *x = cJSON_CreateObject();
  if (x == NULL) {
    *bad = 1;
    return NULL;
  }
  add_num(x, "call", tr->cli[i].call, bad);
  add_str(x, "outcome", tr->cli[i].outcome, bad);
  add_str(x, "reason", tr->cli[i].reason, bad);
  if (tr->cli[i].stopped) add_str(x, "stopped", tr->cli[i].stopped, bad);
  if (tr->cli[i].total_ms >= 0) add_num(x, "total_ms", tr->cli[i].total_ms, bad);
  if (tr->cli[i].has_tokens) add_num(x, "tokens", (double)tr->cli[i].tokens, bad);
  add_num(x, "attempts", tr->cli[i].nattempts, bad);
  if (tr->cli[i].error_line) add_str(x, "error_line", tr->cli[i].error_line, bad);
  return x;
}

/*
 * The per-trace arrays (attempts, effects, calls) grow with the trace, so
 * they are not built as one tree: the document holds a raw marker
 * "\1<kind><scenario index>\1" in their place (a control byte cJSON always
 * escapes inside strings, so it marks nothing else), and the writer prints
 * their elements one at a time where the marker stands.
 */
static void add_marker(cJSON *o, const char *k, char kind, int idx, int *bad) {
  char m[32];
  snprintf(m, sizeof m, "\001%c%d\001", kind, idx);
  if (cJSON_AddRawToObject(o, k, m) == NULL) *bad = 1;
}

static cJSON *scenario_json(const rpt__entry *e, int idx, int *bad) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) {
    *bad = 1;
    return NULL;
  }
  add_str(o, "name", e->name, bad);
  add_str(o, "file", e->file, bad);
  if (e->index >= 0) add_num(o, "index", e->index, bad);
  add_str(o, "client", e->client, bad);
  add_str(o, "trace", e->trace_path, bad);
  add_str(o, "status", rpt__entry_status(e), bad);
  add_str(o, "error", e->error, bad);
  add_num(o, "time_ms", rpt__entry_time(e), bad);
  if (e->trace) {
    const rpt_trace *tr = e->trace;
    add_num(o, "time_scale", e->scale, bad);
    add_bool(o, "complete", rpt_trace_complete(tr), bad);
    if (!rpt_trace_complete(tr)) add_str(o, "warning", tr->warning, bad);
    add_num(o, "trace_ms", tr->t_last, bad);
    add_num(o, "arrivals", (double)rpt__trace_narr(tr), bad);
    add_num(o, "requests", rpt__trace_requests(tr), bad);
    add_num(o, "attempts_sent", rpt__entry_attempts(e), bad);
    int killed, code = rpt__entry_exit(e, &killed);
    if (code >= 0) add_num(o, "exit_code", code, bad);
    if (killed) add_bool(o, "killed_by_timeout", 1, bad);
    if (e->deadline_ms >= 0) add_num(o, "deadline_ms", e->deadline_ms, bad);
  }
  int passed, judged;
  rpt__entry_counts(e, &passed, &judged);
  add_num(o, "verdicts_passed", passed, bad);
  add_num(o, "verdicts_judged", judged, bad);
  cJSON *vs = cJSON_AddArrayToObject(o, "verdicts");
  if (vs == NULL) *bad = 1;
  for (int i = 0; vs && e->j && i < e->j->n; i++) {
    cJSON *v = cJSON_CreateObject();
    if (v == NULL || !cJSON_AddItemToArray(vs, v)) {
      cJSON_Delete(v);
      *bad = 1;
      break;
    }
    add_str(v, "name", e->j->v[i].name, bad);
    add_str(v, "status", status_word(e->j->v[i].status), bad);
    add_str(v, "evidence", e->j->v[i].evidence, bad);
  }
  if (e->trace) {
    add_marker(o, "attempts", 'a', idx, bad);
    add_marker(o, "effects", 'e', idx, bad);
    add_marker(o, "calls", 'c', idx, bad);
  }
  return o;
}

/* The document without its per-trace arrays (markers in their place). */
static char *skeleton_text(const rpt_run *run) {
  int bad = 0;
  cJSON *doc = cJSON_CreateObject();
  if (doc == NULL) bad = 1;
  rpt_summary s;
  rpt_run_summary(run, &s);
  if (doc) {
    add_num(doc, "fusebox_report", 1, &bad);
    add_num(doc, "scenarios", s.scenarios, &bad);
    add_num(doc, "passed", s.passed, &bad);
    add_num(doc, "failed", s.failed, &bad);
    add_num(doc, "errors", s.errors, &bad);
    add_num(doc, "not_applicable", s.not_applicable, &bad);
    char head[RPT_ERRLEN * 2];
    const char *h = rpt_run_headline(run, head, sizeof head);
    if (h) add_str(doc, "headline", h, &bad);
    add_num(doc, "verdicts", s.verdicts, &bad);
    add_num(doc, "verdicts_failed", s.verdicts_failed, &bad);
    add_num(doc, "verdicts_skipped", s.verdicts_skipped, &bad);
    add_num(doc, "verdicts_not_applicable", s.verdicts_skipped, &bad);
    add_num(doc, "incomplete", s.incomplete, &bad);
    add_num(doc, "time_ms", s.time_ms, &bad);
    if (run->sharded) {
      cJSON *sh = cJSON_AddObjectToObject(doc, "shard");
      if (sh == NULL) bad = 1;
      else {
        add_num(sh, "k", run->shard.k, &bad);
        add_num(sh, "n", run->shard.n, &bad);
        add_num(sh, "total", run->shard.total, &bad);
        add_str(sh, "set", run->shard.set, &bad);
      }
    }
    cJSON *arr = cJSON_AddArrayToObject(doc, "results");
    if (arr == NULL) bad = 1;
    for (int i = 0; arr && i < run->n && !bad; i++) {
      cJSON *o = scenario_json(&run->e[i], i, &bad);
      if (o && !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        bad = 1;
      }
    }
  }
  char *text = bad ? NULL : cJSON_Print(doc);
  cJSON_Delete(doc);
  return text;
}

/* Writes o as cJSON_Print would inside the document, where it stands at
 * depth tabs: every line after the first indented by depth more. */
static int put_item(FILE *f, cJSON *o, int depth) {
  char *t = o ? cJSON_Print(o) : NULL;
  cJSON_Delete(o);
  if (t == NULL) return -1;
  for (const char *p = t; *p; p++) {
    fputc(*p, f);
    if (*p == '\n')
      for (int d = 0; d < depth; d++) fputc('\t', f);
  }
  cJSON_free(t);
  return 0;
}

/* Depth of the elements of a scenario's arrays: doc, results, scenario,
 * the array itself. */
#define ITEM_DEPTH 4

/* Where the attempts of a folded trace are printed as its file is read again. */
typedef struct attempt_out {
  FILE *f;
  long n; /* printed so far */
} attempt_out;

static int put_attempt(void *ctx, const rpt__arrival *a) {
  attempt_out *ao = ctx;
  int bad = 0;
  cJSON *o = attempt_json(a, &bad);
  if (bad) {
    cJSON_Delete(o);
    return -1;
  }
  if (ao->n++ > 0) fputs(", ", ao->f);
  return put_item(ao->f, o, ITEM_DEPTH);
}

/* Prints one per-trace array, element by element, as cJSON_Print would. */
static int put_array(FILE *f, const rpt_run *run, char kind, int idx) {
  if (idx < 0 || idx >= run->n || run->e[idx].trace == NULL) return -1;
  const rpt_trace *tr = run->e[idx].trace;
  if (kind == 'a' && rpt__trace_folded(tr)) { /* not all kept: read them again */
    attempt_out ao = {f, 0};
    fputc('[', f);
    if (rpt__trace_each_attempt(tr, put_attempt, &ao) != 0) return -1;
    fputc(']', f);
    return 0;
  }
  int n = kind == 'a' ? tr->narr : kind == 'e' ? tr->neff : tr->ncli;
  fputc('[', f);
  for (int i = 0; i < n; i++) {
    int bad = 0;
    cJSON *o = kind == 'a' ? attempt_json(&tr->arr[i], &bad)
               : kind == 'e' ? effect_json(tr, i, &bad) : call_json(tr, i, &bad);
    if (bad) {
      cJSON_Delete(o);
      return -1;
    }
    if (put_item(f, o, ITEM_DEPTH) != 0) return -1;
    if (i + 1 < n) fputs(", ", f);
  }
  fputc(']', f);
  return 0;
}

/* Writes the whole document to f as it is produced: the skeleton, and each
 * per-trace array where its marker stands. 0, or -1 out of memory. */
static int write_doc(const rpt_run *run, FILE *f) {
  char *text = skeleton_text(run);
  if (text == NULL) return -1;
  int rc = 0;
  const char *p = text;
  for (const char *m; rc == 0 && (m = strchr(p, '\001')) != NULL;) {
    fwrite(p, 1, (size_t)(m - p), f);
    char kind = m[1];
    char *end;
    long idx = strtol(m + 2, &end, 10);
    if (*end != '\001') {
      rc = -1;
      break;
    }
    rc = put_array(f, run, kind, (int)idx);
    p = end + 1;
  }
  if (rc == 0) fputs(p, f);
  cJSON_free(text);
  return rc;
}

/* The run as one JSON document; see reports.h. */
char *rpt_run_json_text(const rpt_run *run, char err[RPT_ERRLEN]) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int rc = f ? write_doc(run, f) : -1;
  if (f && fclose(f) != 0) rc = -1;
  if (rc != 0) {
    free(buf);
    snprintf(err, RPT_ERRLEN, "out of memory building the JSON report");
    return NULL;
  }
  return buf;
}

/* Writes the run as one JSON document to path ("-" = stdout), streamed:
 * memory is the skeleton and one element, not the whole document. */
int rpt_run_write_json(const rpt_run *run, const char *path, char err[RPT_ERRLEN]) {
  if (run == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  if (write_doc(run, f) != 0) {
    if (f != stdout) fclose(f);
    snprintf(err, RPT_ERRLEN, "out of memory building the JSON report");
    return RPT_ENOMEM;
  }
  fputc('\n', f);
  return rpt__close_out(f, path, err);
}
