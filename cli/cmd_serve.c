/*
 * cmd_serve.c - `fusebox serve`: one scenario as a fake provider until
 * Ctrl-C (SIGINT) or SIGTERM, then a clean stop with the trace complete.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/control.h"
#include "cli/options.h"
#include "sim/sim.h"

static const char USAGE[] =
    "usage: fusebox serve SCENARIO [options]\n"
    "       fusebox serve [SCENARIO] --control [--control-token TOKEN] [options]\n"
    "\n"
    CLI_NAME_HELP
    "\n"
    "Serves SCENARIO as a fake provider in every API it speaks (docs/apis.md):\n"
    "OpenAI /v1/chat/completions and /v1/responses, Anthropic /v1/messages,\n"
    "Gemini /v1beta/models/M:generateContent, Ollama /api/chat, Cohere /v2/chat,\n"
    "Bedrock /model/M/converse, and effects POST/GET /v1/effects/...; a provider\n"
    "named NAME is also at /NAME/v1/... . Stops cleanly on Ctrl-C or SIGTERM.\n"
    "\n"
    "options:\n"
    "  --port N          port to listen on (default 0: pick a free one and print it)\n"
    "  --bind ADDR       address to bind (default 127.0.0.1; others print a warning)\n"
    "  --trace FILE      write the trace (JSON Lines) to FILE\n"
    "  --upstream URL    the real provider an upstream{} step forwards its attempt to,\n"
    "                    with that step's faults on the real answer (docs/upstream.md);\n"
    "                    the request's credentials go to this origin only\n"
    "\n"
    "driving it from a test suite (docs/control.md):\n"
    "  --control         serve the control API under /__fusebox/ (health, PUT scenario,\n"
    "                    reset, requests, report, trace) and per-test sessions: a request\n"
    "                    with X-Fusebox-Session: NAME, or under /__session/NAME/, has its\n"
    "                    own counters, ledger, rate limiter, trace and report (at most 256\n"
    "                    sessions, 8 MiB of trace each); SCENARIO is then optional\n"
    "  --control-token T every control request needs Authorization: Bearer T (required\n"
    "                    with a --bind other than loopback; never written anywhere)\n"
    "\n"
    "a fleet of servers acting as one provider (docs/fleet.md):\n"
    "  --state URL       keep attempts, ledger and rate limits in Redis: redis://HOST:PORT[/DB]\n"
    "  --session NAME    the fleet session to join (default: one per scenario name);\n"
    "                    1 to 64 of A-Z a-z 0-9 . _ -\n"
    "  --new-session     start the session afresh (the first server of a new run)\n"
    "  --instance NAME   this server's name in its trace (default: host-pid)\n";
#define SERVE_OPTS (CLI_OPT_SCALE | CLI_OPT_SEED)

static void serve_usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  fputs(USAGE, f);
  cli_common_usage(f, SERVE_OPTS, &d);
  fputs("\nWith --time-scale F the scenario's delays and every wait it advises on the\n"
        "wire (Retry-After in seconds or as a date, retry-after-ms, Gemini's retryDelay,\n"
        "the rate limiter's Retry-After and reset headers) are times F, so any client\n"
        "runs at that pace: --time-scale 0.1 sends 'retry-after: 3' for a scenario's 30.\n"
        "The trace keeps the scenario's values and the verdicts scale them and their\n"
        "tolerances by F. A Retry-After written raw (retry_after_raw) is sent as written.\n",
        f);
}

/* 1 when a control token can match an Authorization header: not empty, no
   blank at either end (HTTP trims them), no control character. */
static int token_ok(const char *t) {
  size_t n = strlen(t);
  if (n == 0 || t[0] == ' ' || t[n - 1] == ' ') return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)t[i] < 0x20 || (unsigned char)t[i] == 0x7f) return 0;
  return 1;
}

static int is_loopback(const char *a) {
  return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0;
}

static volatile sig_atomic_t trace_failed;

/* The first failed trace write (a full disk): say so once and stop, since
   a session whose record is lost has nothing to show for itself. */
static void on_trace_error(void *arg, const char *msg) {
  (void)arg;
  trace_failed = 1;
  fprintf(stderr, "fusebox serve: %s\n", msg);
  kill(getpid(), SIGTERM);
}

int cmd_serve(int argc, char **argv) {
  sim_server_opts o = {.seed = 1};
  int control = 0;
  cli_control cc = {.token = NULL};
  cli_common c;
  cli_common_init(&c, CLI_TIME_SCALE_SERVE, CLI_JOBS_EXEC);
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    long n;
    int r = cli_common_option("serve", argc, argv, &i, SERVE_OPTS, &c);
    if (r == 1) continue;
    if (r < 0) return EXIT_USAGE;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      serve_usage(stdout);
      return EXIT_PASS;
    } else if (strcmp(a, "--port") == 0) {
      if (cli_parse_int(a, v, 0, 65535, &n) != 0) return EXIT_USAGE;
      o.port = (int)n;
      i++;
    } else if (strcmp(a, "--bind") == 0 && v) {
      o.bind = v;
      i++;
    } else if (strcmp(a, "--trace") == 0 && v) {
      o.trace_path = v;
      i++;
    } else if (strcmp(a, "--state") == 0 && v) {
      o.state_url = v;
      i++;
    } else if (strcmp(a, "--upstream") == 0 && v) {
      o.upstream = v;
      i++;
    } else if (strcmp(a, "--session") == 0 && v) {
      if (!sim_session_name_ok(v)) { /* it names Redis keys: no ':' '*' or controls */
        fprintf(stderr, "fusebox serve: --session: a session name is 1 to %d of "
                        "A-Z a-z 0-9 . _ - (no ':', '*', blanks or control characters)\n",
                SIM_SESSION_NAME_MAX);
        return EXIT_USAGE;
      }
      o.session = v;
      i++;
    } else if (strcmp(a, "--new-session") == 0) {
      o.new_session = 1;
    } else if (strcmp(a, "--control") == 0) {
      control = 1;
    } else if (strcmp(a, "--control-token") == 0 && v) {
      if (!token_ok(v)) {
        fprintf(stderr, "fusebox serve: --control-token: a token is visible characters "
                        "(spaces inside only): none blank, no blank at either end, no "
                        "control character; HTTP trims a header's blanks, so such a token "
                        "could never match\n");
        return EXIT_USAGE;
      }
      cc.token = v;
      i++;
    } else if (strcmp(a, "--instance") == 0 && v) {
      o.instance = v;
      i++;
    } else if (a[0] == '-') {
      fprintf(stderr, "fusebox serve: unknown or incomplete option '%s'\n\n", a);
      serve_usage(stderr);
      return EXIT_USAGE;
    } else if (path == NULL) {
      path = a;
    } else {
      fprintf(stderr, "fusebox serve: one scenario at a time ('%s')\n", a);
      return EXIT_USAGE;
    }
  }
  if (path == NULL && !control) {
    fprintf(stderr, "fusebox serve: which scenario?\n\n%s", USAGE);
    return EXIT_USAGE;
  }
  if (cc.token != NULL && !control) {
    fprintf(stderr, "fusebox serve: --control-token needs --control\n");
    return EXIT_USAGE;
  }
  if (control && o.state_url != NULL) {
    fprintf(stderr, "fusebox serve: --control keeps its sessions in this process: "
                    "not with --state (a fleet)\n");
    return EXIT_USAGE;
  }
  if (control && o.bind && !is_loopback(o.bind) && cc.token == NULL) {
    fprintf(stderr, "fusebox serve: --control on %s (not loopback) needs --control-token: "
                    "anyone who reaches the port could change the scenario\n", o.bind);
    return EXIT_USAGE;
  }
  o.time_scale = c.time_scale;
  o.scale_wire = 1; /* an outside client does not know the scale */
  o.seed = c.seed;
  if ((o.session || o.new_session || o.instance) && o.state_url == NULL) {
    fprintf(stderr, "fusebox serve: --session, --new-session and --instance need --state\n");
    return EXIT_USAGE;
  }
  if (o.bind && !is_loopback(o.bind))
    fprintf(stderr, "fusebox serve: warning: binding %s exposes the fake provider beyond "
                    "this machine\n", o.bind);
  sim_global_init();

  /* Block the stop signals before any thread starts, then wait for them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  sim_server *srv = NULL;
  char err[SIM_ERRLEN];
  o.on_trace_error = on_trace_error;
  cc.seed = o.seed;
  if (control) {
    o.control = cli_control_handle;
    o.control_arg = &cc;
  }
  char resolved[4096];
  if (path && cli_resolve_scenario(path, resolved, sizeof resolved) != 0) return EXIT_USAGE;
  if (path) path = resolved;
  int rc = path ? cli_scenario_load(path, o.seed, &o.scenario, err) : SIM_OK;
  if (rc == SIM_OK) rc = sim_server_start(&o, &srv, err);
  if (rc != SIM_OK) {
    fprintf(stderr, "fusebox serve: %s\n", err);
    sim_scenario_free(o.scenario);
    return EXIT_USAGE;
  }
  int port = sim_server_port(srv);
  /* an IPv6 literal is bracketed in a URL (RFC 3986): http://[::1]:PORT */
  char hostbuf[80];
  const char *bind = o.bind ? o.bind : "127.0.0.1";
  snprintf(hostbuf, sizeof hostbuf, strchr(bind, ':') ? "[%.64s]" : "%.64s", bind);
  const char *host = hostbuf;
  if (path) printf("fusebox: serving %s on http://%s:%d\n", path, host, port);
  else printf("fusebox: serving no scenario yet on http://%s:%d\n", host, port);
  if (control) printf("  control: http://%s:%d/__fusebox/ (docs/control.md)\n", host, port);
  printf("  OPENAI_BASE_URL=http://%s:%d/v1\n", host, port);
  printf("  ANTHROPIC_BASE_URL=http://%s:%d\n", host, port);
  printf("port %d\n", port);
  fflush(stdout);

  int sig = 0;
  sigwait(&set, &sig);
  long arrivals = sim_server_arrivals(srv);
  if (sim_server_stop(srv, err) != SIM_OK) {
    if (!trace_failed) fprintf(stderr, "fusebox serve: %s\n", err);
    fprintf(stderr, "fusebox serve: stopped after %ld arrivals; the trace ends at the "
                    "failed write\n", arrivals);
    sim_scenario_free(o.scenario);
    return EXIT_USAGE;
  }
  sim_scenario_free(o.scenario);
  fprintf(stderr, "fusebox serve: stopped (%s) after %ld arrivals%s%s\n",
          sig == SIGINT ? "SIGINT" : "SIGTERM", arrivals,
          o.trace_path ? "; trace in " : "", o.trace_path ? o.trace_path : "");
  return EXIT_PASS;
}
