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
 * Expands files, folders and library names (cli_resolve_scenario) into
 * scenario files (recursively, *.lua, sorted) in out. With no paths, the
 * standard library. Returns 0, or -1 with a message on stderr.
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
/*
 * As cli_select_tags, keeping what it loaded: with kept non-NULL, *kept is a
 * new array parallel to the files kept (the caller frees it and any entry
 * left), each entry the file as sim_scenario_load gave it with seed (not yet
 * validated: cli_scenario_validate), NULL for one that did not load. With
 * no tag list, nothing is loaded and *kept is NULL.
 */
int cli_select_tags_kept(const char *cmd, path_list *files, const char *tags,
                         const char *skip_tags, uint64_t seed, sim_scenario ***kept);
/*
 * The standard library, found at run time (nothing compiled in), first of:
 * BINDIR/../share/fusebox (an installed or moved prefix), $FUSEBOX_HOME, the
 * source tree named by BINDIR/fusebox-home (a marker CMake writes into the
 * build tree), ./scenarios. A library is a folder with scenarios/ (and
 * profiles/, integrations/). $FUSEBOX_SCENARIOS replaces its scenario
 * folder. Found once; the struct is static (never freed).
 */
typedef struct cli_library {
  char home[4096];      /* the library folder (absolute), "" when none */
  char scenarios[4096]; /* its scenario folder, or $FUSEBOX_SCENARIOS; "" when none */
  char how[64];         /* how it was found: "next to the binary", ... */
} cli_library;
const cli_library *cli_library_find(void);
/* The standard scenario folder, or NULL when no library was found. */
const char *cli_scenario_dir(void);
/* "library: DIR (HOW)", or that none was found, into out (n bytes). */
void cli_library_describe(char *out, size_t n);
/*
 * One scenario argument of a command: a path that exists is that path;
 * else NAME, NAME.lua or the folder NAME under the library's scenario
 * folder (then under the library itself: "profiles/x.lua"). Writes the
 * path into out (n bytes) and returns 0; or says "no scenario or file
 * named X (library: DIR)", with a "did you mean" when a library name is
 * close, on stderr and returns -1 (the caller exits 2).
 */
int cli_resolve_scenario(const char *arg, char *out, size_t n);
/* The --help line every command that takes scenarios prints. */
#define CLI_NAME_HELP                                                                  \
  "A SCENARIO is a file or folder that exists, else a name in the standard library:\n" \
  "NAME, NAME.lua or the folder NAME under its scenarios/ (ratelimit,\n"              \
  "ratelimit/retry_after_seconds); 'fusebox list' shows every name and where the\n"   \
  "library is.\n"
/* The library name of a file under the library's scenario folder
   ("ratelimit/retry_after_seconds") written into buf (n bytes) and
   returned, or NULL when path is not a .lua file under it. */
const char *cli_library_name(const char *path, char *buf, size_t n);

/* 1 when an expect table (JSON, may be NULL) states nothing to judge:
   run and exec refuse such a scenario (exit 2). */
int cli_nothing_to_judge(const char *expect_json);
/* Removes dir and everything under it (a temp dir of our own). 0 or -1. */
int cli_remove_tree(const char *dir);
/* Creates dir and its missing parents (mkdir -p). 0, or -1 with errno set. */
int cli_make_dirs(const char *dir);
/* Creates the missing parent folders of each output file given (NULL ones
   are skipped), so --json out/a/r.json works in a fresh checkout. 0, or -1
   after saying which on stderr, naming cmd. */
int cli_make_parents(const char *cmd, const char *a, const char *b, const char *c,
                     const char *d);
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
/* The second half of cli_scenario_load: validates sc, which
   sim_scenario_load gave, taking it: *out is sc when it is good (the
   caller owns it), else NULL with sc freed and the reason in err. Returns
   SIM_OK or SIM_ELOAD. */
int cli_scenario_validate(sim_scenario *sc, sim_scenario **out, char err[SIM_ERRLEN]);
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
int cmd_which(int argc, char **argv);
int cmd_diff_policy(int argc, char **argv);
int cmd_hunt(int argc, char **argv);
int cmd_learn(int argc, char **argv);

#endif
