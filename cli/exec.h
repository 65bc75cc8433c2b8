/*
 * exec.h - external clients: one scenario served to a command (`fusebox
 * exec`), and one suite played by several clients (`fusebox matrix`).
 */
#ifndef FUSEBOX_EXEC_H
#define FUSEBOX_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

#define EXEC_ERRLEN 512

typedef struct exec_opts {
  double timeout_s;  /* the command is killed after this long */
  uint64_t seed;
  const char *profile_json; /* a client profile to judge conformance; NULL = none */
} exec_opts;

typedef struct exec_result {
  char trace_path[4096];
  char stdout_path[4096];
  char stderr_path[4096];
  int exit_code;     /* 128 + signal when killed */
  int timed_out;
  double wall_ms;
} exec_result;

/*
 * Serves sc (loaded and validated by cli_scenario_load; one session per
 * load) on a free loopback port, runs argv with OPENAI_BASE_URL,
 * ANTHROPIC_BASE_URL, FUSEBOX_URL (and placeholder API keys when unset),
 * writes the trace to BASE.jsonl and the output to BASE.stdout/.stderr, and
 * notes the command's account in the trace (label names the client).
 * Returns 0, or -1 with err when the scenario or the command cannot start.
 */
int exec_scenario(sim_scenario *sc, char **argv, const exec_opts *o, const char *label,
                  const char *base, exec_result *res, char err[EXEC_ERRLEN]);
/*
 * Plays each file against argv (label names the client) and adds them to
 * run, with a `command_finished` verdict each. Returns how many could not be
 * played.
 */
typedef struct rpt_run rpt_run;
int exec_suite(rpt_run *run, char **files, size_t nfiles, char **argv, const exec_opts *o,
               const char *label, const char *dir);
/* The last line of the command's stderr, control characters blanked. */
void exec_last_stderr(const exec_result *res, char *out, size_t cap);

#endif
