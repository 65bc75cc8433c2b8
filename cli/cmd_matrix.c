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
#include "cli/options.h"
#include "cli/exec.h"
#include "cli/run.h"

#define MAX_CLIENTS 16

static const char USAGE[] =
    "usage: fusebox matrix --client NAME='CMD' [--client ...] [options] [SCENARIO|FOLDER...]\n"
    "\n"
    CLI_NAME_HELP "\n"
    "Plays one suite (default: the standard library) with several clients and\n"
    "prints a clients x scenarios table: status, attempts, exit, failed verdicts.\n"
    "A client is NAME='shell command' (run as with exec, in real time), or one\n"
    "of the built-in clients by name: guard, naive, sdk-default.\n"
    "\n"
    "options:\n"
    "  --client SPEC     a client (repeatable, at least one)\n";
static const char TAIL[] =
    "--time-scale applies to the built-in clients; commands play in real time.\n"
    "A cell is PASS only when the client exercised the scenario, a verdict applied\n"
    "and none failed; N/A means no evidence either way. Cells show the attempts\n"
    "and the exit status of an external command.\n"
    "Exit status: 0 every client passed everything, 1 some verdict failed, 2 usage.\n";
#define MATRIX_OPTS (CLI_OPT_REPORTS | CLI_OPT_SCALE | CLI_OPT_SEED | CLI_OPT_TIMEOUT | \
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
} mclient;

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
  eo.quiet = co.quiet;
  double scale = co.time_scale;
  const char *trace_dir = co.trace_dir, *json = co.json, *html = co.html, *junit = co.junit;
  int quiet = co.quiet;
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
  if (trace_dir == NULL) cli_remove_tree(tmpdir); /* nothing left behind without --trace-dir */
  path_list_clear(&files);
out:
  free(paths);
  return status;
}
