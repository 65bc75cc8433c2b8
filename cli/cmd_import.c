/*
 * cmd_import.c - `fusebox import LOG [-o FILE]`: an incident log (JSON
 * Lines, HAR or a fusebox trace) turned into a scenario file that replays
 * it. The scenario is loaded once before it is written, so what comes out
 * always passes `fusebox check`.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "import/import.h"
#include "sim/sim.h"

static const char USAGE[] =
    "usage: fusebox import LOG [-o FILE] [--format F] [--name NAME] [--raw-dates]\n"
    "                      [--map OURS=THEIRS,...] [--request N]\n"
    "\n"
    "Turns LOG into a scenario that replays it: one step per recorded attempt,\n"
    "per logical request and provider, in order (statuses, headers with\n"
    "Retry-After, latencies as delay{}). Credentials are never written.\n"
    "LOG is JSON Lines (one attempt per line), a HAR file, or a trace written by\n"
    "fusebox serve; the format is detected. The scenario's expect table holds\n"
    "the best-practice verdicts that apply to the incident. See docs/import.md.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write the scenario to FILE (default: standard output)\n"
    "  --format F         json-lines, har or trace (default: detect)\n"
    "  --name NAME        the scenario's name (default: \"Imported from LOG\")\n"
    "  --raw-dates        keep Retry-After dates as sent (default: a date up to a day\n"
    "                     ahead replays as that many seconds after the replayed answer)\n"
    "  --map OURS=THEIRS,...  JSON Lines: read our field OURS from the log's THEIRS\n"
    "                     (e.g. status=status_code,t=timestamp,headers=response_headers)\n"
    "  --request N        a client's first call replays recorded request N (default 1)\n";

/* Writes text to path; returns 0 or -1 with a message on stderr. */
static int write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "fusebox import: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  size_t n = strlen(text);
  int bad = fwrite(text, 1, n, f) != n;
  if (fclose(f) != 0) bad = 1;
  if (bad) {
    fprintf(stderr, "fusebox import: cannot write %s: %s\n", path, strerror(errno));
    unlink(path);
    return -1;
  }
  return 0;
}

/* Loads the scenario text as fusebox serve would; 0 when it loads. */
static int verify(const char *text, const char *dir) {
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/.fusebox_import_XXXXXX", dir);
  int fd = mkstemp(tmpl);
  if (fd < 0) {
    snprintf(tmpl, sizeof tmpl, "/tmp/fusebox_import_XXXXXX");
    fd = mkstemp(tmpl);
  }
  if (fd < 0) return 0; /* nowhere to check: trust the importer */
  close(fd);
  if (write_file(tmpl, text) != 0) return -1;
  sim_scenario_info info;
  char err[SIM_ERRLEN];
  int rc = sim_scenario_inspect(tmpl, &info, err);
  unlink(tmpl);
  if (rc != SIM_OK) {
    fprintf(stderr, "fusebox import: the scenario written does not load (a bug; please "
                    "report it with the log): %s\n", sim_term_safe(err));
    return -1;
  }
  sim_scenario_info_clear(&info);
  return 0;
}

/* `fusebox import`: returns the exit status (0, or 2 on a usage or input error). */
int cmd_import(int argc, char **argv) {
  const char *in = NULL, *out = NULL;
  imp_opts o = {0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      return EXIT_PASS;
    } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
      out = v;
      i++;
    } else if (strcmp(a, "--raw-dates") == 0) {
      o.raw_dates = 1;
    } else if (strcmp(a, "--map") == 0 && v) {
      o.map = v;
      i++;
    } else if (strcmp(a, "--request") == 0) {
      long n;
      if (cli_parse_int(a, v, 1, 1000000, &n) != 0) return EXIT_USAGE;
      o.request = (int)n;
      i++;
    } else if (strcmp(a, "--name") == 0 && v) {
      o.name = v;
      i++;
    } else if (strcmp(a, "--format") == 0 && v) {
      if (strcmp(v, "json-lines") == 0 || strcmp(v, "jsonl") == 0) o.format = IMP_JSONL;
      else if (strcmp(v, "har") == 0) o.format = IMP_HAR;
      else if (strcmp(v, "trace") == 0) o.format = IMP_TRACE;
      else {
        fprintf(stderr, "fusebox import: --format must be json-lines, har or trace\n");
        return EXIT_USAGE;
      }
      i++;
    } else if (a[0] == '-' && a[1] != '\0') {
      fprintf(stderr, "fusebox import: unknown or incomplete option '%s'\n\n%s", a, USAGE);
      return EXIT_USAGE;
    } else if (in == NULL) {
      in = a;
    } else {
      fprintf(stderr, "fusebox import: one log at a time ('%s')\n", a);
      return EXIT_USAGE;
    }
  }
  if (in == NULL) {
    fprintf(stderr, "fusebox import: which log?\n\n%s", USAGE);
    return EXIT_USAGE;
  }

  char *lua = NULL;
  imp_stats st;
  char err[SIM_ERRLEN];
  int rc = imp_file(in, &o, &lua, &st, err);
  if (rc != SIM_OK) {
    fprintf(stderr, "fusebox import: %s\n", sim_term_safe(err));
    return EXIT_USAGE;
  }
  char dir[4096] = ".";
  if (out != NULL) {
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (slash == NULL) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
  }
  if (verify(lua, dir) != 0) {
    free(lua);
    return EXIT_USAGE;
  }
  if (out == NULL) {
    fputs(lua, stdout);
    fflush(stdout);
  } else if (write_file(out, lua) != 0) {
    free(lua);
    return EXIT_USAGE;
  }
  free(lua);
  fprintf(stderr, "fusebox import: %d attempt%s of %d logical request%s (%s)%s%s\n",
          st.attempts, st.attempts == 1 ? "" : "s", st.requests, st.requests == 1 ? "" : "s",
          imp_format_name(st.format), out ? " -> " : "", out ? out : "");
  if (st.unknown[0])
    fprintf(stderr, "fusebox import: warning: fields not read: %s (if one holds the status, "
                    "time or headers, name it with --map, e.g. --map status=status_code)\n",
            st.unknown);
  if (st.drops_only)
    fprintf(stderr, "fusebox import: warning: every attempt came out as a dropped connection "
                    "(no status was read): is the status under another name? (--map "
                    "status=FIELD)\n");
  if (st.skipped > 0)
    fprintf(stderr, "fusebox import: %d entr%s left out (other endpoints, or answered by the "
                    "server itself)\n", st.skipped, st.skipped == 1 ? "y" : "ies");
  return EXIT_PASS;
}
