/*
 * matrix.c - several clients over one suite: the clients x scenarios table
 * of `fusebox matrix`, as terminal text, JSON, one self-contained HTML page
 * or JUnit XML (one testsuite per client). Each cell shows the scenario's
 * status (pass, FAIL, n/a, error), the attempts that reached the provider,
 * the exit status of an external command and the failed verdicts; n/a is
 * never drawn as a pass.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/html_int.h"
#include "reports/reports_int.h"

#define RPT__MAX_CLIENTS 64

typedef struct mclient {
  char *name, *command; /* command NULL for a built-in client */
  rpt_run *run;
} mclient;

struct rpt_matrix {
  mclient c[RPT__MAX_CLIENTS];
  int n;
};

/* A new, empty matrix; NULL when out of memory. */
rpt_matrix *rpt_matrix_new(void) { return calloc(1, sizeof(rpt_matrix)); }

/* Releases a matrix with every run in it. NULL is a no-op. */
void rpt_matrix_free(rpt_matrix *m) {
  if (m == NULL) return;
  for (int i = 0; i < m->n; i++) {
    free(m->c[i].name);
    free(m->c[i].command);
    rpt_run_free(m->c[i].run);
  }
  free(m);
}

/* Adds one client's run; the matrix takes the run, also on failure. */
int rpt_matrix_add(rpt_matrix *m, const char *client, const char *command, rpt_run *run) {
  if (m == NULL || client == NULL || run == NULL) {
    rpt_run_free(run);
    return RPT_EINVAL;
  }
  if (m->n >= RPT__MAX_CLIENTS) {
    rpt_run_free(run);
    return RPT_ETOOBIG;
  }
  mclient *c = &m->c[m->n];
  c->name = strdup(client);
  c->command = command ? strdup(command) : NULL;
  if (c->name == NULL || (command && c->command == NULL)) {
    free(c->name);
    free(c->command);
    memset(c, 0, sizeof *c);
    rpt_run_free(run);
    return RPT_ENOMEM;
  }
  c->run = run;
  m->n++;
  return 0;
}

/* Failed verdicts plus error scenarios over every client: 0 = all passed. */
int rpt_matrix_failed(const rpt_matrix *m) {
  int n = 0;
  for (int i = 0; m && i < m->n; i++) n += rpt_run_failed(m->c[i].run);
  return n;
}

/* ------------------------------------------------------------ rows */

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

/* The row key of an entry: its file, else its name. */
static const char *row_key(const rpt__entry *e) { return e->file ? e->file : e->name; }

/* The rows: the first client's scenarios in order, then any others' new ones. */
typedef struct rows {
  const rpt__entry **e; /* one representative entry per row */
  int n;
} rows;

static int rows_build(const rpt_matrix *m, rows *r) {
  int total = 0;
  for (int c = 0; c < m->n; c++) total += m->c[c].run->n;
  r->n = 0;
  r->e = calloc((size_t)total + 1, sizeof *r->e);
  if (r->e == NULL) return RPT_ENOMEM;
  for (int c = 0; c < m->n; c++)
    for (int i = 0; i < m->c[c].run->n; i++) {
      const rpt__entry *e = &m->c[c].run->e[i];
      int found = 0;
      for (int k = 0; k < r->n && !found; k++) found = same(row_key(r->e[k]), row_key(e));
      if (!found) r->e[r->n++] = e;
    }
  return 0;
}

/* Client c's entry for row e, or NULL when it did not play it. */
static const rpt__entry *cell(const rpt_matrix *m, int c, const rpt__entry *row) {
  const rpt_run *run = m->c[c].run;
  for (int i = 0; i < run->n; i++)
    if (same(row_key(&run->e[i]), row_key(row))) return &run->e[i];
  return NULL;
}

/* The failed verdict names of an entry, comma-separated. Returns out. */
static const char *failed_names(const rpt__entry *e, char *out, size_t n) {
  out[0] = '\0';
  size_t off = 0;
  if (e->error) {
    snprintf(out, n, "error");
    return out;
  }
  for (int i = 0; e->j && i < e->j->n && off < n; i++)
    if (e->j->v[i].status == RPT_FAIL)
      off += (size_t)snprintf(out + off, n - off, "%s%s", off ? "," : "", e->j->v[i].name);
  return out;
}

/* "PASS", "FAIL", "N/A", "ERROR" or "-" (not played). */
static const char *upper(const rpt__entry *e) {
  if (e == NULL) return "-";
  const char *st = rpt__entry_status(e);
  return strcmp(st, "pass") == 0 ? "PASS" : strcmp(st, "fail") == 0 ? "FAIL"
         : strcmp(st, "n/a") == 0 ? "N/A" : "ERROR";
}

/* The short cell text: "FAIL 1 att exit 56 outcome,served". */
static const char *cell_text(const rpt__entry *e, char *out, size_t n) {
  if (e == NULL) {
    snprintf(out, n, "-");
    return out;
  }
  char names[256], ex[32] = "";
  int killed, code = rpt__entry_exit(e, &killed);
  if (killed) snprintf(ex, sizeof ex, " killed");
  else if (code >= 0) snprintf(ex, sizeof ex, " exit %d", code);
  failed_names(e, names, sizeof names);
  if (e->error) snprintf(out, n, "ERROR");
  else
    snprintf(out, n, "%s %d att%s%s%s", upper(e), rpt__entry_attempts(e), ex, names[0] ? " " : "",
             names);
  return out;
}

static const char *base(const char *path) {
  const char *s = path ? strrchr(path, '/') : NULL;
  return s ? s + 1 : path ? path : "?";
}

/* ---------------------------------------------------------- terminal */

#define ROW_COLS 40
#define CELL_COLS 32

/*
 * Writes the table: one row per scenario, one column per client, then per
 * client its totals and any headline. Returns RPT_EIO on a stream error.
 */
int rpt_matrix_write_term(const rpt_matrix *m, FILE *f, int color) {
  if (m == NULL || f == NULL) return RPT_EINVAL;
  const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "",
             *yellow = color ? "\033[33m" : "", *off = color ? "\033[0m" : "";
  rows r;
  if (rows_build(m, &r)) return RPT_ENOMEM;
  char head[RPT_ERRLEN * 2];
  for (int c = 0; c < m->n; c++)
    if (rpt_run_headline(m->c[c].run, head, sizeof head)) {
      fprintf(f, "%s", red);
      rpt__put_term(f, m->c[c].name, 40);
      fputs(": ", f);
      rpt__put_term(f, head, -1);
      fprintf(f, "%s\n", off);
    }
  fprintf(f, "%-*s", ROW_COLS, "SCENARIO");
  for (int c = 0; c < m->n; c++) {
    fputs("  ", f);
    int w = rpt__put_term(f, m->c[c].name, CELL_COLS);
    for (; w < CELL_COLS; w++) fputc(' ', f);
  }
  fputc('\n', f);
  for (int i = 0; i < r.n; i++) {
    int w = rpt__put_term(f, base(row_key(r.e[i])), ROW_COLS);
    for (; w < ROW_COLS; w++) fputc(' ', f);
    for (int c = 0; c < m->n; c++) {
      const rpt__entry *e = cell(m, c, r.e[i]);
      char txt[320];
      const char *u = upper(e);
      const char *col = strcmp(u, "PASS") == 0 ? green : strcmp(u, "N/A") == 0 ? yellow
                        : strcmp(u, "-") == 0 ? "" : red;
      fprintf(f, "  %s", col);
      int cw = rpt__put_term(f, cell_text(e, txt, sizeof txt), CELL_COLS);
      fputs(col[0] ? off : "", f);
      for (; cw < CELL_COLS; cw++) fputc(' ', f);
    }
    fputc('\n', f);
  }
  fputc('\n', f);
  for (int c = 0; c < m->n; c++) {
    rpt_summary s;
    rpt_run_summary(m->c[c].run, &s);
    rpt__put_term(f, m->c[c].name, 40);
    fprintf(f, ": %d passed, %d failed, %d n/a", s.passed, s.failed, s.not_applicable);
    if (s.errors) fprintf(f, ", %d error%s", s.errors, s.errors == 1 ? "" : "s");
    fputc('\n', f);
  }
  fputs("(cell: PASS|FAIL|N/A|ERROR, attempts that reached the provider, exit status of an "
        "external command, failed verdicts)\n",
        f);
  free(r.e);
  return ferror(f) ? RPT_EIO : 0;
}

/* -------------------------------------------------------------- JSON */

static int add_str(cJSON *o, const char *k, const char *v) {
  if (v == NULL) return cJSON_AddNullToObject(o, k) ? 0 : -1;
  char *clean = rpt__utf8_dup(v);
  int rc = clean && cJSON_AddStringToObject(o, k, clean) ? 0 : -1;
  free(clean);
  return rc;
}

static int cell_json(cJSON *cells, const char *client, const rpt__entry *e) {
  cJSON *x = cJSON_CreateObject();
  if (x == NULL || !cJSON_AddItemToArray(cells, x)) {
    cJSON_Delete(x);
    return -1;
  }
  int bad = add_str(x, "client", client);
  if (e == NULL) return bad | add_str(x, "status", "not played");
  bad |= add_str(x, "status", rpt__entry_status(e));
  bad |= cJSON_AddNumberToObject(x, "attempts", rpt__entry_attempts(e)) ? 0 : -1;
  int killed, code = rpt__entry_exit(e, &killed);
  if (code >= 0) bad |= cJSON_AddNumberToObject(x, "exit_code", code) ? 0 : -1;
  if (killed) bad |= cJSON_AddBoolToObject(x, "killed_by_timeout", 1) ? 0 : -1;
  if (e->error) bad |= add_str(x, "error", e->error);
  cJSON *vs = cJSON_AddArrayToObject(x, "verdicts");
  if (vs == NULL) return -1;
  for (int i = 0; e->j && i < e->j->n; i++) {
    cJSON *v = cJSON_CreateObject();
    if (v == NULL || !cJSON_AddItemToArray(vs, v)) {
      cJSON_Delete(v);
      return -1;
    }
    bad |= add_str(v, "name", e->j->v[i].name);
    bad |= add_str(v, "status", rpt_status_word(e->j->v[i].status));
    bad |= add_str(v, "evidence", e->j->v[i].evidence);
  }
  return bad;
}

/* Writes the matrix as one JSON document to path ("-" = stdout). */
int rpt_matrix_write_json(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]) {
  if (m == NULL || err == NULL) return RPT_EINVAL;
  rows r;
  if (rows_build(m, &r)) {
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  int bad = 0;
  cJSON *doc = cJSON_CreateObject();
  cJSON *cs = doc ? cJSON_AddArrayToObject(doc, "clients") : NULL;
  if (cs == NULL || !cJSON_AddNumberToObject(doc, "fusebox_matrix", 1)) bad = 1;
  char head[RPT_ERRLEN * 2];
  for (int c = 0; !bad && c < m->n; c++) {
    cJSON *o = cJSON_CreateObject();
    if (o == NULL || !cJSON_AddItemToArray(cs, o)) {
      cJSON_Delete(o);
      bad = 1;
      break;
    }
    rpt_summary s;
    rpt_run_summary(m->c[c].run, &s);
    bad |= add_str(o, "name", m->c[c].name) != 0;
    if (m->c[c].command) bad |= add_str(o, "command", m->c[c].command) != 0;
    else bad |= add_str(o, "builtin", m->c[c].name) != 0;
    bad |= !cJSON_AddNumberToObject(o, "passed", s.passed);
    bad |= !cJSON_AddNumberToObject(o, "failed", s.failed);
    bad |= !cJSON_AddNumberToObject(o, "not_applicable", s.not_applicable);
    bad |= !cJSON_AddNumberToObject(o, "errors", s.errors);
    const char *h = rpt_run_headline(m->c[c].run, head, sizeof head);
    if (h) bad |= add_str(o, "headline", h) != 0;
  }
  cJSON *rs = bad ? NULL : cJSON_AddArrayToObject(doc, "scenarios");
  if (rs == NULL) bad = 1;
  for (int i = 0; !bad && i < r.n; i++) {
    cJSON *row = cJSON_CreateObject();
    if (row == NULL || !cJSON_AddItemToArray(rs, row)) {
      cJSON_Delete(row);
      bad = 1;
      break;
    }
    bad |= add_str(row, "file", r.e[i]->file) != 0;
    bad |= add_str(row, "name", r.e[i]->name) != 0;
    cJSON *cells = cJSON_AddArrayToObject(row, "cells");
    if (cells == NULL) bad = 1;
    for (int c = 0; !bad && c < m->n; c++)
      bad |= cell_json(cells, m->c[c].name, cell(m, c, r.e[i])) != 0;
  }
  free(r.e);
  char *text = bad ? NULL : cJSON_Print(doc);
  cJSON_Delete(doc);
  if (text == NULL) {
    snprintf(err, RPT_ERRLEN, "out of memory building the JSON matrix");
    return RPT_ENOMEM;
  }
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) {
    cJSON_free(text);
    return RPT_EIO;
  }
  fputs(text, f);
  fputc('\n', f);
  cJSON_free(text);
  return rpt__close_out(f, path, err);
}

/* -------------------------------------------------------------- HTML */

static const char css[] =
    "body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top;text-align:left}"
    "td.pass{background:#e3f6e3}td.fail,td.error{background:#fbe0dd}td.na{background:#fff4cc}"
    "small{color:#555}.na-list{color:#8a6d00}"
    ".headline{background:#fbe0dd;border:1px solid #d03030;padding:8px 12px;font-weight:700}";

/* A row's rank for triage: its worst played cell (0 failed or error, 1
   n/a, 2 passed), as the run page orders its scenarios. */
static int row_rank(const rpt_matrix *m, const rpt__entry *row) {
  int rank = 2;
  for (int c = 0; c < m->n; c++) {
    const rpt__entry *e = cell(m, c, row);
    if (e == NULL) continue;
    int k = rpt__html_rank(rpt__entry_status(e));
    if (k < rank) rank = k;
  }
  return rank;
}

/* The triage head of the page: the filter bar, and per failed verdict the
   cells it failed in, each a link to its row. Rows are then sorted failed
   first (stable). Returns 0 or RPT_ENOMEM. */
static int triage_head(FILE *f, const rpt_matrix *m, rows *r, int *rank) {
  int n[3] = {0, 0, 0}, ncells = 0;
  for (int i = 0; i < r->n; i++) n[rank[i] = row_rank(m, r->e[i])]++;
  for (int a = 1; a < r->n; a++) /* insertion sort: stable, rows are few */
    for (int b = a; b > 0 && rank[b] < rank[b - 1]; b--) {
      const rpt__entry *e = r->e[b];
      int k = rank[b];
      r->e[b] = r->e[b - 1], rank[b] = rank[b - 1];
      r->e[b - 1] = e, rank[b - 1] = k;
    }
  rpt__html_filters(f, r->n, n[0], n[1], n[2]);
  rpt__html_ref *refs = calloc((size_t)r->n * (size_t)m->n + 1, sizeof *refs);
  if (refs == NULL) return RPT_ENOMEM;
  for (int i = 0; i < r->n; i++)
    for (int c = 0; c < m->n; c++) {
      const rpt__entry *e = cell(m, c, r->e[i]);
      if (e == NULL) continue;
      rpt__html_ref *x = &refs[ncells++];
      x->e = e;
      snprintf(x->anchor, sizeof x->anchor, "r%d", i + 1);
      snprintf(x->label, sizeof x->label, "#%d", i + 1);
      x->title = m->c[c].name;
    }
  rpt__html_tally(f, refs, ncells, "cell");
  free(refs);
  return 0;
}

/* Writes the matrix as one self-contained HTML page to path ("-" = stdout):
   rows failed first, an offline filter, and per failed verdict its cells. */
int rpt_matrix_write_html(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]) {
  if (m == NULL || err == NULL) return RPT_EINVAL;
  rows r;
  if (rows_build(m, &r)) {
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  int *rank = calloc((size_t)r.n + 1, sizeof *rank);
  FILE *f = rank ? rpt__open_out(path, err) : NULL;
  if (f == NULL) {
    if (rank == NULL) snprintf(err, RPT_ERRLEN, "out of memory");
    free(rank);
    free(r.e);
    return rank == NULL ? RPT_ENOMEM : RPT_EIO;
  }
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src '" RPT__HTML_FILTER_SHA256 "'\">\n"
        "<title>fusebox matrix</title>\n<style>",
        f);
  fputs(css, f);
  fputs(rpt__html_filter_css, f);
  fputs("</style>\n</head>\n<body>\n<h1>fusebox matrix</h1>\n", f);
  char head[RPT_ERRLEN * 2];
  for (int c = 0; c < m->n; c++)
    if (rpt_run_headline(m->c[c].run, head, sizeof head)) {
      fputs("<p class=\"headline\">", f);
      rpt__put_xml(f, m->c[c].name, 0);
      fputs(": ", f);
      rpt__put_xml(f, head, 0);
      fputs("</p>\n", f);
    }
  int bad = triage_head(f, m, &r, rank);
  fputs("<table>\n<tr><th>Scenario</th>", f);
  for (int c = 0; c < m->n; c++) {
    rpt_summary s;
    rpt_run_summary(m->c[c].run, &s);
    fputs("<th>", f);
    rpt__put_xml(f, m->c[c].name, 0);
    fprintf(f, "<br><small>%d pass · %d fail · %d n/a%s</small></th>", s.passed, s.failed,
            s.not_applicable, s.errors ? " · errors" : "");
  }
  fputs("</tr>\n", f);
  for (int i = 0; i < r.n; i++) {
    fprintf(f, "<tr id=\"r%d\" data-st=\"%s\"><td>", i + 1,
            rpt__html_filter_word(rank[i] == 2 ? "pass" : rank[i] == 1 ? "n/a" : "fail"));
    rpt__put_xml(f, r.e[i]->name, 0);
    fputs("<br><small>", f);
    rpt__put_xml(f, r.e[i]->file, 0);
    fputs("</small></td>", f);
    for (int c = 0; c < m->n; c++) {
      const rpt__entry *e = cell(m, c, r.e[i]);
      if (e == NULL) {
        fputs("<td>not played</td>", f);
        continue;
      }
      const char *st = rpt__entry_status(e);
      int killed, code = rpt__entry_exit(e, &killed);
      fprintf(f, "<td class=\"%s\"><b>%s</b>", strcmp(st, "n/a") == 0 ? "na" : st, upper(e));
      if (e->error) {
        fputs("<br><small>", f);
        rpt__put_xml(f, e->error, 0);
        fputs("</small></td>", f);
        continue;
      }
      int att = rpt__entry_attempts(e);
      fprintf(f, " · %d attempt%s", att, att == 1 ? "" : "s");
      if (killed) fputs(" · killed by --timeout", f);
      else if (code >= 0) fprintf(f, " · exit %d", code);
      for (int k = 0; e->j && k < e->j->n; k++) {
        const rpt_verdict *v = &e->j->v[k];
        if (v->status != RPT_FAIL) continue;
        fputs("<br><small>\xE2\x9C\x97 <b>", f);
        rpt__put_xml(f, v->name, 0);
        fputs("</b>: ", f);
        rpt__put_xml(f, v->evidence, 0);
        fputs("</small>", f);
      }
      int nna = 0;
      for (int k = 0; e->j && k < e->j->n; k++)
        if (e->j->v[k].status == RPT_NA) {
          fputs(nna++ ? ", " : "<br><small class=\"na-list\">n/a: ", f);
          rpt__put_xml(f, e->j->v[k].name, 0);
        }
      if (nna) fputs("</small>", f);
      fputs("</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table>\n<p><small>A cell is green only when the client exercised the scenario, at "
        "least one verdict applied and none failed; n/a means no evidence either way. A row "
        "is filtered by its worst cell.</small></p>\n",
        f);
  fprintf(f, "<script>%s</script>\n</body>\n</html>\n", rpt__html_filter_js);
  free(rank);
  free(r.e);
  if (bad) {
    rpt__close_out(f, path, err);
    snprintf(err, RPT_ERRLEN, "out of memory writing the HTML matrix");
    return RPT_ENOMEM;
  }
  return rpt__close_out(f, path, err);
}

/* ------------------------------------------------------------- JUnit */

/* Writes the matrix as JUnit XML: one testsuite per client. */
int rpt_matrix_write_junit(const rpt_matrix *m, const char *path, char err[RPT_ERRLEN]) {
  if (m == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  int tests = 0, failed = 0, errors = 0;
  double ms = 0;
  for (int c = 0; c < m->n; c++) {
    rpt_summary s;
    rpt_run_summary(m->c[c].run, &s);
    tests += s.scenarios;
    failed += s.failed;
    errors += s.errors;
    ms += s.time_ms;
  }
  fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
  fprintf(f, "<testsuites name=\"fusebox matrix\" tests=\"%d\" failures=\"%d\" errors=\"%d\" "
             "time=\"%.3f\">\n",
          tests, failed, errors, ms / 1000.0);
  for (int c = 0; c < m->n; c++) rpt__junit_suite(f, m->c[c].run, m->c[c].name);
  fputs("</testsuites>\n", f);
  return rpt__close_out(f, path, err);
}
