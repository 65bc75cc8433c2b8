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
    "FUSEBOX_DIALECT, FUSEBOX_PATH, FUSEBOX_MODEL, FUSEBOX_CALL,\n"
    "FUSEBOX_EFFECT_URL, FUSEBOX_DEADLINE, FUSEBOX_REQUESTS, FUSEBOX_CONCURRENCY;\n"
    "docs/exec.md), then judge what CMD did on the wire against the best-practice\n"
    "verdicts of the scenario's expect table, which hold for any client:\n";
/* ... the list (rpt_expect_best_practice_list), then: */
static const char USAGE_REST[] =
    "and its outcome (CMD's exit status: 0 = ok); attempts, backoff and the\n"
    "deadline are the client's own policy, judged only with --profile and\n"
    "--deadline. A scenario whose point (expect.point) is left unjudged is N/A\n"
    "with the option that would judge it. The deadline counts from CMD's first\n"
    "request, not its start; the start-up is shown beside the result. CMD's\n"
    "standard output is taken as the answer text, and every scenario judges it\n"
    "(verdict `answer`): exit 0 needs an attempt that completed, and the text\n"
    "printed must be one completed attempt's text, not a cut, errored or\n"
    "spliced one, nor a canned answer.\n"
    "\n"
    "options:\n"
    "  --warp F          run CMD under libfaketime F times faster (2..100) while\n"
    "                    the server plays at time scale 1/F; needs the Debian\n"
    "                    package libfaketime\n"
    "  --profile FILE    also judge policy conformance against a client profile\n"
    "                    (profiles/*.lua): attempts, retried failures, backoff gaps,\n"
    "                    Retry-After, as the profile promises (verdict `profile`)\n"
    "  --upstream URL    the real provider an upstream{} step forwards its attempt to,\n"
    "                    with that step's faults on the real answer (docs/upstream.md);\n"
    "                    CMD's credentials go to this origin only, never to a file\n";
#define EXEC_OPTS (CLI_OPT_REPORTS | CLI_OPT_MARKDOWN | CLI_OPT_SEED | CLI_OPT_TIMEOUT | CLI_OPT_TRACE_DIR | \
                   CLI_OPT_JOBS | CLI_OPT_SELECT | CLI_OPT_WITHOUT | CLI_OPT_DEADLINE)

/* Prints list (", " between names) indented by two, wrapped at 78 columns. */
static void put_wrapped(FILE *f, const char *list) {
  size_t col = 0;
  for (const char *p = list; *p;) {
    size_t w = strcspn(p, " ");
    if (col > 2 && col + 1 + w > 78) {
      fputc('\n', f);
      col = 0;
    }
    if (col == 0) col = (size_t)fprintf(f, "  ");
    else col += (size_t)fprintf(f, " ");
    col += (size_t)fprintf(f, "%.*s", (int)w, p);
    p += w;
    while (*p == ' ') p++;
  }
  if (col) fputc('\n', f);
}

static void exec_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  char list[512];
  rpt_expect_best_practice_list(list, sizeof list);
  fputs(USAGE, f);
  put_wrapped(f, list);
  fputs(USAGE_REST, f);
  cli_common_usage(f, EXEC_OPTS, &d);
  fputs("Exit status: 0 every verdict holds, 1 a verdict failed, 2 usage or input\n"
        "error (a scenario with nothing to judge, a command that cannot start).\n", f);
}

/*
 * The part of an expect table exec judges: the keys reports' families table
 * marks best practice (what holds for any client, whatever it promises) or
 * always judged (the outcome, the declared exercise, the scenario's point, so
 * that reports say when it went unjudged); rpt_expect_kind_of says which.
 * Attempt counts, backoff and the deadline are a client's own policy, not
 * judged here; --deadline puts the deadline back (the scenario's own, or S
 * seconds), --profile adds the profile. Caller frees.
 */
static char *best_practice(const char *expect_json, const char *profile_json,
                           const exec_opts *o) {
  cJSON *e = expect_json ? cJSON_Parse(expect_json) : NULL;
  cJSON *out = cJSON_CreateObject();
  const cJSON *k;
  cJSON_ArrayForEach(k, e) { /* which keys: reports' families table says */
    if (rpt_expect_kind_of(k->string) != RPT_FAMILY_POLICY)
      cJSON_AddItemToObject(out, k->string, cJSON_Duplicate(k, 1));
  }
  const cJSON *dl = cJSON_GetObjectItemCaseSensitive(e, "within_deadline");
  if (dl && !cJSON_IsFalse(dl) && o->deadline_own)
    cJSON_AddItemToObject(out, "within_deadline", cJSON_Duplicate(dl, 1));
  else if (dl && !cJSON_IsFalse(dl) && o->deadline_s > 0)
    cJSON_AddNumberToObject(out, "within_deadline", o->deadline_s);
  cJSON_Delete(e);
  cJSON *prof = profile_json ? cJSON_Parse(profile_json) : NULL;
  if (prof) cJSON_AddItemToObject(out, "profile", prof);
  char *s = cJSON_PrintUnformatted(out);
  cJSON_Delete(out);
  return s;
}

/* One (client, scenario) cell of a suite: prepared, then played by a worker. */
typedef struct xslot {
  const exec_client *client;
  const char *file;
  char base[4000];
  char error[EXEC_ERRLEN]; /* non-empty: could not be played (exit 2) */
  char skip[256];          /* non-empty: skipped, with the reason */
  char *expect;            /* the expect table judged (owned) */
  sim_scenario *sc;        /* loaded while being played (owned) */
  sim_scenario *loaded;    /* handed over by exec_opts.scenarios, not validated (owned) */
  exec_call call;
  exec_result res;
} xslot;

typedef struct xsuite {
  xslot *slots;
  size_t n;
  atomic_size_t next;
  const exec_opts *o;
} xsuite;

/* Loads and validates the scenario once (cli_scenario_load, the same as
   check, run and serve; or validates the load --tags made), reads what it
   asks and expects; sets error or skip. */
static void prepare(xslot *s, const exec_opts *o) {
  char lerr[SIM_ERRLEN];
  sim_scenario *raw = s->loaded;
  s->loaded = NULL;
  if ((raw ? cli_scenario_validate(raw, &s->sc, lerr)
           : cli_scenario_load(s->file, o->seed, &s->sc, lerr)) != SIM_OK) {
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
    s->expect = best_practice(expect_json, o->profile_json, o);
    if (o->deadline_s > 0) s->call.deadline_s = o->deadline_s; /* told as FUSEBOX_DEADLINE */
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
    const exec_client *cl = s->client;
    if (!x->o->quiet) {
      if (x->o->cmd && strcmp(x->o->cmd, "exec") != 0)
        fprintf(stderr, "fusebox %s: %s: %s ...\n", x->o->cmd, cl->label, s->file);
      else
        fprintf(stderr, "fusebox exec: %s ...\n", s->file);
    }
    prepare(s, x->o);
    /* A skipped scenario is not played: reported as skipped, with the reason. */
    if (!s->error[0] && !s->skip[0] &&
        exec_scenario(s->sc, &s->call, cl->argv, x->o, cl->label, s->base, &s->res, s->error) != 0 &&
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
    fprintf(stderr, "fusebox %s: %s\n", o->cmd ? o->cmd : "exec", s->error);
    rpt_run_add_error(run, NULL, s->file, s->error);
    return 1;
  }
  if (s->skip[0]) /* neither a pass nor a failure */
    return rpt_run_add_skipped(run, NULL, s->file, label, "capability", s->skip) != RPT_OK;
  rpt_input in = {.file = s->file, .client = label, .trace_path = s->res.trace_path,
                  .expect_json = s->expect ? s->expect : "{}", .wall_ms = s->res.wall_ms};
  char rerr[RPT_ERRLEN];
  int rc = RPT_OK;
  if (o->temp_traces) {
    rpt_trace *tr = NULL;
    rc = rpt_trace_read_file(s->res.trace_path, &tr, rerr);
    in.trace = tr;
    in.trace_path = NULL;
  }
  if (rc != RPT_OK || rpt_run_add(run, &in, rerr) != RPT_OK) {
    rpt_run_add_error(run, NULL, s->file, rerr);
    return 1;
  }
  char last[200], ev[512];
  exec_last_stderr(&s->res, last, sizeof last);
  if (s->res.end_reason[0])
    snprintf(ev, sizeof ev, "the command was %s, and killed", s->res.end_reason);
  else if (s->res.timed_out)
    snprintf(ev, sizeof ev, "the command was still running after %.0f s and was killed",
             o->timeout_s);
  else
    snprintf(ev, sizeof ev, "the command exited %d after %.0f ms%s%s", s->res.exit_code,
             s->res.wall_ms, last[0] ? ": " : "", last);
  rpt_run_add_verdict(run, "command_finished",
                      s->res.timed_out || s->res.exit_code >= 126 ? RPT_FAIL : RPT_PASS, ev);
  return 0;
}

/* Plays every (client, scenario) cell, o->jobs at once; see exec.h. */
/* Copies the options exec and matrix share from the parsed common options. */
void exec_opts_take(exec_opts *o, const cli_common *c, const char *cmd) {
  o->timeout_s = c->timeout_s;
  o->seed = c->seed;
  o->jobs = c->jobs;
  o->quiet = c->quiet;
  if (c->deadline && strcmp(c->deadline, "scenario") == 0) o->deadline_own = 1;
  else if (c->deadline) o->deadline_s = strtod(c->deadline, NULL); /* checked by the option table */
  o->without = c->without;
  o->cmd = cmd;
}

int exec_suites(const exec_client *clients, size_t nclients, char **files, size_t nfiles,
                const exec_opts *o, const char *dir) {
  size_t ncells = nclients * nfiles;
  xslot *slots = calloc(ncells ? ncells : 1, sizeof *slots);
  if (slots == NULL) return (int)ncells;
  /* Client after client, each in file order: -j 1 plays them as listed. */
  for (size_t c = 0; c < nclients; c++)
    for (size_t i = 0; i < nfiles; i++) {
      xslot *s = &slots[c * nfiles + i];
      const char *slash = strrchr(files[i], '/');
      s->client = &clients[c];
      s->file = files[i];
      if (c == 0 && o->scenarios) { /* loaded already (--tags): taken */
        s->loaded = o->scenarios[i];
        o->scenarios[i] = NULL;
      }
      snprintf(s->base, sizeof s->base, "%s/%s-%zu-%s", dir, clients[c].label, i,
               slash ? slash + 1 : files[i]);
      size_t bl = strlen(s->base);
      if (bl > 4 && strcmp(s->base + bl - 4, ".lua") == 0) s->base[bl - 4] = '\0';
    }
  xsuite x = {.slots = slots, .n = ncells, .o = o};
  atomic_init(&x.next, 0);
  int jobs = o->jobs < 1 ? 1 : o->jobs;
  if ((size_t)jobs > ncells) jobs = ncells ? (int)ncells : 1;
  pthread_t th[CLI_JOBS_MAX];
  int started = 0;
  for (; started < jobs && started < CLI_JOBS_MAX; started++)
    if (pthread_create(&th[started], NULL, worker, &x) != 0) break;
  if (started == 0) worker(&x);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  int bad = 0;
  for (size_t i = 0; i < ncells; i++) {
    bad += add_slot(slots[i].client->run, &slots[i], o, slots[i].client->label);
    free(slots[i].expect);
    sim_scenario_free(slots[i].loaded); /* NULL unless never prepared */
  }
  free(slots);
  return bad;
}

int cmd_exec(int argc, char **argv) {
  exec_opts o = {0};
  cli_common c;
  cli_common_init(&c, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  int dashdash = -1;
  char *profile_json = NULL;
  char **paths = calloc((size_t)argc + 1, sizeof *paths);
  int npaths = 0, status = EXIT_USAGE;
  path_list files = {0};
  char tmpdir[4096];
  int made_tmp = 0;
  sim_scenario **loaded = NULL; /* per file, from --tags (cli_select_tags_kept) */
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
    } else if (v && strcmp(a, "--upstream") == 0) {
      o.upstream = v;
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
  exec_opts_take(&o, &c, "exec");
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
  /* What --tags loads to read the tags is the load each scenario is played from. */
  if (cli_select_tags_kept("exec", &files, c.tags, c.skip_tags, o.seed, &loaded) != 0) goto out;
  o.scenarios = loaded;
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
    o.temp_traces = 1;
  } else if (cli_make_dirs(dir) != 0) {
    fprintf(stderr, "fusebox exec: cannot create %s: %s\n", dir, strerror(errno));
    goto out;
  }
  sim_global_init();
  signal(SIGPIPE, SIG_IGN);
  rpt_run *run = rpt_run_new();
  exec_client client = {.argv = argv + dashdash + 1, .label = "exec", .run = run};
  int bad = run ? exec_suites(&client, 1, files.v, files.n, &o, dir) : 1;
  if (run) {
    char err[RPT_ERRLEN];
    int wr = cli_make_parents("exec", c.json, c.junit, c.html, c.markdown) != 0;
    if (!c.quiet) rpt_run_write_term(run, stdout, isatty(STDOUT_FILENO));
    if (c.json && rpt_run_write_json(run, c.json, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (c.junit && rpt_run_write_junit(run, c.junit, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (c.html && rpt_run_write_html(run, c.html, err) != RPT_OK) wr = fprintf(stderr, "fusebox: %s\n", err);
    if (c.markdown && rpt_run_write_markdown(run, c.markdown, err) != RPT_OK)
      wr = fprintf(stderr, "fusebox: %s\n", err);
    status = bad || wr ? EXIT_USAGE : rpt_run_failed(run) ? EXIT_VERDICT : EXIT_PASS;
    if (!c.quiet && !made_tmp) printf("traces and the command's output: %s\n", dir);
    rpt_run_free(run);
  }
out:
  if (made_tmp) cli_remove_tree(tmpdir);
  for (size_t i = 0; loaded && i < files.n; i++) sim_scenario_free(loaded[i]);
  free(loaded);
  path_list_clear(&files);
  free(paths);
  free(profile_json);
  return status;
}
