/*
 * cmd_exec.c - `fusebox exec SCENARIO... -- CMD [ARGS...]`: judges any client
 * with a base URL on what it did on the wire, in real time.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/exec.h"

static const char USAGE[] =
    "usage: fusebox exec [options] SCENARIO|FOLDER... -- CMD [ARGS...]\n"
    "\n"
    "For each scenario: serve it on a free loopback port, run CMD with\n"
    "  OPENAI_BASE_URL=http://127.0.0.1:P/v1  ANTHROPIC_BASE_URL=http://127.0.0.1:P\n"
    "  FUSEBOX_URL=http://127.0.0.1:P  FUSEBOX_SCENARIO=<file>\n"
    "  (and placeholder OPENAI_API_KEY / ANTHROPIC_API_KEY when unset),\n"
    "then judge what CMD did on the wire against the best-practice part of the\n"
    "scenario's expect table (no_retry_after, retry_after_honoured, side_effects,\n"
    "no_stream_splice, max_requests, herd, cost) and its outcome (CMD's exit\n"
    "status); attempts, backoff and the deadline are the client's own policy.\n"
    "Real time: no compression. CMD's exit status is its outcome (0 = ok) and\n"
    "its standard output is taken as the answer text (for no_stream_splice).\n"
    "\n"
    "options:\n"
    "  --timeout S       kill CMD after S seconds (default 60)\n"
    "  --trace-dir DIR   keep traces and CMD's output in DIR (default: a temp dir)\n"
    "  --seed N          seed for the scenarios' math.random (default 1)\n"
    "  --profile FILE    also judge policy conformance against a client profile\n"
    "                    (profiles/*.lua): attempts, retried failures, backoff gaps,\n"
    "                    Retry-After, as the profile promises (verdict `profile`)\n"
    "  --json FILE  --junit FILE  --html FILE  --quiet   as for run\n";

/*
 * The best-practice part of an expect table: what holds for any client,
 * whatever it promises (no retry after a permanent error, Retry-After as a
 * floor, no duplicate side effect, no stream splice, bounded amplification,
 * no herd, bounded cost, the outcome a good client ends with). Attempt
 * counts, backoff and the deadline are a client's own policy, not judged
 * here. Caller frees.
 */
static char *best_practice(const char *expect_json, const char *profile_json) {
  static const char *const KEEP[] = {"no_retry_after", "retry_after_honoured", "side_effects",
                                     "no_stream_splice", "max_requests", "herd", "cost",
                                     "outcome", "exercised", NULL};
  cJSON *e = expect_json ? cJSON_Parse(expect_json) : NULL;
  cJSON *out = cJSON_CreateObject();
  const cJSON *k;
  cJSON_ArrayForEach(k, e) {
    for (int i = 0; KEEP[i]; i++)
      if (strcmp(k->string, KEEP[i]) == 0)
        cJSON_AddItemToObject(out, k->string, cJSON_Duplicate(k, 1));
  }
  cJSON_Delete(e);
  cJSON *prof = profile_json ? cJSON_Parse(profile_json) : NULL;
  if (prof) cJSON_AddItemToObject(out, "profile", prof);
  char *s = cJSON_PrintUnformatted(out);
  cJSON_Delete(out);
  return s;
}

/* Runs one client over the scenarios into run; returns -1 on a usage error. */
int exec_suite(rpt_run *run, char **files, size_t nfiles, char **argv, const exec_opts *o,
               const char *label, const char *dir) {
  int bad = 0;
  for (size_t i = 0; i < nfiles; i++) {
    char base[4096];
    const char *slash = strrchr(files[i], '/');
    snprintf(base, sizeof base, "%s/%s-%zu-%s", dir, label, i, slash ? slash + 1 : files[i]);
    size_t bl = strlen(base);
    if (bl > 4 && strcmp(base + bl - 4, ".lua") == 0) base[bl - 4] = '\0';
    exec_result res;
    char err[EXEC_ERRLEN];
    fprintf(stderr, "fusebox exec: %s ...\n", files[i]);
    sim_scenario *sc = NULL;
    char lerr[SIM_ERRLEN];
    if (cli_scenario_load(files[i], o->seed, &sc, lerr) != SIM_OK) {
      snprintf(err, sizeof err, "%s", lerr);
    } else if (exec_scenario(sc, argv, o, label, base, &res, err) == 0) {
      err[0] = '\0';
    }
    char *expect = sc && !err[0] ? best_practice(sim_scenario_expect_json(sc), o->profile_json)
                                 : NULL;
    sim_scenario_free(sc);
    if (err[0]) {
      fprintf(stderr, "fusebox exec: %s\n", err);
      rpt_run_add_error(run, NULL, files[i], err);
      bad++;
      continue;
    }
    rpt_input in = {.file = files[i], .client = label, .trace_path = res.trace_path,
                    .expect_json = expect ? expect : "{}", .wall_ms = res.wall_ms};
    char rerr[RPT_ERRLEN];
    int added = rpt_run_add(run, &in, rerr);
    free(expect);
    if (added != RPT_OK) {
      rpt_run_add_error(run, NULL, files[i], rerr);
      bad++;
      continue;
    }
    char last[200], ev[512];
    exec_last_stderr(&res, last, sizeof last);
    if (res.timed_out)
      snprintf(ev, sizeof ev, "the command was still running after %.0f s and was killed",
               o->timeout_s);
    else
      snprintf(ev, sizeof ev, "the command exited %d after %.0f ms%s%s", res.exit_code,
               res.wall_ms, last[0] ? ": " : "", last);
    rpt_run_add_verdict(run, "command_finished", res.timed_out || res.exit_code >= 126 ? RPT_FAIL : RPT_PASS, ev);
  }
  return bad;
}

int cmd_exec(int argc, char **argv) {
  exec_opts o = {.timeout_s = 60, .seed = 1};
  const char *trace_dir = NULL, *json = NULL, *junit = NULL, *html = NULL;
  int quiet = 0, dashdash = -1;
  char *profile_json = NULL;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0;
  if (paths == NULL) return EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double d;
    long n;
    if (strcmp(a, "--") == 0) {
      dashdash = i;
      break;
    } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      free(paths);
      return EXIT_PASS;
    } else if (strcmp(a, "--timeout") == 0) {
      if (cli_parse_double(a, v, 0.1, 86400, &d) != 0) goto usage;
      o.timeout_s = d;
      i++;
    } else if (v && strcmp(a, "--profile") == 0) {
      char perr[SIM_ERRLEN];
      free(profile_json);
      profile_json = NULL;
      if (sim_profile_load(v, &profile_json, perr) != SIM_OK) {
        fprintf(stderr, "fusebox exec: %s\n", perr);
        goto usage;
      }
      if (rpt_profile_check(profile_json, perr) != RPT_OK) { /* its values, as judged */
        fprintf(stderr, "fusebox exec: %s: %s\n", v, perr);
        goto usage;
      }
      o.profile_json = profile_json;
      i++;
    } else if (strcmp(a, "--seed") == 0) {
      if (cli_parse_int(a, v, 0, 2147483647L, &n) != 0) goto usage;
      o.seed = (uint64_t)n;
      i++;
    } else if (v && strcmp(a, "--trace-dir") == 0) {
      trace_dir = v;
      i++;
    } else if (v && strcmp(a, "--json") == 0) {
      json = v;
      i++;
    } else if (v && strcmp(a, "--junit") == 0) {
      junit = v;
      i++;
    } else if (v && strcmp(a, "--html") == 0) {
      html = v;
      i++;
    } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
      quiet = 1;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox exec: unknown or incomplete option '%s'\n\n%s", a, USAGE);
      goto usage;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  if (dashdash < 0 || dashdash + 1 >= argc || npaths == 0) {
    fprintf(stderr, "fusebox exec: give scenarios, then -- and the command to run\n\n%s", USAGE);
    goto usage;
  }
  char tmpdir[] = "/tmp/fusebox-exec-XXXXXX";
  const char *dir = trace_dir;
  if (dir == NULL) {
    if (mkdtemp(tmpdir) == NULL) goto usage;
    dir = tmpdir;
  } else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fusebox exec: cannot create %s: %s\n", dir, strerror(errno));
    goto usage;
  }
  path_list files = {0};
  if (cli_collect_scenarios(paths, npaths, &files) != 0) {
    path_list_clear(&files);
    goto usage;
  }
  sim_global_init();
  signal(SIGPIPE, SIG_IGN);
  rpt_run *run = rpt_run_new();
  int bad = run ? exec_suite(run, files.v, files.n, argv + dashdash + 1, &o, "exec", dir) : 1;
  int status = EXIT_USAGE;
  if (run) {
    char err[RPT_ERRLEN];
    int wr = 0;
    if (!quiet) rpt_run_write_term(run, stdout, isatty(STDOUT_FILENO));
    if (json && rpt_run_write_json(run, json, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (junit && rpt_run_write_junit(run, junit, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (html && rpt_run_write_html(run, html, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    status = bad || wr ? EXIT_USAGE : rpt_run_failed(run) ? EXIT_VERDICT : EXIT_PASS;
    if (!quiet) printf("traces and the command's output: %s\n", dir);
    rpt_run_free(run);
  }
  path_list_clear(&files);
  free(paths);
  free(profile_json);
  return status;
usage:
  free(paths);
  free(profile_json);
  return EXIT_USAGE;
}
