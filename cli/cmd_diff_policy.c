/*
 * cmd_diff_policy.c - `fusebox diff-policy OLD NEW`: two client profiles
 * (learned or hand-written) compared fact by fact; exit 1 naming each fact
 * that changed with both values (docs/learn.md, the CI gate in docs/ci.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports.h"
#include "cli/cli.h"
#include "cli/options.h"
#include "cli/policy_facts.h"
#include "sim/sim.h"

static const char USAGE[] =
    "usage: fusebox diff-policy [--tolerance F] OLD.lua NEW.lua\n"
    "\n"
    "Compares two client profiles (profiles/*.lua format, hand-written or\n"
    "learned) fact by fact: attempts, backoff, each retried condition,\n"
    "x-should-retry, how Retry-After is read (forms, cap, what a value over the\n"
    "cap, an unparsable or a past one leads to), timeouts, Idempotency-Key.\n"
    "Prints one line per changed fact, 'FACT: OLD → NEW'.\n"
    "\n"
    "options:\n"
    "  --tolerance F   numbers within F (relative, 0..1; default 0) of each other\n"
    "                  are equal: a learned backoff measured with some noise\n"
    "\n"
    "Exit status: 0 every fact equal, 1 a fact changed, 2 usage or input error.\n";

static int load(const char *path, policy_facts *f) {
  char err[SIM_ERRLEN];
  char *json = NULL;
  if (sim_profile_load(path, &json, err) != SIM_OK) {
    fprintf(stderr, "fusebox diff-policy: %s\n", err);
    return -1;
  }
  char rerr[RPT_ERRLEN];
  int bad = rpt_profile_check(json, rerr) != RPT_OK;
  if (bad) fprintf(stderr, "fusebox diff-policy: %s: %s\n", path, rerr);
  else if (policy_facts_read(json, f) != 0) {
    fprintf(stderr, "fusebox diff-policy: %s: not a profile\n", path);
    bad = 1;
  }
  free(json);
  return bad ? -1 : 0;
}

static void put_line(void *ctx, const char *line) { fprintf((FILE *)ctx, "%s\n", line); }

int cmd_diff_policy(int argc, char **argv) {
  const char *files[2];
  int nfiles = 0;
  double tol = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      return EXIT_PASS;
    } else if (strcmp(a, "--tolerance") == 0) {
      if (cli_parse_double(a, v, 0, 1, &tol) != 0) return EXIT_USAGE;
      i++;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "fusebox diff-policy: unknown option '%s'\n\n%s", a, USAGE);
      return EXIT_USAGE;
    } else if (nfiles == 2) {
      fprintf(stderr, "fusebox diff-policy: more than two profiles\n\n%s", USAGE);
      return EXIT_USAGE;
    } else {
      files[nfiles++] = a;
    }
  }
  if (nfiles != 2) {
    fputs(USAGE, stderr);
    return EXIT_USAGE;
  }
  policy_facts *old = malloc(sizeof *old), *new = malloc(sizeof *new);
  int status = EXIT_USAGE;
  if (old && new && load(files[0], old) == 0 && load(files[1], new) == 0) {
    int changed = policy_facts_diff(old, new, tol, put_line, stdout);
    if (changed == 0) printf("%s and %s: the same policy (%d facts)\n", files[0], files[1], old->n);
    else printf("%d fact%s changed from %s to %s\n", changed, changed == 1 ? "" : "s", files[0], files[1]);
    status = changed ? EXIT_VERDICT : EXIT_PASS;
  }
  free(old);
  free(new);
  return status;
}
