/*
 * cmd_hunt.c - `fusebox hunt`: option parsing, and the one thing the
 * search (explore/) cannot do itself: playing a scenario text against the
 * client (a built-in one in-process, or a command through exec's
 * machinery) and against the guarded client, and judging the trace.
 * docs/hunt.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/exec.h"
#include "cli/hunt.h"
#include "cli/options.h"
#include "cli/run.h"
#include "explore/explore.h"
#include "reports/reports.h"

#define HUNT_OPTS (CLI_OPT_REPORTS | CLI_OPT_SCALE | CLI_OPT_SEED | CLI_OPT_TIMEOUT | CLI_OPT_JOBS)
#define HUNT_SCALE 0.02  /* built-in clients: a 5 s Retry-After is 100 ms */
#define HUNT_TIMEOUT 20.0

static void usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, HUNT_SCALE, 1);
  d.timeout_s = HUNT_TIMEOUT;
  fprintf(f,
          "usage: fusebox hunt [options] [--client guard|naive|sdk-default | -- CMD [ARGS...]]\n"
          "\n"
          "Searches fault schedules (a fault on each of the first attempts of a call,\n"
          "then the answer) for one that makes the client fail a verdict that holds\n"
          "for any client, checks that the built-in guarded client passes it (else\n"
          "no client could), and shrinks it to the smallest schedule that still fails\n"
          "the same verdict. Every choice comes from --seed: the same seed finds the\n"
          "same schedule. docs/hunt.md.\n"
          "\n"
          "options:\n"
          "  --client NAME     hunt a built-in client (" CLI_CLIENT_NAMES "; default naive)\n"
          "  -- CMD [ARGS...]  hunt a command, served as `fusebox exec` serves it\n"
          "  --budget RUNS     runs in all, shrinking and reference checks included (default 200)\n"
          "  --time S          stop searching after S seconds (default: no limit)\n"
          "  --findings N      stop after N distinct findings (default 1)\n"
          "  --steps LIST      faults to draw from (default all):\n"
          "                    ");
  for (int k = 0; xpl_kind_name(k); k++) fprintf(f, "%s%s", k ? "," : "", xpl_kind_name(k));
  fprintf(f,
          "\n"
          "  --call LIST       what the client is asked to do: chat, stream, tools,\n"
          "                    stream_tools, effect or any (default chat,stream)\n"
          "  --api NAME        client.dialect (default openai): openai, anthropic,\n"
          "                    responses, gemini, bedrock, ollama or cohere\n"
          "  --max-attempts N  faulted attempts in a schedule, 1..%d (default 3)\n"
          "  --max-retry-after S  the longest Retry-After drawn (default a day: 1, 5, 30,\n"
          "                    120 and 86400 s are drawn)\n"
          "  --max-requests N  expect.max_requests: arrivals that count as amplification (default 10)\n"
          "  --random          random search only (the default prefers schedules that made\n"
          "                    the client do something new)\n"
          "  --no-reference    report findings without checking them against the guard\n"
          "  --warp F          run CMD under libfaketime F times faster (no HTTP-date\n"
          "                    Retry-After then: it would not be exact)\n"
          "  --from FILE       start from a finding a hunt wrote: it is played first and\n"
          "                    the search starts in its neighbourhood\n"
          "  --out DIR         write each finding as DIR/finding-N.lua with its trace, and\n"
          "                    DIR/hunt.json; without it the first finding is printed\n",
          XPL_MAX_STEPS);
  cli_common_usage(f, HUNT_OPTS, &d);
  fprintf(f,
          "\n"
          "exit status: 1 a finding, 0 nothing found within the budget, 2 bad input\n");
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fills out from the trace at path judged by its own expect table. */
static void judge(const char *path, xpl_outcome *out) {
  char err[RPT_ERRLEN];
  rpt_trace *tr = NULL;
  rpt_judgement *j = NULL;
  if (rpt_trace_read_file(path, &tr, err) != RPT_OK ||
      rpt_judge(tr, rpt_trace_expect_json(tr), rpt_trace_client_json(tr), NULL, &j, err) != RPT_OK) {
    out->error = 1;
    out->nv = 1;
    snprintf(out->v[0].evidence, XPL_EVIDENCE, "%.*s", XPL_EVIDENCE - 1, err);
    rpt_trace_free(tr);
    return;
  }
  out->attempts = (int)rpt_trace_arrivals(tr);
  double scale = rpt_trace_time_scale(tr) > 0 ? rpt_trace_time_scale(tr) : 1;
  rpt_arrival_info ai;
  for (long i = 0; out->narr < XPL_MAX_ARRIVALS && rpt_trace_arrival(tr, i, &ai) == RPT_OK; i++) {
    xpl_arrival *x = &out->arr[out->narr++];
    x->t_arrive = ai.t_arrive_ms / 1000.0 / scale;
    x->t_end = ai.t_end_ms < 0 ? -1 : ai.t_end_ms / 1000.0 / scale;
    x->status = ai.status;
    x->idem = ai.key && strncmp(ai.key, "idem:", 5) == 0;
    x->attempt = ai.attempt;
    x->stream = ai.stream;
  }
  int n = rpt_judgement_count(j);
  for (int i = 0; i < n && out->nv < XPL_MAX_VERDICTS; i++) {
    const rpt_verdict *v = rpt_judgement_verdict(j, i);
    xpl_verdict *o = &out->v[out->nv++];
    snprintf(o->name, sizeof o->name, "%s", v->name);
    o->status = (int)v->status;
    snprintf(o->evidence, sizeof o->evidence, "%s", v->evidence ? v->evidence : "");
  }
  rpt_judgement_free(j);
  rpt_trace_free(tr);
}

static void set_error(xpl_outcome *out, const char *msg) {
  out->error = 1;
  out->nv = 1;
  snprintf(out->v[0].evidence, XPL_EVIDENCE, "%.*s", XPL_EVIDENCE - 1, msg);
}

/* Plays one scenario text; the trace is kept at keep (when not NULL). */
int hunt_play_one(const hunt_ctx *h, int reference, const char *lua, long index,
                  const char *keep, xpl_outcome *out) {
  char err[SIM_ERRLEN];
  sim_scenario *sc = NULL;
  uint64_t seed = h->seed + (uint64_t)index;
  if (cli_scenario_load_text("hunt.lua", lua, strlen(lua), seed, &sc, err) != SIM_OK) {
    set_error(out, err);
    return 0;
  }
  char base[4200], trace[4300];
  if (keep) snprintf(base, sizeof base, "%s", keep);
  else snprintf(base, sizeof base, "%s/run-%ld-%d", h->tmp, index, reference);
  snprintf(trace, sizeof trace, "%s.jsonl", base);
  if (reference || h->argv == NULL) {
    char msg[512] = "";
    run_client_kind kind = reference ? RUN_CLIENT_GUARD : h->kind;
    if (run_play(sc, kind, h->scale, seed, trace, msg, sizeof msg, "hunt.lua") != 0 || msg[0]) {
      set_error(out, msg);
      return 0;
    }
  } else {
    exec_call call;
    char eerr[EXEC_ERRLEN];
    exec_result res;
    int bad = exec_describe(sim_scenario_client_json(sc), &call, eerr) != 0 ||
              exec_scenario(sc, &call, h->argv, &h->exec, "hunt", base, &res, eerr) != 0;
    sim_scenario_free(sc); /* exec_scenario serves it but leaves it to its caller */
    if (bad) {
      set_error(out, eerr);
      return -1; /* the command cannot run: no schedule will do better */
    }
    if (!keep) {
      unlink(res.stdout_path);
      unlink(res.stderr_path);
    }
  }
  judge(trace, out);
  if (!keep) unlink(trace);
  return 0;
}

typedef struct batch {
  const hunt_ctx *h;
  int reference, n;
  char *const *lua;
  const long *index;
  xpl_outcome *out;
  atomic_int next, failed;
} batch;

static void *batch_worker(void *arg) {
  batch *b = arg;
  for (;;) {
    int i = atomic_fetch_add(&b->next, 1);
    if (i >= b->n) break;
    if (hunt_play_one(b->h, b->reference, b->lua[i], b->index[i], NULL, &b->out[i]) != 0)
      atomic_store(&b->failed, i + 1);
  }
  return NULL;
}

/* xpl_play_fn: the batch, -j at a time; see hunt.h. */
int hunt_play(void *arg, int reference, int n, char *const *lua, const long *index,
                xpl_outcome *out, char err[XPL_ERRLEN]) {
  hunt_ctx *h = arg;
  batch b = {.h = h, .reference = reference, .n = n, .lua = lua, .index = index, .out = out};
  atomic_init(&b.next, 0);
  atomic_init(&b.failed, 0);
  int jobs = h->jobs < n ? h->jobs : n;
  pthread_t th[CLI_JOBS_MAX];
  int started = 0;
  for (int i = 1; i < jobs; i++)
    if (pthread_create(&th[started], NULL, batch_worker, &b) == 0) started++;
  batch_worker(&b);
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  int f = atomic_load(&b.failed);
  if (f) {
    snprintf(err, XPL_ERRLEN, "%.*s", XPL_ERRLEN - 1, out[f - 1].v[0].evidence);
    return -1;
  }
  return 0;
}

static int stop_now(void *arg) {
  const hunt_ctx *h = arg;
  return h->time_s > 0 && mono_s() - h->t0 > h->time_s;
}

static void progress(void *arg, long runs, int findings, const char *phase) {
  const hunt_ctx *h = arg;
  if (h->quiet || !isatty(2)) return;
  fprintf(stderr, "\rhunt: %ld runs, %d finding%s, %s   ", runs, findings, findings == 1 ? "" : "s",
          phase);
}

/* --from FILE: the schedule on the "-- schedule:" line a hunt wrote. */
static int read_from(const char *path, xpl_schedule *out, char err[XPL_ERRLEN]) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, XPL_ERRLEN, "%.200s: %s", path, strerror(errno));
    return -1;
  }
  char line[1024];
  int lineno = 0, rc = -1;
  snprintf(err, XPL_ERRLEN, "%.200s: no '-- schedule:' line (a file fusebox hunt wrote)", path);
  while (fgets(line, sizeof line, f) && ++lineno <= 5) {
    if (strncmp(line, "-- schedule: ", 13) != 0) continue;
    line[strcspn(line, "\r\n")] = '\0';
    char why[XPL_ERRLEN];
    rc = xpl_schedule_parse(line + 13, out, why);
    if (rc != 0) snprintf(err, XPL_ERRLEN, "%.100s:%d: %.140s", path, lineno, why);
    break;
  }
  fclose(f);
  return rc;
}

int hunt_client_option(const char *cmd, const char *opt, const char *val, hunt_ctx *h,
                       const char **dialect) {
  if (strcmp(opt, "--client") == 0) {
    int k = cli_client_kind(val);
    if (k < 0) {
      fprintf(stderr, "fusebox %s: --client is " CLI_CLIENT_NAMES ", not '%s'\n", cmd, val);
      return -1;
    }
    h->kind = (run_client_kind)k;
  } else if (strcmp(opt, "--api") == 0) {
    static const char *const apis[] = {"openai", "anthropic", "responses", "gemini",
                                       "bedrock", "ollama",    "cohere"};
    int ok = 0;
    for (size_t k = 0; k < sizeof apis / sizeof apis[0]; k++) ok |= strcmp(val, apis[k]) == 0;
    if (!ok) {
      fprintf(stderr, "fusebox %s: --api is " CLI_API_NAMES ", not '%s'\n", cmd, val);
      return -1;
    }
    *dialect = val;
  } else if (strcmp(opt, "--warp") == 0) {
    double d;
    if (cli_parse_double(opt, val, 1, EXEC_WARP_MAX, &d) != 0) return -1;
    h->exec.warp = d;
  } else {
    return 0;
  }
  return 1;
}

/* Parses hunt's own options (not the shared ones); 1 taken, 0 not, -1 bad. */
static int own_option(int argc, char **argv, int *i, hunt_ctx *h, xpl_hunt_opts *o) {
  const char *a = argv[*i];
  const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  char err[XPL_ERRLEN];
  long n;
  double d;
  if (strcmp(a, "--random") == 0) return o->guided = 0, 1;
  if (strcmp(a, "--no-reference") == 0) return o->reference = 0, 1;
  if (v == NULL) return 0;
  int rc = 1;
  int shared = hunt_client_option("hunt", a, v, h, &o->lua.dialect);
  if (shared != 0) {
    if (shared < 0) return -1;
  } else if (strcmp(a, "--budget") == 0) {
    if (cli_parse_int(a, v, 1, 1000000, &n) != 0) return -1;
    o->budget = n;
  } else if (strcmp(a, "--time") == 0) {
    if (cli_parse_double(a, v, 0.1, 1e6, &h->time_s) != 0) return -1;
  } else if (strcmp(a, "--findings") == 0) {
    if (cli_parse_int(a, v, 1, 1000, &n) != 0) return -1;
    o->max_findings = (int)n;
  } else if (strcmp(a, "--max-attempts") == 0) {
    if (cli_parse_int(a, v, 1, XPL_MAX_STEPS, &n) != 0) return -1;
    o->space.max_steps = (int)n;
  } else if (strcmp(a, "--max-retry-after") == 0) {
    if (cli_parse_double(a, v, 1, 86400, &d) != 0) return -1;
    o->space.max_ra_index = xpl_ra_index(d);
  } else if (strcmp(a, "--max-requests") == 0) {
    if (cli_parse_int(a, v, 1, 100000, &n) != 0) return -1;
    o->lua.max_requests = (int)n;
  } else if (strcmp(a, "--steps") == 0) {
    if (xpl_space_kinds(&o->space, v, err) != 0) rc = -1;
  } else if (strcmp(a, "--call") == 0) {
    if (xpl_space_calls(&o->space, v, err) != 0) rc = -1;
  } else if (strcmp(a, "--out") == 0) {
    h->out_dir = v;
  } else if (strcmp(a, "--from") == 0) {
    if (read_from(v, &h->from, err) != 0) rc = -1;
    o->from = &h->from;
  } else {
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "fusebox hunt: %s: %s\n", a, err);
    return -1;
  }
  (*i)++;
  return 1;
}

/* The verdicts that break: best practice (reports' one list) and answer. */
static char *breaking_list(void) {
  size_t n = rpt_expect_best_practice_list(NULL, 0);
  char *s = malloc(n + 16);
  if (!s) return NULL;
  rpt_expect_best_practice_list(s, n + 1);
  char *w = s, *r = s; /* "a, b" -> "a,b" */
  for (; *r; r++)
    if (*r != ' ') *w++ = *r;
  *w = '\0';
  strcat(s, ",answer");
  return s;
}

int hunt_make_tmp(hunt_ctx *h) {
  const char *t = getenv("TMPDIR");
  snprintf(h->tmp, sizeof h->tmp, "%s/fusebox-hunt-XXXXXX", t && *t ? t : "/tmp");
  return mkdtemp(h->tmp) ? 0 : -1;
}

int cmd_hunt(int argc, char **argv) {
  hunt_ctx h = {.kind = RUN_CLIENT_NAIVE};
  xpl_hunt_opts o = {.reference = 1, .guided = 1, .space = {.max_ra_index = -1}};
  cli_common c;
  cli_common_init(&c, HUNT_SCALE, 1);
  c.timeout_s = HUNT_TIMEOUT;
  if (cli_split_equals(&argc, &argv) != 0) return EXIT_USAGE;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      h.argv = &argv[i + 1];
      break;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return EXIT_PASS;
    }
    int r = cli_common_option("hunt", argc, argv, &i, HUNT_OPTS, &c);
    if (r == 0) r = own_option(argc, argv, &i, &h, &o);
    if (r < 0) return EXIT_USAGE;
    if (r == 0) {
      fprintf(stderr, "fusebox hunt: unknown or incomplete option '%s'\n\n", argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if (h.argv && h.argv[0] == NULL) {
    fprintf(stderr, "fusebox hunt: -- needs a command after it\n");
    return EXIT_USAGE;
  }
  h.scale = c.time_scale;
  h.seed = c.seed;
  h.jobs = c.jobs > 0 ? c.jobs : 1;
  h.quiet = c.quiet;
  h.t0 = mono_s();
  if (h.argv) {
    exec_opts_take(&h.exec, &c, "hunt");
    h.exec.quiet = 1;
    if (h.exec.warp > 1) {
      h.exec.faketime_lib = exec_find_faketime();
      if (!h.exec.faketime_lib) {
        fprintf(stderr, "fusebox hunt: --warp needs libfaketime (Debian: apt-get install "
                        "libfaketime)\n");
        return EXIT_USAGE;
      }
      o.space.no_date = 1;
    }
  } else if (h.exec.warp > 1) {
    fprintf(stderr, "fusebox hunt: --warp is for a command (-- CMD); a built-in client uses "
                    "--time-scale\n");
    return EXIT_USAGE;
  }
  o.seed = c.seed;
  o.stop = stop_now;
  char *verdicts = breaking_list();
  if (!verdicts || hunt_make_tmp(&h) != 0) {
    fprintf(stderr, "fusebox hunt: cannot make a temporary folder: %s\n", strerror(errno));
    free(verdicts);
    return EXIT_USAGE;
  }
  o.verdicts = verdicts;
  xpl_hunt_result res;
  char err[XPL_ERRLEN];
  int rc = xpl_hunt(&o, hunt_play, &h, progress, &h, &res, err);
  if (!h.quiet && isatty(2)) fprintf(stderr, "\n");
  int status;
  if (rc != 0) {
    fprintf(stderr, "fusebox hunt: %s\n", err);
    status = EXIT_USAGE;
  } else if (res.client_runs > 0 && res.silent == res.client_runs) {
    /* nothing found because nothing was asked: no evidence, no green */
    fprintf(stderr, "fusebox hunt: the client sent no request in any of its %ld runs: nothing "
            "was judged (is its base URL the one exec sets? run one finding with `fusebox exec` "
            "to see its output)\n", res.client_runs);
    status = EXIT_USAGE;
  } else {
    if (res.silent > 0)
      fprintf(stderr, "fusebox hunt: warning: in %ld of %ld runs the client sent no request\n",
              res.silent, res.client_runs);
    status = hunt_write(&h, &o, &c, &res, argc, argv) != 0 ? EXIT_USAGE
             : res.nfindings > 0                           ? EXIT_VERDICT
                                                           : EXIT_PASS;
  }
  xpl_hunt_result_clear(&res);
  cli_remove_tree(h.tmp);
  free(verdicts);
  return status;
}
