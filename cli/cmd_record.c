/*
 * cmd_record.c - `fusebox record --upstream URL OUT.lua`: option parsing
 * around the recording proxy (imp_record_*, import/record.c). Waits for
 * SIGINT or SIGTERM, then writes what was recorded: the scenario to
 * OUT.lua, the raw exchanges to --log.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "import/import.h"
#include "sim/sim.h"

static const char USAGE[] =
    "usage: fusebox record --upstream URL OUT.lua [options]\n"
    "\n"
    "A recording proxy. Point a client at it (OPENAI_BASE_URL=http://127.0.0.1:P/v1,\n"
    "ANTHROPIC_BASE_URL=http://127.0.0.1:P); each request goes to URL + its path,\n"
    "and the upstream's answer comes back unchanged, streams as they arrive.\n"
    "On Ctrl-C or SIGTERM, what was seen (statuses, headers, bodies, latencies,\n"
    "stream chunks) is written to OUT.lua as a scenario that replays it.\n"
    "Credentials are forwarded, never written (docs/trace.md, the redaction rule).\n"
    "\n"
    "options:\n"
    "  --upstream URL    where to forward, e.g. https://api.openai.com (required)\n"
    "  --port N          port to listen on (default 0: pick a free one and print it)\n"
    "  --bind ADDR       address to bind (default 127.0.0.1)\n"
    "  --log FILE        also keep the raw exchanges as JSON Lines (fusebox import reads it)\n"
    "  --name NAME       the scenario's name\n"
    "  --max-connections N  clients at once (default 64); more wait or are refused\n"
    "  --idle-timeout S  close a client idle this many seconds (default 30)\n"
    "\n"
    "Only requests whose target is a path ('/' + path) are forwarded, always to\n"
    "URL's scheme, host and port; any other target is answered 400. What was\n"
    "recorded is written on SIGINT and SIGTERM; if it cannot be turned into a\n"
    "scenario, the raw exchanges go to OUT.lua.jsonl (or --log). See docs/security.md.\n";

static int write_text(const char *path, const char *text, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  int bad = fwrite(text, 1, n, f) != n;
  if (fclose(f) != 0) bad = 1;
  return bad ? -1 : 0;
}

static int is_loopback(const char *a) {
  return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

/* Writes what the stopped recorder holds: the log (always, when asked),
   the scenario, and the raw log in its place when no scenario can be made.
   Returns the exit status. */
static int write_recording(imp_recorder *rec, const char *out, const char *logpath,
                           const char *name, int sig) {
  int rc = EXIT_PASS;
  size_t loglen = 0;
  const char *log = imp_record_log(rec, &loglen);
  if (logpath != NULL && write_text(logpath, log, loglen) != 0) {
    fprintf(stderr, "fusebox record: cannot write %s: %s\n", logpath, strerror(errno));
    rc = EXIT_USAGE;
  }
  if (imp_record_full(rec))
    fprintf(stderr, "fusebox record: warning: the log reached %zu bytes; later exchanges "
                    "were not recorded\n", (size_t)IMP_MAX_INPUT);
  if (imp_record_refused(rec) > 0)
    fprintf(stderr, "fusebox record: %ld request%s with a target that is not a path were "
                    "refused (400, never forwarded)\n", imp_record_refused(rec),
            imp_record_refused(rec) == 1 ? "" : "s");
  if (imp_record_unreachable(rec) > 0)
    fprintf(stderr, "fusebox record: %ld request%s could not reach the upstream (answered 502, "
                    "not recorded)\n", imp_record_unreachable(rec),
            imp_record_unreachable(rec) == 1 ? "" : "s");
  if (imp_record_exchanges(rec) == 0) {
    fprintf(stderr, "fusebox record: stopped; no exchange was recorded, %s not written\n", out);
    return EXIT_USAGE;
  }
  imp_opts o = {.name = name};
  char *lua = NULL;
  imp_stats st;
  char err[SIM_ERRLEN];
  int irc = imp_record_scenario(rec, &o, &lua, &st, err);
  if (irc != SIM_OK) {
    fprintf(stderr, "fusebox record: no scenario from what was recorded: %s\n",
            sim_term_safe(err));
    if (logpath == NULL) {
      size_t n = strlen(out) + 8;
      char *raw = malloc(n);
      if (raw != NULL) {
        snprintf(raw, n, "%s.jsonl", out);
        if (write_text(raw, log, loglen) == 0)
          fprintf(stderr, "fusebox record: the %ld recorded exchange%s kept in %s\n",
                  imp_record_exchanges(rec), imp_record_exchanges(rec) == 1 ? "" : "s", raw);
        else
          fprintf(stderr, "fusebox record: cannot write %s: %s\n", raw, strerror(errno));
        free(raw);
      }
    }
    rc = EXIT_USAGE;
  } else if (write_text(out, lua, strlen(lua)) != 0) {
    fprintf(stderr, "fusebox record: cannot write %s: %s\n", out, strerror(errno));
    rc = EXIT_USAGE;
  } else {
    fprintf(stderr, "fusebox record: stopped (%s); %d attempt%s of %d logical request%s -> %s\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM", st.attempts, st.attempts == 1 ? "" : "s",
            st.requests, st.requests == 1 ? "" : "s", out);
  }
  free(lua);
  return rc;
}

/* `fusebox record`: proxies until SIGINT or SIGTERM, then writes the scenario.
   Returns the exit status (0, or 2 on a usage error or when nothing was
   recorded). */
int cmd_record(int argc, char **argv) {
  const char *out = NULL, *logpath = NULL, *name = NULL;
  imp_record_opts ro = {.bind = "127.0.0.1"};
  long port = 0, maxconn = 0, idle = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(USAGE, stdout);
      return EXIT_PASS;
    } else if (strcmp(a, "--upstream") == 0 && v) {
      ro.upstream = v;
      i++;
    } else if (strcmp(a, "--port") == 0) {
      if (cli_parse_int(a, v, 0, 65535, &port) != 0) return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--max-connections") == 0) {
      if (cli_parse_int(a, v, 1, 1000, &maxconn) != 0) return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--idle-timeout") == 0) {
      if (cli_parse_int(a, v, 1, 3600, &idle) != 0) return EXIT_USAGE;
      i++;
    } else if (strcmp(a, "--bind") == 0 && v) {
      ro.bind = v;
      i++;
    } else if (strcmp(a, "--log") == 0 && v) {
      logpath = v;
      i++;
    } else if (strcmp(a, "--name") == 0 && v) {
      name = v;
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox record: unknown or incomplete option '%s'\n\n%s", a, USAGE);
      return EXIT_USAGE;
    } else if (out == NULL) {
      out = a;
    } else {
      fprintf(stderr, "fusebox record: one output file ('%s')\n", a);
      return EXIT_USAGE;
    }
  }
  if (ro.upstream == NULL || out == NULL) {
    fprintf(stderr, "fusebox record: --upstream URL and OUT.lua are required\n\n%s", USAGE);
    return EXIT_USAGE;
  }
  ro.port = (int)port;
  ro.max_connections = (int)maxconn;
  ro.idle_timeout_s = (int)idle;
  if (!is_loopback(ro.bind))
    fprintf(stderr, "fusebox record: warning: binding %s lets others use your upstream "
                    "credentials through this proxy\n", ro.bind);

  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  imp_recorder *rec = NULL;
  char err[SIM_ERRLEN];
  if (imp_record_start(&ro, &rec, err) != SIM_OK) {
    fprintf(stderr, "fusebox record: %s\n", err);
    return EXIT_USAGE;
  }
  const char *up = imp_record_upstream(rec);
  int real_port = imp_record_port(rec);
  printf("fusebox: recording %s on http://%s:%d\n", up, ro.bind, real_port);
  printf("  OPENAI_BASE_URL=http://%s:%d/v1\n", ro.bind, real_port);
  printf("  ANTHROPIC_BASE_URL=http://%s:%d\n", ro.bind, real_port);
  printf("port %d\n", real_port);
  fflush(stdout);

  int sig = 0;
  sigwait(&set, &sig);
  imp_record_stop(rec);
  int rc = write_recording(rec, out, logpath, name, sig);
  imp_record_free(rec);
  return rc;
}
