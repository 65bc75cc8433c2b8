/*
 * cmd_matrix.c - `fusebox matrix`: one suite, several clients, one table of
 * clients x scenarios: the retry-policy comparison.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/exec.h"
#include "cli/run.h"

#define MAX_CLIENTS 16

static const char USAGE[] =
    "usage: fusebox matrix --client NAME='CMD' [--client ...] [options] [SCENARIO|FOLDER...]\n"
    "\n"
    "Plays one suite (default: the standard library) with several clients and\n"
    "prints a clients x scenarios table: pass/fail, attempts, failed verdicts.\n"
    "A client is NAME='shell command' (run as with exec, in real time), or one\n"
    "of the built-in clients by name: guard, naive, sdk-default.\n"
    "\n"
    "options:\n"
    "  --client SPEC     a client (repeatable, at least one)\n";
static const char TAIL[] =
    "--time-scale applies to the built-in clients; commands play in real time.\n"
    "Exit status: 0 every client passed everything, 1 some verdict failed, 2 usage.\n";
#define MATRIX_OPTS (CLI_OPT_JSON_HTML | CLI_OPT_SCALE | CLI_OPT_SEED | CLI_OPT_TIMEOUT | \
                     CLI_OPT_TRACE_DIR)

static void matrix_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_CLIENT, CLI_JOBS_RUN);
  fputs(USAGE, f);
  cli_common_usage(f, MATRIX_OPTS, &d);
  fputs(TAIL, f);
}

typedef struct mclient {
  char name[64];
  const char *cmd;       /* NULL for a built-in */
  run_client_kind kind;
  cJSON *report;         /* the client's run as JSON */
} mclient;

static cJSON *run_json(rpt_run *run, const char *dir, const char *name) {
  char path[4096], err[RPT_ERRLEN];
  snprintf(path, sizeof path, "%s/%s.report.json", dir, name);
  if (rpt_run_write_json(run, path, err) != RPT_OK) return NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  cJSON *j = NULL;
  if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    buf[n] = '\0';
    j = cJSON_Parse(buf);
  }
  free(buf);
  fclose(f);
  return j;
}

/* The cell of client c for scenario i: status, attempts, failed verdicts. */
static const cJSON *cell(const mclient *c, int i) {
  return cJSON_GetArrayItem(cJSON_GetObjectItem(c->report, "results"), i);
}

static void failed_names(const cJSON *r, char *out, size_t cap) {
  out[0] = '\0';
  const cJSON *v;
  cJSON_ArrayForEach(v, cJSON_GetObjectItem(r, "verdicts")) {
    const cJSON *st = cJSON_GetObjectItem(v, "status");
    if (cJSON_IsString(st) && strcmp(st->valuestring, "fail") == 0) {
      size_t l = strlen(out);
      snprintf(out + l, cap - l, "%s%s", l ? "," : "", cJSON_GetObjectItem(v, "name")->valuestring);
    }
  }
  if (cJSON_IsString(cJSON_GetObjectItem(r, "error"))) snprintf(out, cap, "error");
}

static const char *str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItem(o, k);
  return cJSON_IsString(v) ? v->valuestring : "";
}

static void write_term(mclient *cl, int ncl, int nscen, char **files) {
  printf("%-44s", "SCENARIO");
  for (int c = 0; c < ncl; c++) printf("  %-30.30s", cl[c].name);
  printf("\n");
  for (int i = 0; i < nscen; i++) {
    const char *f = strrchr(files[i], '/');
    printf("%-44.44s", f ? f + 1 : files[i]);
    for (int c = 0; c < ncl; c++) {
      const cJSON *r = cell(&cl[c], i);
      char names[256], txt[300];
      failed_names(r, names, sizeof names);
      int arr = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "arrivals"));
      if (names[0]) snprintf(txt, sizeof txt, "FAIL %d %s", arr, names);
      else snprintf(txt, sizeof txt, "pass %d", arr);
      printf("  %-30.30s", txt);
    }
    printf("\n");
  }
  printf("(cells: pass|FAIL, requests that reached the provider, failed verdicts)\n");
}

static cJSON *matrix_json(mclient *cl, int ncl, int nscen, char **files) {
  cJSON *m = cJSON_CreateObject();
  cJSON *cs = cJSON_AddArrayToObject(m, "clients");
  for (int c = 0; c < ncl; c++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", cl[c].name);
    if (cl[c].cmd) cJSON_AddStringToObject(o, "command", cl[c].cmd);
    else cJSON_AddStringToObject(o, "builtin", run_client_name(cl[c].kind));
    cJSON_AddItemToArray(cs, o);
  }
  cJSON *rows = cJSON_AddArrayToObject(m, "scenarios");
  for (int i = 0; i < nscen; i++) {
    cJSON *row = cJSON_CreateObject();
    cJSON_AddStringToObject(row, "file", files[i]);
    cJSON_AddStringToObject(row, "name", str(cell(&cl[0], i), "name"));
    cJSON *cells = cJSON_AddArrayToObject(row, "cells");
    for (int c = 0; c < ncl; c++) {
      const cJSON *r = cell(&cl[c], i);
      char names[256];
      failed_names(r, names, sizeof names);
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "client", cl[c].name);
      cJSON_AddStringToObject(x, "status", names[0] ? "fail" : "pass");
      cJSON_AddNumberToObject(x, "arrivals", cJSON_GetNumberValue(cJSON_GetObjectItem(r, "arrivals")));
      cJSON_AddStringToObject(x, "failed", names);
      cJSON *ev = cJSON_CreateArray();
      const cJSON *v;
      cJSON_ArrayForEach(v, cJSON_GetObjectItem(r, "verdicts"))
        if (strcmp(str(v, "status"), "fail") == 0)
          cJSON_AddItemToArray(ev, cJSON_CreateString(str(v, "evidence")));
      cJSON_AddItemToObject(x, "evidence", ev);
      cJSON_AddItemToArray(cells, x);
    }
    cJSON_AddItemToArray(rows, row);
  }
  return m;
}

static void html_text(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

static int write_html(const char *path, mclient *cl, int ncl, int nscen, char **files) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  fputs("<!doctype html><html><head><meta charset=\"utf-8\"><title>fusebox matrix</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
        ".pass{background:#e3f6e3}.fail{background:#fbe0dd}small{color:#555}"
        "</style></head><body><h1>fusebox matrix</h1><table><tr><th>scenario</th>", f);
  for (int c = 0; c < ncl; c++) {
    fputs("<th>", f);
    html_text(f, cl[c].name);
    fputs("</th>", f);
  }
  fputs("</tr>\n", f);
  for (int i = 0; i < nscen; i++) {
    fputs("<tr><td>", f);
    html_text(f, str(cell(&cl[0], i), "name"));
    fputs("<br><small>", f);
    html_text(f, files[i]);
    fputs("</small></td>", f);
    for (int c = 0; c < ncl; c++) {
      const cJSON *r = cell(&cl[c], i);
      char names[256];
      failed_names(r, names, sizeof names);
      fprintf(f, "<td class=\"%s\">%s, %d requests", names[0] ? "fail" : "pass",
              names[0] ? "FAIL" : "pass", (int)cJSON_GetNumberValue(cJSON_GetObjectItem(r, "arrivals")));
      const cJSON *v;
      cJSON_ArrayForEach(v, cJSON_GetObjectItem(r, "verdicts"))
        if (strcmp(str(v, "status"), "fail") == 0) {
          fputs("<br><small>", f);
          html_text(f, str(v, "name"));
          fputs(": ", f);
          html_text(f, str(v, "evidence"));
          fputs("</small>", f);
        }
      fputs("</td>", f);
    }
    fputs("</tr>\n", f);
  }
  fputs("</table></body></html>\n", f);
  return fclose(f) == 0 ? 0 : -1;
}

int cmd_matrix(int argc, char **argv) {
  mclient cl[MAX_CLIENTS];
  int ncl = 0;
  memset(cl, 0, sizeof cl);
  exec_opts eo = {0};
  cli_common co;
  cli_common_init(&co, CLI_TIME_SCALE_CLIENT, CLI_JOBS_RUN);
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0, status = EXIT_USAGE;
  if (paths == NULL) return EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int r = cli_common_option("matrix", argc, argv, &i, MATRIX_OPTS, &co);
    if (r == 1) continue;
    if (r < 0) goto out;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      matrix_usage(stdout);
      free(paths);
      return EXIT_PASS;
    } else if (strcmp(a, "--client") == 0 && v) {
      if (ncl == MAX_CLIENTS) {
        fprintf(stderr, "fusebox matrix: at most %d clients\n", MAX_CLIENTS);
        goto out;
      }
      const char *eq = strchr(v, '=');
      mclient *c = &cl[ncl];
      if (eq) {
        snprintf(c->name, sizeof c->name, "%.*s", (int)(eq - v), v);
        c->cmd = eq + 1;
      } else if (cli_client_kind(v) >= 0) {
        snprintf(c->name, sizeof c->name, "%s", v);
        c->kind = (run_client_kind)cli_client_kind(v);
      } else {
        fprintf(stderr, "fusebox matrix: --client takes NAME='CMD' or " CLI_CLIENT_NAMES "\n");
        goto out;
      }
      if (!c->name[0] || (c->cmd && !c->cmd[0]) || strpbrk(c->name, "/ ")) {
        fprintf(stderr, "fusebox matrix: bad client '%s'\n", v);
        goto out;
      }
      ncl++;
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox matrix: unknown or incomplete option '%s'\n\n", a);
      matrix_usage(stderr);
      goto out;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  eo.timeout_s = co.timeout_s;
  eo.seed = co.seed;
  double scale = co.time_scale;
  const char *trace_dir = co.trace_dir, *json = co.json, *html = co.html;
  if (ncl == 0) {
    fprintf(stderr, "fusebox matrix: give at least one --client\n\n%s", USAGE);
    goto out;
  }
  char tmpdir[] = "/tmp/fusebox-matrix-XXXXXX";
  const char *dir = trace_dir;
  if (dir == NULL) {
    if (mkdtemp(tmpdir) == NULL) goto out;
    dir = tmpdir;
  } else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fusebox matrix: cannot create %s: %s\n", dir, strerror(errno));
    goto out;
  }
  path_list files = {0};
  if (cli_collect_scenarios(paths, npaths, &files) != 0) {
    path_list_clear(&files);
    goto out;
  }
  int failed = 0, bad = 0;
  for (int c = 0; c < ncl; c++) {
    rpt_run *run = rpt_run_new();
    if (run == NULL) break;
    fprintf(stderr, "fusebox matrix: client %s\n", cl[c].name);
    if (cl[c].cmd) {
      char *sh[] = {"/bin/sh", "-c", (char *)cl[c].cmd, NULL};
      bad += exec_suite(run, files.v, files.n, sh, &eo, cl[c].name, dir);
    } else {
      run_opts ro = {.client = cl[c].kind, .jobs = 4, .scale = scale, .seed = eo.seed};
      int le = 0;
      run_suite(run, files.v, files.n, &ro, &le);
      bad += le;
    }
    failed += rpt_run_failed(run);
    cl[c].report = run_json(run, dir, cl[c].name);
    rpt_run_free(run);
    if (cl[c].report == NULL) bad++;
  }
  int ok = 1;
  for (int c = 0; c < ncl; c++) ok = ok && cl[c].report != NULL;
  if (ok) {
    write_term(cl, ncl, (int)files.n, files.v);
    if (json) {
      cJSON *m = matrix_json(cl, ncl, (int)files.n, files.v);
      char *s = cJSON_Print(m);
      FILE *f = fopen(json, "w");
      if (f == NULL || s == NULL || fputs(s, f) < 0) bad++;
      if (f) fclose(f);
      free(s);
      cJSON_Delete(m);
    }
    if (html && write_html(html, cl, ncl, (int)files.n, files.v) != 0) bad++;
  }
  status = bad || !ok ? EXIT_USAGE : failed ? EXIT_VERDICT : EXIT_PASS;
  if (trace_dir == NULL) cli_remove_tree(tmpdir); /* nothing left behind without --trace-dir */
  for (int c = 0; c < ncl; c++) cJSON_Delete(cl[c].report);
  path_list_clear(&files);
out:
  free(paths);
  return status;
}
