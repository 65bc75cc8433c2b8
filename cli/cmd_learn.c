/*
 * cmd_learn.c - `fusebox learn`: option parsing; the probes and the
 * inference are explore/learn.c's, the playing hunt's (cli/hunt.h).
 * docs/learn.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/hunt.h"
#include "cli/options.h"
#include "explore/explore.h"

#define LEARN_OPTS (CLI_OPT_QUIET | CLI_OPT_SCALE | CLI_OPT_SEED | CLI_OPT_TIMEOUT | CLI_OPT_JOBS)

static void usage(FILE *f) {
  cli_common d;
  cli_common_init(&d, 0.02, 1);
  d.timeout_s = 90;
  fprintf(f,
          "usage: fusebox learn [options] [--client guard|naive|sdk-default | -- CMD [ARGS...]]\n"
          "\n"
          "Plays probe scenarios against a client and infers its retry policy from what\n"
          "it did on the wire: the statuses and failures it retries, its attempts, its\n"
          "backoff (base, growth, jitter), how it reads Retry-After (each form, its cap,\n"
          "an unparsable or past value), x-should-retry and its Idempotency-Key. Writes\n"
          "the policy as a profile (profiles/README.md), each fact with its evidence,\n"
          "that `exec --profile` judges by and `diff-policy` compares. docs/learn.md.\n"
          "\n"
          "options:\n"
          "  --client NAME     learn a built-in client (" CLI_CLIENT_NAMES ")\n"
          "  -- CMD [ARGS...]  learn a command, served as `fusebox exec` serves it\n"
          "  -o FILE           write the profile to FILE (default: standard output)\n"
          "  --markdown FILE   write the policy card (one table of the facts, then\n"
          "                    what the wire showed for each)\n"
          "  --html FILE       the same card as a standalone HTML page\n"
          "  --name NAME       the profile's name (default: learned)\n"
          "  --version TEXT    the profile's version (default: as learned)\n"
          "  --api NAME        the API probed (default openai): openai, anthropic,\n"
          "                    responses, gemini, bedrock, ollama or cohere\n"
          "  --repeats N       plays of the backoff probe, for its jitter (1..16, default 5)\n"
          "  --confidence C    play each yes/no probe until a fact that flips half the\n"
          "                    time would show with chance C (0.5..0.998: 2 to 10 plays;\n"
          "                    default one play, consistency not checked)\n"
          "  --max-wait S      the longest Retry-After probed (default 61)\n"
          "  --warp F          run CMD under libfaketime F times faster\n");
  cli_common_usage(f, LEARN_OPTS, &d);
  fprintf(f, "\nexit status: 0 learned, 2 bad input or a probe that could not be played\n");
}

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_text(const char *path, const char *text) {
  FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
  if (!f) return -1;
  int bad = fputs(text, f) < 0;
  if (f != stdout) bad |= fclose(f) != 0;
  return bad ? -1 : 0;
}

typedef struct learn_args {
  const char *out, *markdown, *html, *name, *version;
  xpl_learn_opts lo;
} learn_args;

/* learn's own options: 1 taken, 0 not one, -1 bad. */
static int own_option(int argc, char **argv, int *i, hunt_ctx *h, learn_args *a) {
  const char *o = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  long n;
  if (v == NULL) return 0;
  int shared = hunt_client_option("learn", o, v, h, &a->lo.dialect);
  if (shared != 0) {
    if (shared < 0) return -1;
  } else if (strcmp(o, "-o") == 0) {
    a->out = v;
  } else if (strcmp(o, "--markdown") == 0) {
    a->markdown = v;
  } else if (strcmp(o, "--html") == 0) {
    a->html = v;
  } else if (strcmp(o, "--confidence") == 0) {
    if (cli_parse_double(o, v, 0.5, 0.998, &a->lo.confidence) != 0) return -1;
  } else if (strcmp(o, "--name") == 0) {
    a->name = v;
  } else if (strcmp(o, "--version") == 0) {
    a->version = v;
  } else if (strcmp(o, "--repeats") == 0) {
    if (cli_parse_int(o, v, 1, 16, &n) != 0) return -1;
    a->lo.repeats = (int)n;
  } else if (strcmp(o, "--max-wait") == 0) {
    if (cli_parse_double(o, v, 2, 86400, &a->lo.max_wait) != 0) return -1;
  } else {
    return 0;
  }
  (*i)++;
  return 1;
}

int cmd_learn(int argc, char **argv) {
  hunt_ctx h = {.kind = RUN_CLIENT_SDK};
  learn_args a = {.out = "-"};
  cli_common c;
  cli_common_init(&c, 0.02, 1);
  c.timeout_s = 90;
  if (cli_split_equals(&argc, &argv) != 0) return EXIT_USAGE;
  int builtin_named = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) {
      h.argv = &argv[i + 1];
      break;
    }
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return EXIT_PASS;
    }
    builtin_named |= strcmp(argv[i], "--client") == 0;
    int r = cli_common_option("learn", argc, argv, &i, LEARN_OPTS, &c);
    if (r == 0) r = own_option(argc, argv, &i, &h, &a);
    if (r < 0) return EXIT_USAGE;
    if (r == 0) {
      fprintf(stderr, "fusebox learn: unknown or incomplete option '%s'\n\n", argv[i]);
      usage(stderr);
      return EXIT_USAGE;
    }
  }
  if ((h.argv && (h.argv[0] == NULL || builtin_named)) || (!h.argv && !builtin_named)) {
    fprintf(stderr, "fusebox learn: give --client NAME or -- CMD (one of them)\n");
    return EXIT_USAGE;
  }
  h.scale = c.time_scale;
  h.seed = c.seed;
  h.jobs = c.jobs > 0 ? c.jobs : 1;
  h.quiet = c.quiet;
  if (h.argv) {
    double warp = h.exec.warp;
    exec_opts_take(&h.exec, &c, "learn");
    h.exec.warp = warp;
    h.exec.quiet = 1;
    if (h.exec.warp > 1 && !(h.exec.faketime_lib = exec_find_faketime())) {
      fprintf(stderr, "fusebox learn: --warp needs libfaketime (Debian: apt-get install "
                      "libfaketime)\n");
      return EXIT_USAGE;
    }
  } else if (h.exec.warp > 1) {
    fprintf(stderr, "fusebox learn: --warp is for a command (-- CMD); a built-in client uses "
                    "--time-scale\n");
    return EXIT_USAGE;
  }
  if (hunt_make_tmp(&h) != 0) {
    fprintf(stderr, "fusebox learn: cannot make a temporary folder: %s\n", strerror(errno));
    return EXIT_USAGE;
  }
  double t0 = mono_s();
  xpl_policy p;
  char err[XPL_ERRLEN];
  int rc = xpl_learn(&a.lo, hunt_play, &h, &p, err);
  double took = mono_s() - t0;
  int status = EXIT_PASS;
  if (rc != 0) {
    fprintf(stderr, "fusebox learn: %s\n", err);
    status = EXIT_USAGE;
  } else {
    char who[512] = "", how[1024];
    if (h.argv)
      for (int i = 0; h.argv[i]; i++)
        snprintf(who + strlen(who), sizeof who - strlen(who), "%s%s", i ? " " : "", h.argv[i]);
    else
      snprintf(who, sizeof who, "fusebox's built-in %s client", run_client_name(h.kind));
    snprintf(how, sizeof how,
             "Learned by fusebox learn from %ld probes in %.1f s (seed %llu) against %s; "
             "%sa call deadline is not probed.",
             p.runs, took, (unsigned long long)h.seed, who,
             p.streams_probed ? "" : "it did not stream when asked, so stream faults, ");
    char *lua = xpl_policy_lua(&p, a.name, a.version, how, a.lo.dialect);
    const char *card = a.name ? a.name : who;
    char *md = a.markdown ? xpl_policy_markdown(&p, card, how) : NULL;
    char *html = a.html ? xpl_policy_html(&p, card, how) : NULL;
    const char *bad = NULL;
    if (!lua || (a.markdown && !md) || (a.html && !html)) {
      fprintf(stderr, "fusebox learn: out of memory\n");
      status = EXIT_USAGE;
    } else if ((write_text(a.out, lua) != 0 && (bad = a.out)) ||
               (md && write_text(a.markdown, md) != 0 && (bad = a.markdown)) ||
               (html && write_text(a.html, html) != 0 && (bad = a.html))) {
      fprintf(stderr, "fusebox learn: cannot write %s: %s\n", bad, strerror(errno));
      status = EXIT_USAGE;
    } else if (!h.quiet) {
      fprintf(stderr, "fusebox learn: %ld probes in %.1f s%s%s\n", p.runs, took,
              strcmp(a.out, "-") ? "; profile in " : "", strcmp(a.out, "-") ? a.out : "");
    }
    if (status == EXIT_PASS && p.nflaky)
      fprintf(stderr, "fusebox learn: %d yes/no facts differed between the %d plays of their "
                      "probe (the majority is written; the profile's comments say which)\n",
              p.nflaky, p.plays);
    free(lua);
    free(md);
    free(html);
  }
  cli_remove_tree(h.tmp);
  return status;
}
