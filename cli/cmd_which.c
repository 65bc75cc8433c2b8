/*
 * cmd_which.c - `fusebox which NAME...`: the scenario files each name or
 * path stands for, one per line; the test helpers (integrations/) resolve
 * library names through it, so they resolve exactly as the program does.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char WHICH_USAGE[] =
    "usage: fusebox which SCENARIO...\n"
    "\n"
    "Prints the scenario files (*.lua) each SCENARIO stands for, one per line, as\n"
    "run, exec, serve, check and list would play them; exit 2 if one names nothing.\n"
    "\n" CLI_NAME_HELP;

int cmd_which(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(WHICH_USAGE, stdout);
      return EXIT_PASS;
    }
    if (argv[i][0] == '-') {
      fprintf(stderr, "fusebox which: unknown option '%s'\n\n%s", argv[i], WHICH_USAGE);
      return EXIT_USAGE;
    }
  }
  if (argc < 2) {
    fprintf(stderr, "fusebox which: which scenario names?\n\n%s", WHICH_USAGE);
    return EXIT_USAGE;
  }
  path_list files = {0};
  int rc = cli_collect_scenarios(argv + 1, argc - 1, &files) == 0 ? EXIT_PASS : EXIT_USAGE;
  for (size_t i = 0; rc == EXIT_PASS && i < files.n; i++) printf("%s\n", files.v[i]);
  path_list_clear(&files);
  return rc;
}
