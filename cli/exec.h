/*
 * exec.h - external clients: one scenario served to a command (`fusebox
 * exec`), and one suite played by several clients (`fusebox matrix`).
 * docs/exec.md describes the environment a command gets.
 */
#ifndef FUSEBOX_EXEC_H
#define FUSEBOX_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "cli/options.h"
#include "sim/sim.h"

#define EXEC_ERRLEN 512
#define EXEC_WARP_MAX 100.0

/* What a client may declare it cannot do (--without). */
enum { EXEC_WITHOUT_STREAM = 1 << 0, EXEC_WITHOUT_EFFECTS = 1 << 1 };

typedef struct exec_opts {
  double timeout_s;  /* the command is killed after this long (real seconds) */
  uint64_t seed;
  const char *profile_json; /* a client profile to judge conformance; NULL = none */
  unsigned without;  /* EXEC_WITHOUT_*: scenarios that need them are skipped */
  int jobs;          /* scenarios played at once (0 = 1) */
  double warp;       /* 0 or 1: real time; F: the command runs under libfaketime
                        F times faster and the server plays at time scale 1/F */
  const char *faketime_lib; /* libfaketime's path, when warp > 1 */
  int quiet;         /* no progress lines on stderr */
  double deadline_s; /* --deadline S: judge within_deadline = S (and export it); 0 = none */
  int deadline_own;  /* --deadline scenario: judge each scenario's own within_deadline */
  const char *cmd;   /* the subcommand, for messages ("exec", "matrix"); NULL: exec */
  sim_scenario **scenarios; /* NULL, or per file NULL or that file as sim_scenario_load gave
                               it with seed (cli_select_tags_kept): the first client's cell
                               takes it (sets the entry NULL) instead of loading the file */
  int temp_traces;   /* the traces are deleted when the command ends: the
                        reports get them parsed and name no file */
  const char *upstream; /* --upstream URL: where upstream{} steps forward; NULL = none */
} exec_opts;

/* What a scenario asks of an outside client: the FUSEBOX_* variables. */
typedef struct exec_call {
  int stream;              /* FUSEBOX_STREAM */
  int dialect;             /* guard_dialect (client.dialect): FUSEBOX_DIALECT, _MODEL, _PATH */
  int effect;              /* FUSEBOX_CALL: 1 effect, 0 chat */
  char effect_name[64];    /* the effect endpoint's name */
  char payload[1024];      /* FUSEBOX_EFFECT_PAYLOAD: the effect's JSON body */
  double deadline_s;       /* FUSEBOX_DEADLINE, 0 = none */
  double attempt_timeout_s; /* FUSEBOX_ATTEMPT_TIMEOUT, 0 = none */
  int requests;            /* FUSEBOX_REQUESTS */
  int concurrency;         /* FUSEBOX_CONCURRENCY */
} exec_call;

/*
 * Reads what the scenario's `client` table (JSON, may be NULL) asks of a
 * client. Returns 0, or -1 with err when the table is bad.
 */
int exec_describe(const char *client_json, exec_call *call, char err[EXEC_ERRLEN]);

typedef struct exec_result {
  char trace_path[4096];
  char stdout_path[4096];
  char stderr_path[4096];
  int exit_code;     /* 128 + signal when killed */
  int timed_out;     /* killed: by --timeout, or ended early (idle_end_ms) */
  double idle_end_ms; /* > 0: ended after this long (real ms) without a request,
                         far past the scenario's deadline (see exec_scenario) */
  char end_reason[160]; /* then why, in scenario seconds; else "" */
  double wall_ms;
  double started_t;  /* trace ms (the session's clock) when the command was started */
} exec_result;

/*
 * Serves sc (loaded and validated by cli_scenario_load; one session per
 * load) on a free loopback port, runs argv with the environment of
 * docs/exec.md (base URLs of every SDK family, placeholder keys when unset,
 * FUSEBOX_* from call), writes the trace to BASE.jsonl and the output to
 * BASE.stdout/.stderr, and notes the command's account in the trace (label
 * names the client). Returns 0, or -1 with err when the scenario or the
 * command cannot start (a command not found or not executable counts).
 */
int exec_scenario(sim_scenario *sc, const exec_call *call, char **argv, const exec_opts *o,
                  const char *label, const char *base, exec_result *res, char err[EXEC_ERRLEN]);
typedef struct rpt_run rpt_run;
/* One outside client of a suite: its command, its name, where its results go. */
typedef struct exec_client {
  char **argv;     /* the command, NULL-terminated */
  const char *label; /* names the client in traces and reports ("exec", a matrix NAME) */
  rpt_run *run;    /* its results are added here (the caller owns it) */
} exec_client;
/*
 * Plays each file against each client: the (client, scenario) cells,
 * o->jobs at a time (each on its own port), client after client in file
 * order when one at a time. Adds each client's results to its run in file
 * order, with a `command_finished` verdict each; a scenario o->without
 * rules out is added skipped, with the reason. Trace files go to
 * DIR/LABEL-N-NAME.*. Returns how many cells could not be played (a usage
 * or input error).
 */
int exec_suites(const exec_client *clients, size_t nclients, char **files, size_t nfiles,
                const exec_opts *o, const char *dir);
/*
 * Copies what exec and matrix share of the parsed common options (timeout,
 * seed, jobs, quiet, --deadline, --without) into o; cmd names the
 * subcommand in messages.
 */
void exec_opts_take(exec_opts *o, const cli_common *c, const char *cmd);
/* The last line of the command's stderr, control characters blanked. */
void exec_last_stderr(const exec_result *res, char *out, size_t cap);
/*
 * Finds libfaketime (FUSEBOX_LIBFAKETIME, else the Debian paths). Returns
 * its path (static storage) or NULL.
 */
const char *exec_find_faketime(void);

#endif
