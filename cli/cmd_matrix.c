/*
 * cmd_matrix.c - `fusebox matrix`: one suite, several clients, one table of
 * clients x scenarios: the retry-policy comparison.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/exec.h"
#include "cli/run.h"

#define MAX_CLIENTS 16

static const char USAGE[] =
    "usage: fusebox matrix --client NAME='CMD' [--client ...] [options] [SCENARIO|FOLDER...]\n"
    "\n"
    "Plays one suite (default: the standard library) with several clients and\n"
    "prints a clients x scenarios table: status, attempts, exit, failed verdicts.\n"
    "A client is NAME='shell command' (run as with exec, in real time), or one\n"
    "of the built-in clients by name: guard, naive, sdk-default.\n"
    "\n"
    "options:\n"
    "  --client SPEC     a client (repeatable, at least one)\n"
    "  --timeout S       kill an external command after S seconds (default 60)\n"
    "  --time-scale F    time scale of the built-in clients (default 0.2)\n"
    "  --trace-dir DIR   keep traces and output (default: a temp dir)\n"
    "  --json FILE       the matrix as JSON\n"
    "  --html FILE       the matrix as a self-contained HTML page\n"
    "  --junit FILE      JUnit XML, one testsuite per client\n"
    "  --quiet           no table, no progress on the terminal\n"
    "A cell is PASS only when the client exercised the scenario, a verdict applied\n"
    "and none failed; N/A means no evidence either way. Cells show the attempts\n"
    "and the exit status of an external command.\n"
    "Exit status: 0 every client passed everything, 1 some verdict failed, 2 usage.\n";

typedef struct mclient {
  char name[64];
  const char *cmd;       /* NULL for a built-in */
  run_client_kind kind;
} mclient;

int cmd_matrix(int argc, char **argv) {
  mclient cl[MAX_CLIENTS];
  int ncl = 0;
  memset(cl, 0, sizeof cl);
  exec_opts eo = {.timeout_s = 60, .seed = 1};
  double scale = 0.2;
  const char *trace_dir = NULL, *json = NULL, *html = NULL, *junit = NULL;
  int quiet = 0;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0, status = EXIT_USAGE;
  if (paths == NULL) return EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double d;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
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
      } else if (strcmp(v, "guard") == 0 || strcmp(v, "naive") == 0 || strcmp(v, "sdk-default") == 0) {
        snprintf(c->name, sizeof c->name, "%s", v);
        c->kind = strcmp(v, "guard") == 0 ? RUN_CLIENT_GUARD
                  : strcmp(v, "naive") == 0 ? RUN_CLIENT_NAIVE : RUN_CLIENT_SDK;
      } else {
        fprintf(stderr, "fusebox matrix: --client takes NAME='CMD' or guard, naive, sdk-default\n");
        goto out;
      }
      if (!c->name[0] || (c->cmd && !c->cmd[0]) || strpbrk(c->name, "/ ")) {
        fprintf(stderr, "fusebox matrix: bad client '%s'\n", v);
        goto out;
      }
      ncl++;
      i++;
    } else if (strcmp(a, "--timeout") == 0) {
      if (cli_parse_double(a, v, 0.1, 86400, &d) != 0) goto out;
      eo.timeout_s = d;
      i++;
    } else if (strcmp(a, "--time-scale") == 0) {
      if (cli_parse_double(a, v, 0.01, 100, &d) != 0) goto out;
      scale = d;
      i++;
    } else if (strcmp(a, "--trace-dir") == 0 && v) {
      trace_dir = v;
      i++;
    } else if (strcmp(a, "--json") == 0 && v) {
      json = v;
      i++;
    } else if (strcmp(a, "--html") == 0 && v) {
      html = v;
      i++;
    } else if (strcmp(a, "--junit") == 0 && v) {
      junit = v;
      i++;
    } else if (strcmp(a, "--quiet") == 0) {
      quiet = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox matrix: unknown or incomplete option '%s'\n\n%s", a, USAGE);
      goto out;
    } else {
      paths[npaths++] = argv[i];
    }
  }
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
  int bad = 0;
  rpt_matrix *m = rpt_matrix_new();
  if (m == NULL) bad++;
  for (int c = 0; m && c < ncl; c++) {
    rpt_run *run = rpt_run_new();
    if (run == NULL) {
      bad++;
      break;
    }
    if (!quiet) fprintf(stderr, "fusebox matrix: client %s\n", cl[c].name);
    if (cl[c].cmd) {
      char *sh[] = {"/bin/sh", "-c", (char *)cl[c].cmd, NULL};
      bad += exec_suite(run, files.v, files.n, sh, &eo, cl[c].name, dir);
    } else {
      run_opts ro = {.client = cl[c].kind, .jobs = 4, .scale = scale, .seed = eo.seed};
      int le = 0;
      run_suite(run, files.v, files.n, &ro, &le);
      bad += le;
    }
    if (rpt_matrix_add(m, cl[c].name, cl[c].cmd, run) != RPT_OK) bad++;
  }
  if (m) {
    char err[RPT_ERRLEN];
    if (!quiet && rpt_matrix_write_term(m, stdout, isatty(STDOUT_FILENO)) != RPT_OK) bad++;
    if (json && rpt_matrix_write_json(m, json, err) != RPT_OK) bad += fprintf(stderr, "fusebox: %s\n", err) > 0;
    if (html && rpt_matrix_write_html(m, html, err) != RPT_OK) bad += fprintf(stderr, "fusebox: %s\n", err) > 0;
    if (junit && rpt_matrix_write_junit(m, junit, err) != RPT_OK) bad += fprintf(stderr, "fusebox: %s\n", err) > 0;
  }
  status = bad ? EXIT_USAGE : rpt_matrix_failed(m) ? EXIT_VERDICT : EXIT_PASS;
  rpt_matrix_free(m);
  path_list_clear(&files);
out:
  free(paths);
  return status;
}
