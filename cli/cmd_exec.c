/*
 * cmd_exec.c - `fusebox exec SCENARIO... -- CMD [ARGS...]`: judges any client
 * with a base URL on what it did on the wire (docs/exec.md).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/exec.h"
#include "cli/options.h"

static const char USAGE[] =
    "usage: fusebox exec [options] SCENARIO|FOLDER... -- CMD [ARGS...]\n"
    "\n"
    CLI_NAME_HELP "\n"
    "For each scenario: serve it on a free loopback port, run CMD with the base\n"
    "URLs of every SDK family (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, GROQ_BASE_URL),\n"
    "placeholder keys, and what the scenario asks of the client (FUSEBOX_STREAM,\n"
    "FUSEBOX_DIALECT, FUSEBOX_CALL, FUSEBOX_EFFECT_URL, FUSEBOX_MODEL,\n"
    "FUSEBOX_DEADLINE, FUSEBOX_REQUESTS, FUSEBOX_CONCURRENCY; docs/exec.md),\n"
    "then judge what CMD did on the wire against the best-practice part of the\n"
    "scenario's expect table (no_retry_after, retry_after_honoured, side_effects,\n"
    "no_stream_splice, max_requests, herd, cost) and its outcome (CMD's exit\n"
    "status: 0 = ok); attempts, backoff and the deadline are the client's own\n"
    "policy. CMD's standard output is taken as the answer text.\n"
    "\n"
    "options:\n"
    "  --tags T,...      only scenarios with one of these tags\n"
    "  --skip-tags T,... leave out scenarios with one of these tags\n"
    "  --without W,...   what CMD cannot do: stream, effects. Scenarios that need\n"
    "                    it are reported skipped, with the reason (never pass)\n"
    "  --warp F          run CMD under libfaketime F times faster (2..100) while\n"
    "                    the server plays at time scale 1/F; needs the Debian\n"
    "                    package libfaketime\n"
    "  --profile FILE    also judge policy conformance against a client profile\n"
    "                    (profiles/*.lua): attempts, retried failures, backoff gaps,\n"
    "                    Retry-After, as the profile promises (verdict `profile`)\n";
#define EXEC_OPTS (CLI_OPT_REPORTS | CLI_OPT_SEED | CLI_OPT_TIMEOUT | CLI_OPT_TRACE_DIR | CLI_OPT_JOBS)

static void exec_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  fputs(USAGE, f);
  cli_common_usage(f, EXEC_OPTS, &d);
  fputs("Exit status: 0 every verdict holds, 1 a verdict failed, 2 usage or input\n"
        "error (a scenario with nothing to judge, a command that cannot start).\n", f);
}

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
                                     "outcome", "exercised", "tool_integrity", NULL};
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

/* One scenario of a suite: prepared, then played by a worker. */
typedef struct xslot {
  const char *file;
  char base[4000];
  char error[EXEC_ERRLEN]; /* non-empty: could not be played (exit 2) */
  char skip[256];          /* non-empty: skipped, with the reason */
  char *expect;            /* the expect table judged (owned) */
  sim_scenario *sc;        /* loaded while being played (owned) */
  exec_call call;
  exec_result res;
} xslot;

typedef struct xsuite {
  xslot *slots;
  size_t n;
  atomic_size_t next;
  char **argv;
  const exec_opts *o;
  const char *label;
} xsuite;

/* Loads and validates the scenario once (cli_scenario_load, the same as
   check, run and serve), reads what it asks and expects; sets error or skip. */
static void prepare(xslot *s, const exec_opts *o) {
  char lerr[SIM_ERRLEN];
  if (cli_scenario_load(s->file, o->seed, &s->sc, lerr) != SIM_OK) {
    snprintf(s->error, sizeof s->error, "%s", lerr);
    return;
  }
  const char *expect_json = sim_scenario_expect_json(s->sc);
  char err[EXEC_ERRLEN];
  if (cli_nothing_to_judge(expect_json)) {
    snprintf(s->error, sizeof s->error,
             "%s: nothing to judge: the scenario has no expect table (or an empty one)", s->file);
  } else if (exec_describe(sim_scenario_client_json(s->sc), &s->call, err) != 0) {
    snprintf(s->error, sizeof s->error, "%.200s: %.300s", s->file, err);
  } else {
    s->expect = best_practice(expect_json, o->profile_json);
    if ((o->without & EXEC_WITHOUT_STREAM) && s->call.stream)
      snprintf(s->skip, sizeof s->skip,
               "skipped: the scenario streams and the client declared --without stream");
    else if ((o->without & EXEC_WITHOUT_EFFECTS) && s->call.effect)
      snprintf(s->skip, sizeof s->skip,
               "skipped: the scenario calls an effect endpoint and the client declared "
               "--without effects");
  }
}

static void *worker(void *arg) {
  xsuite *x = arg;
  for (;;) {
    size_t i = atomic_fetch_add(&x->next, 1);
    if (i >= x->n) break;
    xslot *s = &x->slots[i];
    if (!x->o->quiet) fprintf(stderr, "fusebox exec: %s ...\n", s->file);
    prepare(s, x->o);
    /* A skipped scenario is not played: reported as skipped, with the reason. */
    if (!s->error[0] && !s->skip[0] &&
        exec_scenario(s->sc, &s->call, x->argv, x->o, x->label, s->base, &s->res, s->error) != 0 &&
        s->error[0] == '\0')
      snprintf(s->error, sizeof s->error, "%s: could not be played", s->file);
    sim_scenario_free(s->sc);
    s->sc = NULL;
  }
  return NULL;
}

/* Adds one played slot to run; returns 1 if it was an error. */
static int add_slot(rpt_run *run, xslot *s, const exec_opts *o, const char *label) {
  if (s->error[0]) {
    fprintf(stderr, "fusebox exec: %s\n", s->error);
    rpt_run_add_error(run, NULL, s->file, s->error);
    return 1;
  }
  if (s->skip[0]) /* neither a pass nor a failure */
    return rpt_run_add_skipped(run, NULL, s->file, label, "capability", s->skip) != RPT_OK;
  rpt_input in = {.file = s->file, .client = label, .trace_path = s->res.trace_path,
                  .expect_json = s->expect ? s->expect : "{}", .wall_ms = s->res.wall_ms};
  char rerr[RPT_ERRLEN];
  if (rpt_run_add(run, &in, rerr) != RPT_OK) {
    rpt_run_add_error(run, NULL, s->file, rerr);
    return 1;
  }
  char last[200], ev[512];
  exec_last_stderr(&s->res, last, sizeof last);
  if (s->res.timed_out)
    snprintf(ev, sizeof ev, "the command was still running after %.0f s and was killed",
             o->timeout_s);
  else
    snprintf(ev, sizeof ev, "the command exited %d after %.0f ms%s%s", s->res.exit_code,
             s->res.wall_ms, last[0] ? ": " : "", last);
  rpt_run_add_verdict(run, "command_finished",
                      s->res.timed_out || s->res.exit_code >= 126 ? RPT_FAIL : RPT_PASS, ev);
  return 0;
}

/* Runs one client over the scenarios into run; see exec.h. */
int exec_suite(rpt_run *run, char **files, size_t nfiles, char **argv, const exec_opts *o,
               const char *label, const char *dir) {
  xslot *slots = calloc(nfiles ? nfiles : 1, sizeof *slots);
  if (slots == NULL) return (int)nfiles;
  for (size_t i = 0; i < nfiles; i++) {
    const char *slash = strrchr(files[i], '/');
    slots[i].file = files[i];
    snprintf(slots[i].base, sizeof slots[i].base, "%s/%s-%zu-%s", dir, label, i,
             slash ? slash + 1 : files[i]);
    size_t bl = strlen(slots[i].base);
    if (bl > 4 && strcmp(slots[i].base + bl - 4, ".lua") == 0) slots[i].base[bl - 4] = '\0';
  }
  xsuite x = {.slots = slots, .n = nfiles, .argv = argv, .o = o, .label = label};
  atomic_init(&x.next, 0);
  int jobs = o->jobs < 1 ? 1 : o->jobs;
  if ((size_t)jobs > nfiles) jobs = nfiles ? (int)nfiles : 1;
  pthread_t th[CLI_JOBS_MAX];
  int started = 0;
  for (; started < jobs && started < CLI_JOBS_MAX; started++)
    if (pthread_create(&th[started], NULL, worker, &x) != 0) break;
  if (started == 0) worker(&x);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  int bad = 0;
  for (size_t i = 0; i < nfiles; i++) {
    bad += add_slot(run, &slots[i], o, label);
    free(slots[i].expect);
  }
  free(slots);
  return bad;
}

/* Splits "a,b" into the NULL-terminated list out (pointers into s). */
static int split_list(char *s, char **out, int max) {
  int n = 0;
  for (char *tok = strtok(s, ","); tok && n < max - 1; tok = strtok(NULL, ","))
    if (tok[0]) out[n++] = tok;
  out[n] = NULL;
  return n;
}

static int has_tag(const sim_scenario_info *info, char **tags) {
  for (int i = 0; tags[i]; i++)
    for (int k = 0; k < info->ntags; k++)
      if (strcmp(info->tags[k], tags[i]) == 0) return 1;
  return 0;
}

/* Keeps the files selected by --tags/--skip-tags; -1 when one does not load. */
static int select_tags(path_list *files, char **want, char **skip) {
  size_t k = 0;
  int rc = 0;
  for (size_t i = 0; i < files->n; i++) {
    sim_scenario_info info = {0};
    char err[SIM_ERRLEN];
    int keep = 1;
    if (sim_scenario_inspect(files->v[i], &info, err) != SIM_OK) {
      fprintf(stderr, "fusebox exec: %s\n", err);
      rc = -1;
    } else {
      if (want[0] && !has_tag(&info, want)) keep = 0;
      if (skip[0] && has_tag(&info, skip)) keep = 0;
    }
    sim_scenario_info_clear(&info);
    if (keep) files->v[k++] = files->v[i];
    else free(files->v[i]);
  }
  files->n = k;
  return rc;
}

int cmd_exec(int argc, char **argv) {
  exec_opts o = {0};
  cli_common c;
  cli_common_init(&c, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  char *want[33] = {NULL}, *skip[33] = {NULL};
  char *tags_buf = NULL, *skip_buf = NULL;
  int dashdash = -1;
  char *profile_json = NULL;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0, status = EXIT_USAGE;
  path_list files = {0};
  char tmpdir[4096];
  int made_tmp = 0;
  if (paths == NULL) return EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--") == 0) {
      dashdash = i;
      break;
    }
    int r = cli_common_option("exec", argc, argv, &i, EXEC_OPTS, &c);
    if (r == 1) continue;
    if (r < 0) goto out;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      exec_usage(stdout);
      status = EXIT_PASS;
      goto out;
    } else if (v && strcmp(a, "--profile") == 0) {
      char perr[SIM_ERRLEN];
      free(profile_json);
      profile_json = NULL;
      if (sim_profile_load(v, &profile_json, perr) != SIM_OK) {
        fprintf(stderr, "fusebox exec: %s\n", perr);
        goto out;
      }
      if (rpt_profile_check(profile_json, perr) != RPT_OK) { /* its values, as judged */
        fprintf(stderr, "fusebox exec: %s: %s\n", v, perr);
        goto out;
      }
      o.profile_json = profile_json;
      i++;
    } else if (v && strcmp(a, "--tags") == 0) {
      free(tags_buf);
      tags_buf = strdup(v);
      if (tags_buf == NULL || split_list(tags_buf, want, 33) == 0) goto out;
      i++;
    } else if (v && strcmp(a, "--skip-tags") == 0) {
      free(skip_buf);
      skip_buf = strdup(v);
      if (skip_buf == NULL || split_list(skip_buf, skip, 33) == 0) goto out;
      i++;
    } else if (v && strcmp(a, "--without") == 0) {
      char buf[256], *list[17];
      snprintf(buf, sizeof buf, "%s", v);
      split_list(buf, list, 17);
      for (int k = 0; list[k]; k++) {
        if (strcmp(list[k], "stream") == 0) o.without |= EXEC_WITHOUT_STREAM;
        else if (strcmp(list[k], "effects") == 0) o.without |= EXEC_WITHOUT_EFFECTS;
        else {
          fprintf(stderr, "fusebox exec: --without takes stream and effects, not '%s'\n", list[k]);
          goto out;
        }
      }
      i++;
    } else if (strcmp(a, "--warp") == 0) {
      if (cli_parse_double(a, v, 1, EXEC_WARP_MAX, &o.warp) != 0) goto out;
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox exec: unknown or incomplete option '%s'\n\n", a);
      exec_usage(stderr);
      goto out;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  if (dashdash < 0 || dashdash + 1 >= argc || npaths == 0) {
    fprintf(stderr, "fusebox exec: give scenarios, then -- and the command to run\n\n");
    exec_usage(stderr);
    goto out;
  }
  o.timeout_s = c.timeout_s;
  o.seed = c.seed;
  o.jobs = c.jobs;
  o.quiet = c.quiet;
  if (o.warp > 1) {
    o.faketime_lib = exec_find_faketime();
    if (o.faketime_lib == NULL) {
      fprintf(stderr, "fusebox exec: --warp needs libfaketime, which is not installed "
                      "(Debian: apt-get install libfaketime; or set FUSEBOX_LIBFAKETIME to "
                      "libfaketime.so.1)\n");
      goto out;
    }
  }
  if (cli_collect_scenarios(paths, npaths, &files) != 0) goto out;
  if ((want[0] || skip[0]) && select_tags(&files, want, skip) != 0) goto out;
  if (files.n == 0) {
    fprintf(stderr, "fusebox exec: no scenario left to play (check --tags/--skip-tags)\n");
    goto out;
  }
  const char *dir = c.trace_dir;
  if (dir == NULL) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/fusebox-exec-XXXXXX", t && t[0] ? t : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
      fprintf(stderr, "fusebox exec: cannot create a temp dir: %s\n", strerror(errno));
      goto out;
    }
    dir = tmpdir;
    made_tmp = 1;
  } else if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fusebox exec: cannot create %s: %s\n", dir, strerror(errno));
    goto out;
  }
  sim_global_init();
  signal(SIGPIPE, SIG_IGN);
  rpt_run *run = rpt_run_new();
  int bad = run ? exec_suite(run, files.v, files.n, argv + dashdash + 1, &o, "exec", dir) : 1;
  if (run) {
    char err[RPT_ERRLEN];
    int wr = 0;
    if (!c.quiet) rpt_run_write_term(run, stdout, isatty(STDOUT_FILENO));
    if (c.json && rpt_run_write_json(run, c.json, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (c.junit && rpt_run_write_junit(run, c.junit, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (c.html && rpt_run_write_html(run, c.html, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    status = bad || wr ? EXIT_USAGE : rpt_run_failed(run) ? EXIT_VERDICT : EXIT_PASS;
    if (!c.quiet && !made_tmp) printf("traces and the command's output: %s\n", dir);
    rpt_run_free(run);
  }
out:
  if (made_tmp) cli_remove_tree(tmpdir);
  path_list_clear(&files);
  free(paths);
  free(profile_json);
  free(tags_buf);
  free(skip_buf);
  return status;
}
