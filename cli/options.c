/*
 * options.c - the table of options several subcommands share (options.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/exec.h"
#include "cli/options.h"
#include "cli/run.h"

typedef enum { ARG_NONE, ARG_PATH, ARG_DOUBLE, ARG_INT, ARG_LIST } arg_kind;

typedef struct opt_row {
  const char *name, *alias; /* alias may be NULL */
  unsigned group;           /* CLI_OPT_* */
  arg_kind arg;
  double lo, hi;            /* range of a number */
  const char *help;         /* one help line, after "  NAME ARG" */
} opt_row;

static const opt_row ROWS[] = {
    {"--json", NULL, CLI_OPT_JSON_HTML, ARG_PATH, 0, 0, "write the results as JSON"},
    {"--junit", NULL, CLI_OPT_JUNIT, ARG_PATH, 0, 0,
     "write JUnit XML (one testcase per scenario)"},
    {"--html", NULL, CLI_OPT_JSON_HTML, ARG_PATH, 0, 0,
     "write a self-contained HTML report"},
    {"--markdown", NULL, CLI_OPT_MARKDOWN, ARG_PATH, 0, 0,
     "write a Markdown summary (failed verdicts and their evidence;\n"
     "                    a CI job summary or a PR comment)"},
    {"--quiet", "-q", CLI_OPT_QUIET, ARG_NONE, 0, 0,
     "no table on standard output (reports and exit status only)"},
    {"--time-scale", NULL, CLI_OPT_SCALE, ARG_DOUBLE, CLI_TIME_SCALE_MIN, CLI_TIME_SCALE_MAX,
     "multiply every delay, wait and tolerance by F"},
    {"--seed", NULL, CLI_OPT_SEED, ARG_INT, 0, 2147483647.0,
     "seed for the scenarios' math.random"},
    {"--timeout", NULL, CLI_OPT_TIMEOUT, ARG_DOUBLE, 0.1, 86400,
     "kill an outside command after S seconds (sooner once silent for twice the\n"
     "                    scenario's deadline + 5 s)"},
    {"--trace-dir", NULL, CLI_OPT_TRACE_DIR, ARG_PATH, 0, 0,
     "keep traces (and a command's output) in DIR; without it nothing is left behind"},
    {"-j", "--jobs", CLI_OPT_JOBS, ARG_INT, 1, CLI_JOBS_MAX, "scenarios played at once"},
    {"--deadline", NULL, CLI_OPT_DEADLINE, ARG_PATH, 0.1, 86400,
     "\n                    hold the command to a deadline where the scenario\n"
     "                    judges one (within_deadline): `scenario` = its own\n"
     "                    (client.deadline, exported as FUSEBOX_DEADLINE), or S\n"
     "                    seconds everywhere (then FUSEBOX_DEADLINE=S). Timed from\n"
     "                    the first request, not the process start. Default: not\n"
     "                    held; a scenario about the deadline is then N/A"},
    {"--tags", NULL, CLI_OPT_SELECT, ARG_LIST, 0, 0, "only scenarios with one of these tags"},
    {"--skip-tags", NULL, CLI_OPT_SELECT, ARG_LIST, 0, 0,
     "leave out scenarios with one of these tags"},
    {"--without", NULL, CLI_OPT_WITHOUT, ARG_LIST, 0, 0,
     "what CMD cannot do: stream, effects. Scenarios that need\n"
     "                    it are reported skipped, with the reason (never pass)"},
};

/* The capabilities --without names, as EXEC_WITHOUT_* bits. */
static const struct {
  const char *name;
  unsigned bit;
} WITHOUT[] = {{"stream", EXEC_WITHOUT_STREAM}, {"effects", EXEC_WITHOUT_EFFECTS}};

/* Reads a --without list into *bits; -1 with a message on an unknown word. */
static int parse_without(const char *cmd, const char *v, unsigned *bits) {
  const char *p = v;
  while (*p) {
    size_t n = strcspn(p, ",");
    size_t k = 0;
    for (; n > 0 && k < sizeof WITHOUT / sizeof WITHOUT[0]; k++)
      if (strlen(WITHOUT[k].name) == n && strncmp(p, WITHOUT[k].name, n) == 0) break;
    if (n > 0 && k == sizeof WITHOUT / sizeof WITHOUT[0]) {
      fprintf(stderr, "fusebox %s: --without takes stream and effects, not '%.*s'\n", cmd,
              (int)(n > 64 ? 64 : n), p);
      return -1;
    }
    if (n > 0) *bits |= WITHOUT[k].bit;
    p += n;
    if (*p == ',') p++;
  }
  return 0;
}

void cli_common_init(cli_common *o, double time_scale, int jobs) {
  memset(o, 0, sizeof *o);
  o->time_scale = time_scale;
  o->seed = 1;
  o->timeout_s = CLI_TIMEOUT_S;
  o->jobs = jobs;
}

/* Where the value of row r lives in o. */
static void store(const opt_row *r, cli_common *o, const char *v, double d) {
  if (strcmp(r->name, "--json") == 0) o->json = v;
  else if (strcmp(r->name, "--junit") == 0) o->junit = v;
  else if (strcmp(r->name, "--html") == 0) o->html = v;
  else if (strcmp(r->name, "--markdown") == 0) o->markdown = v;
  else if (strcmp(r->name, "--quiet") == 0) o->quiet = 1;
  else if (strcmp(r->name, "--time-scale") == 0) o->time_scale = d;
  else if (strcmp(r->name, "--seed") == 0) o->seed = (uint64_t)d;
  else if (strcmp(r->name, "--timeout") == 0) o->timeout_s = d;
  else if (strcmp(r->name, "--trace-dir") == 0) o->trace_dir = v;
  else if (strcmp(r->name, "-j") == 0) o->jobs = (int)d;
  else if (strcmp(r->name, "--deadline") == 0) o->deadline = v;
  else if (strcmp(r->name, "--tags") == 0) o->tags = v;
  else if (strcmp(r->name, "--skip-tags") == 0) o->skip_tags = v;
}

static int taken(const opt_row *r, unsigned which) { return (r->group & which) != 0; }

int cli_common_option(const char *cmd, int argc, char **argv, int *i, unsigned which,
                      cli_common *o) {
  const char *a = argv[*i];
  const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  for (size_t k = 0; k < sizeof ROWS / sizeof ROWS[0]; k++) {
    const opt_row *r = &ROWS[k];
    if (!taken(r, which)) continue;
    if (strcmp(a, r->name) != 0 && (r->alias == NULL || strcmp(a, r->alias) != 0)) continue;
    if (r->arg == ARG_NONE) {
      store(r, o, NULL, 0);
      return 1;
    }
    if (r->arg == ARG_PATH || r->arg == ARG_LIST) {
      if (v == NULL || v[0] == '\0' || (r->arg == ARG_LIST && strspn(v, ",") == strlen(v))) {
        fprintf(stderr, "fusebox %s: %s needs a value\n", cmd, a);
        return -1;
      }
      double d;
      if (strcmp(r->name, "--deadline") == 0 && strcmp(v, "scenario") != 0 &&
          cli_parse_double(a, v, r->lo, r->hi, &d) != 0)
        return -1; /* `scenario` or seconds in range */
      if (strcmp(r->name, "--without") == 0) {
        if (parse_without(cmd, v, &o->without) != 0) return -1;
      } else {
        store(r, o, v, 0);
      }
    } else if (r->arg == ARG_DOUBLE) {
      double d;
      if (cli_parse_double(a, v, r->lo, r->hi, &d) != 0) return -1;
      store(r, o, NULL, d);
    } else {
      long n;
      if (cli_parse_int(a, v, (long)r->lo, (long)r->hi, &n) != 0) return -1;
      store(r, o, NULL, (double)n);
    }
    (*i)++;
    return 1;
  }
  return 0;
}

void cli_common_usage(FILE *f, unsigned which, const cli_common *d) {
  for (size_t k = 0; k < sizeof ROWS / sizeof ROWS[0]; k++) {
    const opt_row *r = &ROWS[k];
    if (!taken(r, which)) continue;
    const char *arg = r->arg == ARG_NONE ? "" : strcmp(r->name, "--time-scale") == 0 ? " F"
                      : strcmp(r->name, "--timeout") == 0 ? " S"
                      : strcmp(r->name, "--deadline") == 0 ? " S|scenario"
                      : strcmp(r->name, "--without") == 0 ? " W,..."
                      : r->arg == ARG_LIST ? " T,..."
                      : r->arg == ARG_PATH ? (strcmp(r->name, "--trace-dir") == 0 ? " DIR" : " FILE")
                                           : " N";
    char head[40];
    snprintf(head, sizeof head, "%s%s", r->name, arg);
    fprintf(f, "  %-18s%s", head, r->help);
    if (strcmp(r->name, "--time-scale") == 0)
      fprintf(f, " (%g..%g, default %g)", r->lo, r->hi, d->time_scale);
    else if (strcmp(r->name, "--seed") == 0) fprintf(f, " (default %llu)", (unsigned long long)d->seed);
    else if (strcmp(r->name, "--timeout") == 0) fprintf(f, " (default %g)", d->timeout_s);
    else if (strcmp(r->name, "-j") == 0 && d->jobs == CLI_JOBS_AUTO)
      fprintf(f, " (1..%d; default %d..%d: as many as\n%20slet the longest scenario set "
              "the pace, from the expected durations)", CLI_JOBS_MAX, CLI_JOBS_AUTO_MIN,
              CLI_JOBS_AUTO_MAX, "");
    else if (strcmp(r->name, "-j") == 0) fprintf(f, " (1..%d, default %d)", CLI_JOBS_MAX, d->jobs);
    fputc('\n', f);
  }
}

int cli_client_kind(const char *name) {
  if (strcmp(name, "guard") == 0) return RUN_CLIENT_GUARD;
  if (strcmp(name, "naive") == 0) return RUN_CLIENT_NAIVE;
  if (strcmp(name, "sdk-default") == 0) return RUN_CLIENT_SDK;
  return -1;
}

/* True for "--name=value" with a name of letters, digits and dashes. */
static int is_long_eq(const char *a) {
  if (strncmp(a, "--", 2) != 0 || a[2] == '\0' || a[2] == '=') return 0;
  const char *p = a + 2;
  while (*p && *p != '=') {
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-')) return 0;
    p++;
  }
  return *p == '=';
}

/* The split arguments, reachable until exit (a leak checker sees them). */
static char **split_args;

/* "--name=value" -> "--name" "value" before "--"; see options.h. */
int cli_split_equals(int *argc, char ***argv) {
  int n = *argc, extra = 0;
  for (int i = 1; i < n && strcmp((*argv)[i], "--") != 0; i++) extra += is_long_eq((*argv)[i]);
  if (extra == 0) return 0;
  char **out = calloc((size_t)(n + extra + 1), sizeof *out);
  if (out == NULL) return -1;
  int k = 0, after = 0;
  for (int i = 0; i < n; i++) {
    char *a = (*argv)[i];
    if (i > 0 && !after && strcmp(a, "--") == 0) after = 1;
    if (i == 0 || after || !is_long_eq(a)) {
      out[k++] = a;
      continue;
    }
    char *name = strdup(a);
    if (name == NULL) {
      free(out);
      return -1;
    }
    char *eq = strchr(name, '=');
    *eq = '\0';
    out[k++] = name;
    out[k++] = eq + 1;
  }
  out[k] = NULL;
  split_args = out;
  *argc = k;
  *argv = out;
  return 0;
}
