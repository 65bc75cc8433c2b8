/*
 * cli.h - what the fusebox subcommands share. The program uses the public
 * headers of sim/, guard/ and reports/ only.
 */
#ifndef FUSEBOX_CLI_H
#define FUSEBOX_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

#define FUSEBOX_VERSION "0.1.0"

/* Exit statuses, as DESIGN.md gives them. */
enum { EXIT_PASS = 0, EXIT_VERDICT = 1, EXIT_USAGE = 2 };

typedef struct path_list {
  char **v;
  size_t n, cap;
} path_list;

/*
 * Expands files and folders (recursively, *.lua, sorted) into out. With no
 * paths, the standard library. Returns 0, or -1 with a message on stderr.
 */
int cli_collect_scenarios(char **paths, int npaths, path_list *out);
void path_list_clear(path_list *l);
/*
 * Keeps in files only the scenarios with one of the tags of the comma list
 * tags (NULL: any) and none of skip_tags (NULL: none); the others are freed.
 * Returns 0, or -1 with a message naming cmd on stderr when a scenario does
 * not load (it is kept, so the caller's load reports it too).
 */
int cli_select_tags(const char *cmd, path_list *files, const char *tags, const char *skip_tags);
/* The standard scenario library folder. */
const char *cli_scenario_dir(void);

/* 1 when an expect table (JSON, may be NULL) states nothing to judge:
   run and exec refuse such a scenario (exit 2). */
int cli_nothing_to_judge(const char *expect_json);
/* Removes dir and everything under it (a temp dir of our own). 0 or -1. */
int cli_remove_tree(const char *dir);
/*
 * Loads the scenario file at path once and validates all of it: what sim
 * reads (keys, steps, providers, effects, ratelimit), the `client` table
 * and the `expect` table. Every error is "file:line: message" in err, the
 * line being the offending key's. `seed` seeds the scenario's math.random.
 * Returns SIM_OK, or a negative sim code. The caller owns *out and releases
 * it with sim_scenario_free (after any server serving it).
 */
int cli_scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                      char err[SIM_ERRLEN]);
/* As cli_scenario_load, from len bytes of Lua text; name stands for the
   file in messages ("scenario.lua:3: ..."). */
int cli_scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                           sim_scenario **out, char err[SIM_ERRLEN]);

/* Parses a number option; returns 0, or -1 with a message on stderr. */
int cli_parse_double(const char *opt, const char *s, double lo, double hi, double *out);
int cli_parse_int(const char *opt, const char *s, long lo, long hi, long *out);

int cmd_serve(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_record(int argc, char **argv);

#endif
