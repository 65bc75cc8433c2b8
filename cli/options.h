/*
 * options.h - the options several fusebox subcommands share, in one table
 * with one default each: report files (--json, --junit, --html, --quiet),
 * the built-in client names, --time-scale (range and default), --seed,
 * --timeout, --trace-dir, -j, the scenario selection (--tags, --skip-tags)
 * and what a command cannot do (--without). A subcommand says which it takes; the
 * help text of each comes from the same table, so the copies cannot drift.
 */
#ifndef FUSEBOX_CLI_OPTIONS_H
#define FUSEBOX_CLI_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

/* The built-in clients, by name (run --client, matrix --client). */
#define CLI_CLIENT_NAMES "guard, naive or sdk-default"
/* The APIs a probe or hunt scenario's client calls (learn --api, hunt
   --api): client.dialect's names (cli/client_config.c). */
#define CLI_API_NAMES "openai, anthropic, responses, gemini, bedrock, ollama or cohere"

/* --time-scale: one range for every command. A built-in client compresses
   time by default; a server for an outside client plays in real time. */
#define CLI_TIME_SCALE_MIN 0.01
#define CLI_TIME_SCALE_MAX 100.0
#define CLI_TIME_SCALE_CLIENT 0.2 /* run, matrix (built-in clients) */
#define CLI_TIME_SCALE_SERVE 1.0  /* serve, exec (outside clients, real time) */

#define CLI_TIMEOUT_S 60.0 /* exec, matrix: an outside command is killed after this */
#define CLI_JOBS_RUN 4     /* run: scenarios at once, at least */
#define CLI_JOBS_AUTO 0    /* run's default: as many as the plan needs (cli/shard.h) */
#define CLI_JOBS_AUTO_MIN 8 /* scenarios mostly wait on timers: 8 at once cost
                               little CPU even on 2 cores (bench/RESULTS.md) */
#define CLI_JOBS_AUTO_MAX 16
#define CLI_JOBS_EXEC 1    /* exec: scenarios at once */
#define CLI_JOBS_MAX 64

/* Which shared options a subcommand takes (bits). */
enum {
  CLI_OPT_JSON_HTML = 1 << 0, /* --json --html */
  CLI_OPT_JUNIT = 1 << 1,     /* --junit */
  CLI_OPT_QUIET = 1 << 2,     /* --quiet / -q */
  CLI_OPT_SCALE = 1 << 3,     /* --time-scale */
  CLI_OPT_SEED = 1 << 4,      /* --seed */
  CLI_OPT_TIMEOUT = 1 << 5,   /* --timeout */
  CLI_OPT_TRACE_DIR = 1 << 6, /* --trace-dir */
  CLI_OPT_JOBS = 1 << 7,      /* -j / --jobs */
  CLI_OPT_SELECT = 1 << 8,    /* --tags --skip-tags */
  CLI_OPT_WITHOUT = 1 << 9,   /* --without */
  CLI_OPT_DEADLINE = 1 << 10, /* --deadline (exec: hold a command to a deadline) */
  CLI_OPT_MARKDOWN = 1 << 11, /* --markdown (run, exec, report) */
  CLI_OPT_REPORTS = CLI_OPT_JSON_HTML | CLI_OPT_JUNIT | CLI_OPT_QUIET
};

/* The values of the shared options; cli_common_init sets the defaults. */
typedef struct cli_common {
  const char *json, *junit, *html; /* report files, NULL: none */
  const char *markdown;             /* --markdown FILE, NULL: none */
  int quiet;
  double time_scale;
  uint64_t seed;
  double timeout_s;
  const char *trace_dir;
  int jobs;
  const char *tags, *skip_tags; /* comma lists as given, NULL: none (cli_select_tags) */
  unsigned without;             /* EXEC_WITHOUT_* (exec.h) */
  const char *deadline; /* --deadline: "scenario" or seconds as given, NULL: none */
} cli_common;

/* Sets every default; time_scale and jobs are the command's own default
   (CLI_TIME_SCALE_CLIENT or CLI_TIME_SCALE_SERVE; CLI_JOBS_*). */
void cli_common_init(cli_common *o, double time_scale, int jobs);
/*
 * If argv[*i] is one of the shared options in `which`, stores its value in
 * o, steps *i past its argument and returns 1; returns 0 when it is not
 * one; -1 (with a message naming cmd on stderr) when its value is missing
 * or out of range.
 */
int cli_common_option(const char *cmd, int argc, char **argv, int *i, unsigned which,
                      cli_common *o);
/* Writes the help lines of the options in `which`, defaults included. */
void cli_common_usage(FILE *f, unsigned which, const cli_common *defaults);
/*
 * Spells "--name=value" as "--name" "value" in the arguments before the first
 * "--" (what follows it is a command's own), so every command's option loop
 * takes both forms people type. Replaces *argc and *argv with a new array
 * when any argument was split (it and its strings live until the program
 * exits); leaves them as they are otherwise. Returns 0, -1 when out of memory.
 */
int cli_split_equals(int *argc, char ***argv);
/* The built-in client kind (run.h's run_client_kind) of name; -1 if none. */
int cli_client_kind(const char *name);

#endif
