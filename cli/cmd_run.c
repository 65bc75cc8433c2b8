/*
 * cmd_run.c - `fusebox run`: plays scenarios against a built-in client, each
 * in its own server session on its own port, several at once, then judges
 * every trace and writes the reports. Also `fusebox report`, which judges
 * traces written earlier.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <math.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/run.h"
#include "cli/shard.h"

static const char RUN_USAGE[] =
    "usage: fusebox run [options] [SCENARIO|FOLDER...]\n"
    "\n"
    "Plays each scenario (default: the standard library) against a built-in\n"
    "client, each in its own server session, and judges what happened on the wire.\n"
    "Scenarios expected to take longest (from their client tables) start first;\n"
    "the reports list them in file order.\n"
    "\n" CLI_NAME_HELP "\n"
    "options:\n"
    "  --client NAME     guard (default; the guarded client configured by the\n"
    "                    scenario's client table), naive, or sdk-default\n"
    "  --shard K/N       play the K-th of N shards of the scenarios: the same split\n"
    "                    on every machine (it depends only on the scenarios' paths\n"
    "                    below the folders given and their client tables), balanced\n"
    "                    by expected duration; join the shards' --json reports with\n"
    "                    `fusebox report --merge` (docs/ci.md)\n";
static const char RUN_TAIL[] =
    "\nWith --time-scale F, server delays, client waits and timeouts and verdict\n"
    "tolerances are all times F.\n"
    "Exit status: 0 every verdict holds, 1 a verdict failed, 2 usage or input error\n"
    "(a scenario that does not load, or that broke while serving: a provider\n"
    "function's runtime error, named file:line).\n";
#define RUN_OPTS (CLI_OPT_REPORTS | CLI_OPT_MARKDOWN | CLI_OPT_SCALE | CLI_OPT_SEED | \
                  CLI_OPT_TRACE_DIR | CLI_OPT_JOBS)

static void run_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_CLIENT, CLI_JOBS_AUTO);
  fputs(RUN_USAGE, f);
  cli_common_usage(f, RUN_OPTS, &d);
  fputs(RUN_TAIL, f);
}

static double expected_s(const sim_scenario *sc);

/* One scenario's slot: filled by a worker, read after all are done. */
typedef struct slot {
  const char *file;
  char trace[4096];
  int temp_trace;       /* delete the trace after judging */
  char error[512];      /* non-empty: the scenario could not be played */
  int load_error;       /* the scenario file did not load (exit 2) */
  double wall_ms;
  int failed_verdicts;  /* for the progress line */
  sim_scenario *sc;     /* loaded once by run_suite, played and freed by play_one */
} slot;

typedef struct run_state {
  const run_opts *o;
  slot *slots;
  int *order;           /* slot indexes, the longest expected first */
  int n;
  atomic_int next;
  pthread_mutex_t lock;
  int done, passed, failed;
  int tty;
} run_state;

static double mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* DIR/<path with separators as _>.jsonl, so two scenarios never collide. */
static void trace_name(const char *dir, const char *file, char *out, size_t cap) {
  char flat[1024];
  size_t j = 0;
  const char *f = strncmp(file, "./", 2) == 0 ? file + 2 : file;
  for (size_t i = 0; f[i] && j + 1 < sizeof flat; i++)
    flat[j++] = (f[i] == '/' || f[i] == ' ') ? '_' : f[i];
  flat[j] = '\0';
  if (j > 4 && strcmp(flat + j - 4, ".lua") == 0) flat[j - 4] = '\0';
  snprintf(out, cap, "%s/%s.jsonl", dir, flat);
}

/* Plays one scenario into its trace: the scenario run_suite loaded (taken),
   served, and its client built from the same loaded scenario. */
static void play_one(run_state *st, slot *s, int index) {
  const run_opts *o = st->o;
  sim_scenario *sc = s->sc;
  s->sc = NULL;
  uint64_t seed = o->seed + (uint64_t)index;
  if (sc == NULL) return; /* it did not load: s->error says why */
  if (cli_nothing_to_judge(sim_scenario_expect_json(sc))) {
    snprintf(s->error, sizeof s->error,
             "%s: nothing to judge: the scenario has no expect table (or an empty one)", s->file);
    s->load_error = 1;
    sim_scenario_free(sc);
    return;
  }

  if (o->trace_dir) {
    trace_name(o->trace_dir, s->file, s->trace, sizeof s->trace);
  } else {
    snprintf(s->trace, sizeof s->trace, "/tmp/fusebox-run-%d-%d.jsonl", (int)getpid(), index);
    s->temp_trace = 1;
  }
  double t0 = mono_ms();
  int rc = run_play(sc, o->client, o->scale, seed, s->trace, s->error, sizeof s->error, s->file);
  if (rc == -1) s->temp_trace = 0; /* the server did not start: no trace to delete */
  if (rc == -2) s->load_error = 1;
  s->wall_ms = mono_ms() - t0;
}

/* Plays sc (taken) with a built-in client into trace; see run.h. */
int run_play(sim_scenario *sc, run_client_kind kind, double scale, uint64_t seed,
             const char *trace, char *error, size_t errcap, const char *file) {
  char err[SIM_ERRLEN];
  sim_server_opts so = {.scenario = sc, .trace_path = trace, .time_scale = scale, .seed = seed};
  sim_server *srv = NULL;
  if (sim_server_start(&so, &srv, err) != SIM_OK) {
    snprintf(error, errcap, "%s", err);
    sim_scenario_free(sc);
    return -1;
  }
  int rc = 0;
  guard *g = NULL;
  run_workload w;
  char rerr[RUN_ERRLEN];
  if (run_client_new(sc, kind, srv, scale, seed, &g, &w, rerr) != 0) {
    snprintf(error, errcap, "%s: %s", file, rerr);
  } else if (run_workload_play(g, &w, kind, srv, scale) != 0) {
    snprintf(error, errcap, "%s: some calls could not be made (out of memory?)", file);
  }
  guard_free(g);
  /* A trace cut short by a failed write (a full disk) is no record to
     judge: the run says so and exits 2. */
  if (sim_server_stop(srv, err) != SIM_OK && !error[0]) {
    snprintf(error, errcap, "%s: %s", file, err);
    rc = -2;
  }
  sim_scenario_free(sc);
  return rc;
}

static void *run_worker(void *arg) {
  run_state *st = arg;
  for (;;) {
    int k = atomic_fetch_add(&st->next, 1);
    if (k >= st->n) break;
    int i = st->order[k];
    slot *s = &st->slots[i];
    play_one(st, s, i);
    /* Judge once now for the progress line; the report judges again in order. */
    int bad = 1;
    if (!s->error[0]) {
      rpt_judgement *j = NULL;
      char err[RPT_ERRLEN];
      if (rpt_judge_trace_file(s->trace, NULL, NULL, NULL, &j, err) == RPT_OK)
        bad = rpt_judgement_failed(j) > 0;
      rpt_judgement_free(j);
    }
    pthread_mutex_lock(&st->lock);
    st->done++;
    if (bad) st->failed++;
    else st->passed++;
    rpt_progress(stderr, st->done, st->n, st->passed, st->failed, st->tty);
    pthread_mutex_unlock(&st->lock);
  }
  return NULL;
}

/* Writes the reports asked for; returns 0, or -1 after saying why. */
static int write_reports(const rpt_run *run, const run_opts *o) {
  char err[RPT_ERRLEN];
  int rc = 0;
  if (cli_make_parents("run", o->json, o->junit, o->html, o->markdown) != 0) return -1;
  if (!o->quiet) rpt_run_write_term(run, stdout, isatty(STDOUT_FILENO));
  if (o->json && rpt_run_write_json(run, o->json, err) != RPT_OK) {
    fprintf(stderr, "fusebox: %s\n", err);
    rc = -1;
  }
  if (o->junit && rpt_run_write_junit(run, o->junit, err) != RPT_OK) {
    fprintf(stderr, "fusebox: %s\n", err);
    rc = -1;
  }
  if (o->html && rpt_run_write_html(run, o->html, err) != RPT_OK) {
    fprintf(stderr, "fusebox: %s\n", err);
    rc = -1;
  }
  if (o->markdown && rpt_run_write_markdown(run, o->markdown, err) != RPT_OK) {
    fprintf(stderr, "fusebox: %s\n", err);
    rc = -1;
  }
  return rc;
}

/* Copies the shared options into o. */
static void take_common(const cli_common *c, run_opts *o) {
  o->json = c->json;
  o->junit = c->junit;
  o->html = c->html;
  o->markdown = c->markdown;
  o->quiet = c->quiet;
  o->scale = c->time_scale;
  o->seed = c->seed;
  o->trace_dir = c->trace_dir;
  o->jobs = c->jobs;
}

/*
 * Expands paths (the standard library when none) into files, and gives
 * each its shard key: its path from the folder it was found in, that
 * folder's own name included ("scenarios/transient/http_503.lua" whether
 * the folder was given as scenarios/ or /home/ci/repo/scenarios), or the
 * file's own name for a file given by name (koff[i] is where the key
 * starts in files->v[i]). Returns 0, or -1 after saying why.
 */
static int collect_keyed(char **paths, int npaths, path_list *files, size_t **koff) {
  char *defv[1] = {(char *)cli_scenario_dir()};
  if (npaths == 0 && defv[0] != NULL) {
    paths = defv;
    npaths = 1;
  }
  if (npaths == 0) return cli_collect_scenarios(paths, 0, files); /* says why */
  for (int i = 0; i < npaths; i++) {
    size_t before = files->n;
    /* A library name keys as the folder or file it names. */
    char given[4096];
    if (cli_resolve_scenario(paths[i], given, sizeof given) != 0) return -1;
    char *one[1] = {given};
    if (cli_collect_scenarios(one, 1, files) != 0) return -1;
    size_t *k = realloc(*koff, (files->n ? files->n : 1) * sizeof *k);
    if (k == NULL) return -1;
    *koff = k;
    struct stat st;
    int dir = stat(given, &st) == 0 && S_ISDIR(st.st_mode);
    size_t rl = strlen(given);
    for (size_t f = before; f < files->n; f++) {
      const char *p = files->v[f];
      if (dir) {
        /* The folder's own name: back from its end, past trailing slashes. */
        size_t e = rl;
        while (e > 0 && given[e - 1] == '/') e--;
        size_t b = e;
        while (b > 0 && given[b - 1] != '/') b--;
        int dot = (e - b == 1 && given[b] == '.') || (e - b == 2 && given[b] == '.' &&
                                                          given[b + 1] == '.');
        k[f] = dot || e == b ? rl + (rl > 0 && given[rl - 1] == '/' ? 0 : 1) : b;
        if (k[f] > strlen(p)) k[f] = strlen(p);
      } else {
        const char *slash = strrchr(p, '/');
        k[f] = slash ? (size_t)(slash + 1 - p) : 0;
      }
    }
  }
  return 0;
}

/* What --shard K/N picks: its files, in path order, and where each stands
   in the whole suite (the suite ordered by key). */
typedef struct shard_pick {
  char **files;
  int *index;
  double *expected;
  sim_scenario **scenarios; /* loaded while planning, for run_suite to take */
  size_t n;
  rpt_shard info;
} shard_pick;

static void shard_pick_clear(shard_pick *p) {
  for (size_t i = 0; p->scenarios && i < p->n; i++) sim_scenario_free(p->scenarios[i]);
  free(p->files);
  free(p->index);
  free(p->expected);
  free(p->scenarios);
  memset(p, 0, sizeof *p);
}

typedef struct keyed {
  const char *key;
  int i;
} keyed;

static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Plans the suite: each file loaded once (seed + its index) for its
   expected duration, and with a shard (k >= 1) the files it plays; the
   loaded scenarios go on to run_suite in out->scenarios. A file whose place
   in the shard differs from its place in the suite is dropped there (NULL)
   and loaded again by run_suite, with the seed of its place in the shard.
   Returns 0, or -1 when out of memory. */
static int plan_suite(const path_list *files, const size_t *koff, int k, int n,
                      uint64_t seed, shard_pick *out) {
  size_t m = files->n;
  cli_shard_item *items = calloc(m ? m : 1, sizeof *items);
  int *bin = calloc(m ? m : 1, sizeof *bin);
  keyed *order = calloc(m ? m : 1, sizeof *order);
  const char **keys = calloc(m ? m : 1, sizeof *keys);
  out->files = calloc(m ? m : 1, sizeof *out->files);
  out->index = calloc(m ? m : 1, sizeof *out->index);
  out->expected = calloc(m ? m : 1, sizeof *out->expected);
  out->scenarios = calloc(m ? m : 1, sizeof *out->scenarios);
  double *all = calloc(m ? m : 1, sizeof *all);
  sim_scenario **sc = calloc(m ? m : 1, sizeof *sc);
  int rc = -1;
  if (!items || !bin || !order || !keys || !out->files || !out->index || !out->expected ||
      !out->scenarios || !all || !sc)
    goto done;
  for (size_t i = 0; i < m; i++) {
    char err[SIM_ERRLEN]; /* a file that does not load: run_suite says why */
    if (cli_scenario_load(files->v[i], seed + (uint64_t)i, &sc[i], err) != SIM_OK) sc[i] = NULL;
    keys[i] = files->v[i] + koff[i];
    all[i] = expected_s(sc[i]);
    items[i] = (cli_shard_item){keys[i], all[i] + CLI_SHARD_BASE_S};
  }
  if (k < 1) { /* no shard: every file */
    for (size_t i = 0; i < m; i++) {
      out->files[i] = files->v[i];
      out->index[i] = (int)i;
      out->expected[i] = all[i];
      out->scenarios[i] = sc[i];
      sc[i] = NULL;
    }
    out->n = m;
    rc = 0;
    goto done;
  }
  if (cli_shard_assign(items, m, n, bin) < 0) goto done;
  /* Place in the suite: rank by key, the same on every machine. */
  for (size_t i = 0; i < m; i++) order[i] = (keyed){keys[i], (int)i};
  qsort(order, m, sizeof *order, by_key);
  int *rank = calloc(m ? m : 1, sizeof *rank);
  if (rank == NULL) goto done;
  for (size_t r = 0; r < m; r++) rank[order[r].i] = (int)r;
  for (size_t i = 0; i < m; i++) {
    if (bin[i] != k - 1) continue;
    out->files[out->n] = files->v[i];
    out->index[out->n] = rank[i];
    out->expected[out->n] = all[i];
    if (out->n == i) { /* its seed is the same in the shard */
      out->scenarios[out->n] = sc[i];
      sc[i] = NULL;
    }
    out->n++;
  }
  free(rank);
  out->info.k = k;
  out->info.n = n;
  out->info.total = (int)m;
  snprintf(out->info.set, sizeof out->info.set, "%016llx",
           (unsigned long long)cli_shard_set_id(items, m));
  rc = 0;
done:
  free(items);
  free(bin);
  free(order);
  free(keys);
  free(all);
  for (size_t i = 0; sc && i < m; i++) sim_scenario_free(sc[i]);
  free(sc);
  return rc;
}

/* The workers when -j is not given: as many as let the longest scenario
   set the pace (shard.h), from CLI_JOBS_AUTO_MIN to CLI_JOBS_AUTO_MAX,
   never more than the scenarios. */
static int auto_jobs(const shard_pick *p) {
  cli_shard_item *items = calloc(p->n ? p->n : 1, sizeof *items);
  if (items == NULL) return CLI_JOBS_AUTO_MIN;
  for (size_t i = 0; i < p->n; i++)
    items[i] = (cli_shard_item){p->files[i], p->expected[i] + CLI_SHARD_BASE_S};
  int j = cli_shard_workers(items, p->n, CLI_JOBS_AUTO_MIN, CLI_JOBS_AUTO_MAX);
  free(items);
  return j;
}

int cmd_run(int argc, char **argv) {
  run_opts o = {.client = RUN_CLIENT_GUARD, .progress = 1};
  cli_common c;
  cli_common_init(&c, CLI_TIME_SCALE_CLIENT, CLI_JOBS_AUTO);
  int shard_k = 0, shard_n = 0;
  char **paths = calloc((size_t)argc, sizeof *paths);
  int npaths = 0;
  if (paths == NULL) return EXIT_USAGE;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int r = cli_common_option("run", argc, argv, &i, RUN_OPTS, &c);
    if (r == 1) continue;
    if (r < 0) {
      free(paths);
      return EXIT_USAGE;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      run_usage(stdout);
      free(paths);
      return EXIT_PASS;
    } else if (strcmp(a, "--client") == 0 && v) {
      int k = cli_client_kind(v);
      if (k < 0) {
        fprintf(stderr, "fusebox run: --client is " CLI_CLIENT_NAMES ", not '%s'\n", v);
        free(paths);
        return EXIT_USAGE;
      }
      o.client = (run_client_kind)k;
      i++;
    } else if (strcmp(a, "--shard") == 0) {
      char err[160];
      if (cli_shard_parse(v, &shard_k, &shard_n, err, sizeof err) != 0) {
        fprintf(stderr, "fusebox run: %s\n", err);
        free(paths);
        return EXIT_USAGE;
      }
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox run: unknown or incomplete option '%s'\n\n", a);
      run_usage(stderr);
      free(paths);
      return EXIT_USAGE;
    } else {
      paths[npaths++] = argv[i];
    }
  }
  take_common(&c, &o);
  if (o.trace_dir && cli_make_dirs(o.trace_dir) != 0) {
    fprintf(stderr, "fusebox run: cannot create %s: %s\n", o.trace_dir, strerror(errno));
    free(paths);
    return EXIT_USAGE;
  }
  path_list files = {0};
  size_t *koff = NULL;
  int rc = collect_keyed(paths, npaths, &files, &koff);
  free(paths);
  shard_pick pick = {0};
  if (rc == 0 && plan_suite(&files, koff, shard_k, shard_n, c.seed, &pick) != 0) {
    fprintf(stderr, "fusebox run: out of memory\n");
    rc = -1;
  }
  free(koff);
  if (rc != 0) {
    shard_pick_clear(&pick);
    path_list_clear(&files);
    return EXIT_USAGE;
  }
  if (o.jobs == CLI_JOBS_AUTO) o.jobs = auto_jobs(&pick);
  o.expected = pick.expected;
  o.scenarios = pick.scenarios;
  rpt_run *run = rpt_run_new();
  int load_errors = 0;
  double t0 = mono_ms();
  if (run && run_suite(run, pick.files, pick.n, &o, &load_errors) != 0) {
    rpt_run_free(run);
    run = NULL;
  }
  double wall = mono_ms() - t0;
  int status = EXIT_USAGE;
  if (run && shard_k > 0 && rpt_run_set_shard(run, &pick.info, pick.index, (int)pick.n) != 0) {
    fprintf(stderr, "fusebox run: out of memory\n");
    rpt_run_free(run);
    run = NULL;
  }
  if (run) {
    int wr = write_reports(run, &o);
    int failed = rpt_run_failed(run);
    if (!o.quiet && shard_k > 0)
      printf("shard %d/%d: %zu of %zu scenarios with --client %s, -j %d, in %.1f s (time scale "
             "%g)\n", shard_k, shard_n, pick.n, files.n, run_client_name(o.client), o.jobs,
             wall / 1000.0, o.scale);
    else if (!o.quiet)
      printf("%zu scenarios with --client %s, -j %d, in %.1f s (time scale %g)\n", pick.n,
             run_client_name(o.client), o.jobs, wall / 1000.0, o.scale);
    /* A scenario that broke while serving is an input error, not a client
       regression: CI must not read it as one (exit 2, with file:line). */
    const char *first_err = NULL;
    int broken = rpt_run_scenario_errors(run, &first_err);
    if (broken > 0)
      fprintf(stderr, "fusebox run: %d scenario%s broke while serving (exit 2: fix the "
              "scenario, not the client); first: %s\n", broken, broken == 1 ? "" : "s",
              first_err ? first_err : "?");
    status = load_errors || wr || broken ? EXIT_USAGE : failed ? EXIT_VERDICT : EXIT_PASS;
    rpt_run_free(run);
  }
  shard_pick_clear(&pick);
  path_list_clear(&files);
  return status;
}

static double jnum(const cJSON *o, const char *key, double dflt) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/*
 * How long a scenario is expected to take, in scenario seconds, from its
 * client table (the guard's defaults where a key is absent): per call, the
 * backoff waits of its retries plus one attempt timeout when one is set,
 * capped by the deadline; times the calls one after another (requests /
 * concurrency), times the outer retry layers, plus the spread of the first
 * calls. Only an order key (issue 13): the longest scenarios start first so
 * the run ends when its longest one does. 0 for NULL (a file that did not load).
 */
static double expected_s(const sim_scenario *sc) {
  if (sc == NULL) return 0;
  const char *cj = sim_scenario_client_json(sc);
  cJSON *c = cj ? cJSON_Parse(cj) : NULL;
  guard_policy p = guard_policy_default(); /* the guard's own defaults */
  double requests = jnum(c, "requests", 1), conc = jnum(c, "concurrency", 1);
  double layers = jnum(c, "layers", 1), spread = jnum(c, "spread", 0);
  double deadline = jnum(c, "deadline", p.deadline), attempts = jnum(c, "attempts", p.attempts);
  double timeout = jnum(c, "attempt_timeout", 0);
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "backoff");
  p.backoff_base = jnum(b, "base", p.backoff_base);
  p.backoff_cap = jnum(b, "cap", p.backoff_cap);
  cJSON_Delete(c);
  double waits = 0;
  for (int k = 1; k < attempts && k < 100; k++) waits += guard_backoff_nominal(&p, k);
  double per_call = waits + timeout;
  if (deadline > 0 && per_call > deadline) per_call = deadline;
  if (conc < 1) conc = 1;
  double rounds = requests > 0 ? ceil(requests / conc) : 0;
  return (layers < 1 ? 1 : layers) * rounds * per_call + spread;
}

typedef struct order_key {
  double s;
  int i;
} order_key;

static int by_expected(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  if (x->s != y->s) return x->s < y->s ? 1 : -1;
  return x->i - y->i; /* equal: file order */
}

/* Plays files with a built-in client and adds them to run in order; see run.h. */
int run_suite(rpt_run *run, char **files, size_t nfiles, const run_opts *o, int *load_errors) {
  sim_global_init();
  guard_global_init();
  signal(SIGPIPE, SIG_IGN);
  run_state st = {.o = o, .n = (int)nfiles, .tty = o->progress && isatty(STDERR_FILENO)};
  st.slots = calloc(nfiles ? nfiles : 1, sizeof *st.slots);
  if (st.slots == NULL) return -1;
  /* Each file loaded once, here: its expected duration and its play. */
  for (size_t i = 0; i < nfiles; i++) {
    slot *s = &st.slots[i];
    s->file = files[i];
    if (o->scenarios && o->scenarios[i]) {
      s->sc = o->scenarios[i];
      o->scenarios[i] = NULL;
    } else if (cli_scenario_load(files[i], o->seed + (uint64_t)i, &s->sc, s->error) != SIM_OK) {
      s->load_error = 1;
    }
  }
  /* Longest expected first; the reports keep file order. */
  st.order = malloc((nfiles ? nfiles : 1) * sizeof *st.order);
  order_key *keys = calloc(nfiles ? nfiles : 1, sizeof *keys);
  if (st.order == NULL || keys == NULL) {
    for (size_t i = 0; i < nfiles; i++) sim_scenario_free(st.slots[i].sc);
    free(st.order);
    free(keys);
    free(st.slots);
    return -1;
  }
  for (size_t i = 0; i < nfiles; i++)
    keys[i] = (order_key){o->expected ? o->expected[i] : expected_s(st.slots[i].sc), (int)i};
  qsort(keys, nfiles, sizeof *keys, by_expected);
  for (size_t i = 0; i < nfiles; i++) st.order[i] = keys[i].i;
  free(keys);
  atomic_init(&st.next, 0);
  pthread_mutex_init(&st.lock, NULL);
  int nth = o->jobs < st.n ? o->jobs : st.n;
  pthread_t th[64];
  int started = 0;
  for (; started < nth; started++)
    if (pthread_create(&th[started], NULL, run_worker, &st) != 0) break;
  if (started == 0) run_worker(&st);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  rpt_progress_clear(stderr, st.tty);

  for (int i = 0; i < st.n; i++) {
    slot *s = &st.slots[i];
    char err[RPT_ERRLEN];
    if (s->error[0]) {
      rpt_run_add_error(run, NULL, s->file, s->error);
      *load_errors += s->load_error;
      fprintf(stderr, "%s\n", s->error);
    } else {
      rpt_input in = {.file = s->file, .client = run_client_name(o->client),
                      .trace_path = s->trace, .wall_ms = s->wall_ms};
      /* A trace deleted when the run ends is handed over parsed: the reports
         then name no file that will not exist (they stand alone). */
      rpt_trace *tr = NULL;
      int rc = RPT_OK;
      if (s->temp_trace) {
        rc = rpt_trace_read_file(s->trace, &tr, err);
        in.trace = tr;
        in.trace_path = NULL;
      }
      if (rc != RPT_OK || rpt_run_add(run, &in, err) != RPT_OK) {
        rpt_run_add_error(run, NULL, s->file, err);
        fprintf(stderr, "%s: %s\n", s->file, err);
      }
    }
    if (s->temp_trace) unlink(s->trace);
    sim_scenario_free(s->sc); /* NULL unless a worker never reached it */
  }
  pthread_mutex_destroy(&st.lock);
  free(st.order);
  free(st.slots);
  return 0;
}

static const char REPORT_USAGE[] =
    "usage: fusebox report [--json FILE] [--junit FILE] [--html FILE] [--markdown FILE]\n"
    "                      [--quiet] TRACE...\n"
    "\n"
    "Judges traces written earlier (by serve --trace or run --trace-dir) against\n"
    "the expect table each trace carries, and writes the same reports as run.\n"
    "A trace cut short (the server was killed) is judged on what it holds and\n"
    "marked incomplete. The traces of one fleet (serve --state) are merged into\n"
    "one timeline and judged as one provider; a fleet that lost its shared state\n"
    "is an invalid run (exit 2), not a failed client.\n"
    "\n"
    "       fusebox report --merge [--json FILE] [--junit FILE] [--html FILE]\n"
    "                      [--markdown FILE] [--quiet] REPORT.json...\n"
    "\n"
    "Joins the JSON reports of `fusebox run --shard K/N` (one per shard, as --json\n"
    "wrote them) into the report of the whole suite: the same scenarios, verdicts\n"
    "and evidence, in the suite's order. Refused (exit 2, nothing written): a file\n"
    "that is not JSON (file:line:column) or not a fusebox report, a scenario or a\n"
    "shard given twice, a missing shard, shards of different suites.\n"
    "\n"
    "Exit status: 0 every verdict holds, 1 a verdict failed (or a scenario could not\n"
    "be played), 2 usage or input error.\n";

int cmd_report(int argc, char **argv) {
  run_opts o = {0};
  cli_common c;
  cli_common_init(&c, CLI_TIME_SCALE_CLIENT, CLI_JOBS_RUN);
  rpt_run *run = rpt_run_new();
  const char **paths = calloc((size_t)argc, sizeof *paths);
  if (run == NULL || paths == NULL) {
    rpt_run_free(run);
    free(paths);
    return EXIT_USAGE;
  }
  int ntraces = 0, bad_input = 0, merge = 0;
  for (int i = 1; i < argc; i++) {
    int r = cli_common_option("report", argc, argv, &i, CLI_OPT_REPORTS | CLI_OPT_MARKDOWN, &c);
    if (r == 1) {
      take_common(&c, &o);
      continue;
    }
    if (strcmp(argv[i], "--merge") == 0) {
      merge = 1;
      continue;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(REPORT_USAGE, stdout);
      rpt_run_free(run);
      free(paths);
      return EXIT_PASS;
    }
    if (r == -1 || argv[i][0] == '-') {
      fprintf(stderr, "fusebox report: unknown or incomplete option '%s'\n\n%s", argv[i], REPORT_USAGE);
      rpt_run_free(run);
      free(paths);
      return EXIT_USAGE;
    }
    paths[ntraces++] = argv[i];
  }
  if (ntraces == 0) {
    fprintf(stderr, "fusebox report: which %s?\n\n%s", merge ? "JSON reports" : "traces",
            REPORT_USAGE);
    rpt_run_free(run);
    free(paths);
    return EXIT_USAGE;
  }
  if (merge) {
    char merr[RPT_ERRLEN];
    rpt_run_set_redact(run, sim_redact_text); /* shards may come from anywhere */
    int rc = rpt_run_merge_json(run, paths, ntraces, merr);
    free(paths);
    if (rc != RPT_OK) {
      fprintf(stderr, "fusebox report --merge: %s\n", sim_term_safe(merr));
      rpt_run_free(run);
      return EXIT_USAGE;
    }
    int wr = write_reports(run, &o);
    int failed = rpt_run_failed(run);
    rpt_run_free(run);
    return wr ? EXIT_USAGE : failed ? EXIT_VERDICT : EXIT_PASS;
  }
  /* The traces of one fleet (serve --state) are merged and judged as one. */
  rpt_group *g = NULL;
  int ng = 0;
  char err[RPT_ERRLEN];
  if (rpt_traces_group(paths, ntraces, &g, &ng, err) != RPT_OK) {
    fprintf(stderr, "fusebox report: %s\n", sim_term_safe(err));
    rpt_run_free(run);
    free(paths);
    return EXIT_USAGE;
  }
  for (int i = 0; i < ng; i++) {
    rpt_input in = {.trace_path = g[i].path};
    int rc = RPT_OK;
    if (g[i].invalid != NULL) {
      snprintf(err, sizeof err, "%s", g[i].invalid);
      rc = RPT_ETRACE;
    } else if (g[i].text != NULL) {
      rc = rpt_trace_read_mem(g[i].text, g[i].len, g[i].name, &in.trace, err);
    }
    if (rc == RPT_OK) rc = rpt_run_add(run, &in, err);
    if (rc != RPT_OK) {
      if (g[i].path != NULL) fprintf(stderr, "fusebox report: %s\n", sim_term_safe(err));
      else fprintf(stderr, "fusebox report: %s: %s\n", sim_term_safe(g[i].name), sim_term_safe(err));
      rpt_run_add_error(run, g[i].name, g[i].name, err);
      bad_input++;
    }
  }
  rpt_groups_free(g, ng);
  free(paths);
  int wr = write_reports(run, &o);
  int failed = rpt_run_failed(run);
  rpt_run_free(run);
  return bad_input || wr ? EXIT_USAGE : failed ? EXIT_VERDICT : EXIT_PASS;
}
