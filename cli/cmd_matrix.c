/*
 * cmd_matrix.c - `fusebox matrix`: one suite, several clients, one table of
 * clients x scenarios: the retry-policy comparison.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guard/guard.h"
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
    "-j N plays N (client, scenario) cells of the command clients at once, each on\n"
    "its own port; the built-in clients play 4 scenarios at once. --tags and\n"
    "--skip-tags choose the scenarios for every client, as for exec; --without\n"
    "says what the command clients cannot do (the built-in ones can do both).\n"
    "--time-scale applies to the built-in clients; commands play in real time.\n"
    "A cell is PASS only when the client exercised the scenario, a verdict applied\n"
    "and none failed; N/A means no evidence either way. Cells show the attempts\n"
    "and the exit status of an external command.\n"
    "Exit status: 0 every client passed everything, 1 some verdict failed, 2 usage.\n";
#define MATRIX_OPTS (CLI_OPT_REPORTS | CLI_OPT_SCALE | CLI_OPT_SEED | CLI_OPT_TIMEOUT | \
                     CLI_OPT_TRACE_DIR | CLI_OPT_JOBS | CLI_OPT_SELECT | CLI_OPT_WITHOUT | \
                     CLI_OPT_DEADLINE)
#define MATRIX_JOBS 1         /* command cells at once, as exec plays scenarios */
#define MATRIX_BUILTIN_JOBS 4 /* a built-in client's scenarios at once */

static void matrix_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_CLIENT, MATRIX_JOBS);
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
  cli_common_init(&co, CLI_TIME_SCALE_CLIENT, MATRIX_JOBS);
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
  exec_opts_take(&eo, &co, "matrix");
  double scale = co.time_scale;
  const char *trace_dir = co.trace_dir, *json = co.json, *html = co.html, *junit = co.junit;
  int quiet = co.quiet;
  if (ncl == 0) {
    fprintf(stderr, "fusebox matrix: give at least one --client\n\n%s", USAGE);
    goto out;
  }
  path_list files = {0};
  if (cli_collect_scenarios(paths, npaths, &files) != 0 ||
      cli_select_tags("matrix", &files, co.tags, co.skip_tags) != 0) {
    path_list_clear(&files);
    goto out;
  }
  if (files.n == 0) {
    fprintf(stderr, "fusebox matrix: no scenario left to play (check --tags/--skip-tags)\n");
    path_list_clear(&files);
    goto out;
  }
  char tmpdir[] = "/tmp/fusebox-matrix-XXXXXX";
  const char *dir = trace_dir;
  if (dir == NULL) {
    if (mkdtemp(tmpdir) == NULL) {
      path_list_clear(&files);
      goto out;
    }
    dir = tmpdir;
    eo.temp_traces = 1;
  } else if (cli_make_dirs(dir) != 0) {
    fprintf(stderr, "fusebox matrix: cannot create %s: %s\n", dir, strerror(errno));
    path_list_clear(&files);
    goto out;
  }
  /* Servers and built-in clients run on several threads at once, as in run
     and exec; a client that hangs up must not kill the process. */
  sim_global_init();
  guard_global_init();
  signal(SIGPIPE, SIG_IGN);
  int bad = 0;
  rpt_matrix *m = rpt_matrix_new();
  rpt_run *runs[MAX_CLIENTS] = {NULL};
  exec_client ex[MAX_CLIENTS];
  char *sh[MAX_CLIENTS][4];
  size_t nex = 0;
  int ready = m != NULL; /* every client has its run */
  for (int c = 0; ready && c < ncl; c++)
    if ((runs[c] = rpt_run_new()) == NULL) ready = 0;
  if (!ready) bad++;
  /* The command clients: every (client, scenario) cell in one pool of -j. */
  for (int c = 0; ready && c < ncl; c++) {
    if (cl[c].cmd == NULL) continue;
    sh[c][0] = "/bin/sh";
    sh[c][1] = "-c";
    sh[c][2] = (char *)cl[c].cmd;
    sh[c][3] = NULL;
    ex[nex++] = (exec_client){.argv = sh[c], .label = cl[c].name, .run = runs[c]};
  }
  if (ready && nex > 0) bad += exec_suites(ex, nex, files.v, files.n, &eo, dir);
  for (int c = 0; ready && c < ncl; c++) {
    if (cl[c].cmd) continue;
    if (!quiet) fprintf(stderr, "fusebox matrix: client %s\n", cl[c].name);
    run_opts ro = {.client = cl[c].kind, .jobs = MATRIX_BUILTIN_JOBS, .scale = scale,
                   .seed = eo.seed};
    int le = 0;
    run_suite(runs[c], files.v, files.n, &ro, &le);
    bad += le;
  }
  /* The table in the order the clients were given; the matrix owns each run. */
  for (int c = 0; c < ncl; c++) {
    if (runs[c] == NULL) continue;
    if (m == NULL) rpt_run_free(runs[c]);
    else if (rpt_matrix_add(m, cl[c].name, cl[c].cmd, runs[c]) != RPT_OK) bad++;
  }
  if (m) {
    char err[RPT_ERRLEN];
    if (cli_make_parents("matrix", json, html, junit, NULL) != 0) bad++;
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
