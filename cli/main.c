/*
 * main.c - the fusebox program: dispatches to one subcommand.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/options.h"

static const char USAGE[] =
    "fusebox " FUSEBOX_VERSION " - a fault-injection harness for LLM API clients\n"
    "\n"
    "usage: fusebox COMMAND [options]\n"
    "\n"
    "Every option that takes a value takes it as --opt VALUE or --opt=VALUE.\n"
    "\n"
    "commands:\n"
    "  run [PATH...]       play scenarios (default: the standard library) against a\n"
    "                      built-in client and judge them; exit 1 on a failed verdict\n"
    "  report TRACE...     judge traces written earlier; write the same reports\n"
    "  exec SCENARIO... -- CMD [ARGS...]\n"
    "                      serve each scenario, run CMD against it with\n"
    "                      OPENAI_BASE_URL/ANTHROPIC_BASE_URL set, judge what it did\n"
    "  matrix --client NAME='CMD'... [PATH...]\n"
    "                      one suite, several clients: a clients x scenarios table\n"
    "  serve SCENARIO [--port N] [--bind ADDR] [--trace FILE] [--time-scale F] [--seed N]\n"
    "                      serve one scenario as a fake provider (OpenAI Chat and\n"
    "                      Responses, Anthropic, Gemini)\n"
    "  check SCENARIO...   load and validate scenario files (exit 2 on any error)\n"
    "  list [PATH...]      where the standard library is; its scenarios' names, tags, docs\n"
    "  which NAME...       the scenario files a library name or path stands for\n"
    "  import LOG [-o FILE]\n"
    "                      an incident log (JSON Lines, HAR or a trace) -> a scenario\n"
    "                      that replays it\n"
    "  record --upstream URL OUT.lua [--port N]\n"
    "                      proxy to a provider; on Ctrl-C write what it saw as a scenario\n"
    "  diff-policy OLD.lua NEW.lua\n"
    "                      two client profiles compared fact by fact; exit 1 naming\n"
    "                      each fact that changed\n"
    "  hunt [--client NAME | -- CMD...]\n"
    "                      search fault schedules for one that breaks the client and\n"
    "                      shrink it to the smallest that still does\n"
    "  learn [--client NAME | -- CMD...] [-o PROFILE.lua]\n"
    "                      probe a client and write its retry policy as a profile\n"
    "\n"
    "A SCENARIO is a path, or a library name: 'fusebox run ratelimit/retry_after_seconds'\n"
    "plays scenarios/ratelimit/retry_after_seconds.lua of the standard library, found\n"
    "next to the binary (../share/fusebox), in $FUSEBOX_HOME, in the build tree, or in\n"
    "./scenarios ($FUSEBOX_SCENARIOS replaces its scenario folder); 'fusebox --version'\n"
    "says which.\n"
    "\n"
    "Run 'fusebox COMMAND --help' for a command's options.\n"
    "Exit status: 0 ok, 1 a verdict failed, 2 usage or input error.\n";

typedef struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
} command;

static const command COMMANDS[] = {
    {"serve", cmd_serve},
    {"check", cmd_check},
    {"list", cmd_list},
    {"run", cmd_run},
    {"report", cmd_report},
    {"exec", cmd_exec},
    {"matrix", cmd_matrix},
    {"import", cmd_import},
    {"record", cmd_record},
    {"which", cmd_which},
    {"diff-policy", cmd_diff_policy},
    {"hunt", cmd_hunt},
    {"learn", cmd_learn},
};

int main(int argc, char **argv) {
  if (cli_split_equals(&argc, &argv) != 0) {
    fputs("fusebox: out of memory\n", stderr);
    return EXIT_USAGE;
  }
  if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    fputs(USAGE, argc < 2 ? stderr : stdout);
    return argc < 2 ? EXIT_USAGE : EXIT_PASS;
  }
  if (strcmp(argv[1], "--version") == 0) {
    char where[4200];
    cli_library_describe(where, sizeof where);
    printf("fusebox %s\n%s\n", FUSEBOX_VERSION, where);
    return EXIT_PASS;
  }
  for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
    if (strcmp(argv[1], COMMANDS[i].name) == 0) return COMMANDS[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "fusebox: unknown command '%s'\n\n%s", argv[1], USAGE);
  return EXIT_USAGE;
}
