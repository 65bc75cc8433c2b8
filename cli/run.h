/*
 * run.h - `fusebox run`: scenarios played against a built-in client, each
 * in its own server session, judged from the trace.
 */
#ifndef FUSEBOX_RUN_H
#define FUSEBOX_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "guard/guard.h"
#include "reports/reports.h"
#include "sim/sim.h"

#define RUN_ERRLEN 256
#define RUN_MAX_REQUESTS 10000
#define RUN_MAX_CONCURRENCY 1000
#define RUN_MAX_CHAIN 8
#define RUN_NAMELEN 64

typedef enum { RUN_CLIENT_GUARD = 0, RUN_CLIENT_NAIVE, RUN_CLIENT_SDK } run_client_kind;
typedef enum {
  RUN_CALL_CHAT = 0, RUN_CALL_STREAM, RUN_CALL_EFFECT,
  RUN_CALL_TOOLS,        /* a chat offering tools, then its tool calls run */
  RUN_CALL_STREAM_TOOLS  /* the same, streamed */
} run_call;

/* What the client does in one scenario: docs/scenarios.md, "Workload". */
typedef struct run_workload {
  run_call call;
  int dialect;         /* guard_dialect: the API the client calls */
  int requests;        /* logical calls */
  int concurrency;     /* calls in flight at once */
  double spread;       /* s over which call starts are spread */
  char prompt[512];    /* "" = "Question N" */
  int max_tokens;
  int layers;          /* application retry wrapper (reference clients only) */
  char effect[64];
  char payload[1024];  /* JSON; "" = a default */
  char tools[8][64];   /* tools offered (call = "tools"); default get_weather */
  int ntools;
} run_workload;

/*
 * What the `client` table (JSON, may be NULL; already validated with the
 * scenario) asks of a client, for an outside command: the workload, and the
 * deadline and per-attempt timeout in seconds (0 when the table sets none).
 * -1 with err when it is bad.
 */
int run_client_describe(const char *client_json, run_workload *w, double *deadline_s,
                        double *attempt_timeout_s, char err[RUN_ERRLEN]);
/*
 * Checks the scenario's `client` table (keys, values, chain names against
 * its providers). Returns 0, or -1 with a message in err that starts with
 * the dotted path of the offending key ("client.backoff.bsae: unknown key"),
 * for sim_scenario_error to place in the file.
 */
int run_client_validate(const sim_scenario *sc, char err[RUN_ERRLEN]);
/*
 * Builds the client of one session of sc (already validated): a guard
 * handle (owned by the caller, guard_free) configured for kind against srv,
 * and the workload. -1 with err when the table is bad.
 */
int run_client_new(const sim_scenario *sc, run_client_kind kind, sim_server *srv,
                   double time_scale, uint64_t seed, guard **out, run_workload *w,
                   char err[RUN_ERRLEN]);
const char *run_client_name(run_client_kind kind);

/*
 * Plays the workload with g against srv, writing one `client` event per
 * logical call to srv's trace. Returns the number of calls that could not be
 * made (out of memory, bad arguments): 0 normally.
 */
int run_workload_play(guard *g, const run_workload *w, run_client_kind kind,
                      sim_server *srv, double time_scale);

/*
 * Plays sc (loaded and validated; taken, freed here) with the built-in
 * client kind into the trace file at trace, time scaled by scale. Returns 0;
 * -1 when the server did not start (no trace); -2 when the trace could not
 * be written whole. A message goes into error (errcap bytes, file names the
 * scenario in it), also when a call could not be made (returns 0 then).
 */
int run_play(sim_scenario *sc, run_client_kind kind, double scale, uint64_t seed,
             const char *trace, char *error, size_t errcap, const char *file);

/* Options of a suite played with a built-in client. */
typedef struct run_opts {
  run_client_kind client;
  int jobs;               /* scenarios at once */
  double scale;           /* time scale */
  uint64_t seed;
  const char *trace_dir;  /* NULL = temporary traces, deleted after judging */
  const char *json, *junit, *html, *markdown;
  int quiet;              /* no terminal table */
  int progress;           /* live progress line on a terminal */
  const double *expected; /* per file, its expected duration (s); NULL: worked out */
  sim_scenario **scenarios; /* per file, NULL or that file already loaded and validated
                               (cli_scenario_load with seed + its index): run_suite takes
                               each one (sets the entry NULL) and plays it; a NULL array
                               or entry: run_suite loads the file itself */
} run_opts;

/*
 * Loads each file once (unless o->scenarios hands it over loaded), then plays
 * every file with o->client, `jobs` at a time, those expected to take
 * longest first (issue 13), and adds each to run in
 * file order (a scenario that cannot be played is added as an error, and
 * counted in *load_errors when its file did not load). Returns 0, or -1 when
 * out of memory.
 */

int run_suite(rpt_run *run, char **files, size_t nfiles, const run_opts *o, int *load_errors);

#endif
