/*
 * cmd_check.c - `fusebox check` validates scenario files; `fusebox list`
 * shows their names, tags and docs.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/sim.h"

static int wants_help(int argc, char **argv, const char *usage) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      return 1;
    }
  return 0;
}

static int check_options(int argc, char **argv, const char *cmd, const char *usage) {
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-') {
      fprintf(stderr, "fusebox %s: unknown option '%s'\n\n%s", cmd, argv[i], usage);
      return -1;
    }
  return 0;
}

static const char CHECK_USAGE[] =
    "usage: fusebox check SCENARIO|FOLDER...\n"
    "\n"
    "Loads each scenario in the sandbox and validates all of it without serving:\n"
    "its steps, providers, effects, ratelimit, client and expect tables, exactly\n"
    "as run, serve and exec do before they start.\n"
    "Prints 'ok FILE' or 'FILE:LINE: message'; exit status 2 if any fails.\n"
    "\n" CLI_NAME_HELP;

int cmd_check(int argc, char **argv) {
  if (wants_help(argc, argv, CHECK_USAGE)) return EXIT_PASS;
  if (check_options(argc, argv, "check", CHECK_USAGE) != 0) return EXIT_USAGE;
  if (argc < 2) {
    fprintf(stderr, "fusebox check: which scenario files?\n\n%s", CHECK_USAGE);
    return EXIT_USAGE;
  }
  path_list files = {0};
  if (cli_collect_scenarios(argv + 1, argc - 1, &files) != 0) {
    path_list_clear(&files);
    return EXIT_USAGE;
  }
  int bad = 0;
  for (size_t i = 0; i < files.n; i++) {
    sim_scenario *sc = NULL;
    char err[SIM_ERRLEN];
    if (cli_scenario_load(files.v[i], 1, &sc, err) != SIM_OK) {
      fprintf(stderr, "%s\n", sim_term_safe(err));
      bad++;
      continue;
    }
    char name[256];
    snprintf(name, sizeof name, "%s", sim_scenario_name(sc));
    printf("ok  %s  (%s)%s\n", files.v[i], sim_term_safe(name),
           sim_scenario_expect_json(sc) ? "" : "  no expect table: nothing for run to judge");
    sim_scenario_free(sc);
  }
  if (bad) fprintf(stderr, "fusebox check: %d of %zu scenario files failed\n", bad, files.n);
  path_list_clear(&files);
  return bad ? EXIT_USAGE : EXIT_PASS;
}

static const char LIST_USAGE[] =
    "usage: fusebox list [SCENARIO|FOLDER...]\n"
    "\n"
    "Shows each scenario's file, name, tags and doc (default: the standard library).\n"
    "The first line says where the standard library was found and how; a scenario\n"
    "in it is shown by its library name (ratelimit/retry_after_seconds), which every\n"
    "command accepts in place of its path.\n"
    "\n" CLI_NAME_HELP;

/* Prints doc text indented, one paragraph line per source line. */
static void print_doc(const char *doc) {
  const char *p = doc;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) : strlen(p);
    if (len) printf("    %.*s\n", (int)len, p);
    if (!nl) break;
    p = nl + 1;
  }
}

int cmd_list(int argc, char **argv) {
  if (wants_help(argc, argv, LIST_USAGE)) return EXIT_PASS;
  if (check_options(argc, argv, "list", LIST_USAGE) != 0) return EXIT_USAGE;
  path_list files = {0};
  if (cli_collect_scenarios(argv + 1, argc - 1, &files) != 0) {
    path_list_clear(&files);
    return EXIT_USAGE;
  }
  char where[4200];
  cli_library_describe(where, sizeof where);
  printf("%s\n\n", sim_term_safe(where));
  int bad = 0;
  for (size_t i = 0; i < files.n; i++) {
    sim_scenario_info info = {0};
    char err[SIM_ERRLEN];
    if (sim_scenario_inspect(files.v[i], &info, err) != SIM_OK) {
      fprintf(stderr, "%s\n", sim_term_safe(err));
      bad++;
      continue;
    }
    sim_term_safe(info.name); /* text from the scenario: no terminal controls */
    sim_term_safe(info.doc);
    for (int t = 0; t < info.ntags; t++) sim_term_safe(info.tags[t]);
    char lname[4096];
    const char *shown = cli_library_name(files.v[i], lname, sizeof lname);
    printf("%s\n  %s", shown ? shown : files.v[i], info.name);
    if (info.ntags) {
      printf("  [");
      for (int t = 0; t < info.ntags; t++) printf("%s%s", t ? ", " : "", info.tags[t]);
      printf("]");
    }
    printf("\n");
    if (info.doc) print_doc(info.doc);
    sim_scenario_info_clear(&info);
  }
  path_list_clear(&files);
  return bad ? EXIT_USAGE : EXIT_PASS;
}
