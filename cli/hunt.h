/*
 * hunt.h - `fusebox hunt`: what its two files share (cmd_hunt.c plays and
 * parses, hunt_out.c writes the findings).
 */
#ifndef FUSEBOX_HUNT_H
#define FUSEBOX_HUNT_H

#include "cli/exec.h"
#include "cli/options.h"
#include "cli/run.h"
#include "explore/explore.h"

typedef struct hunt_ctx {
  run_client_kind kind; /* the built-in client hunted (argv NULL) */
  char **argv;          /* or the command, NULL-terminated */
  exec_opts exec;       /* for the command */
  double scale;         /* built-in clients and the reference */
  uint64_t seed;
  int jobs, quiet;
  double time_s, t0;    /* --time, and the start (monotonic s) */
  const char *out_dir;  /* --out, or NULL */
  char tmp[4096];       /* the run's temporary folder */
  xpl_schedule from;    /* --from's schedule */
} hunt_ctx;

/* Plays one scenario text (reference: with the guarded client) and judges
   it into out; the trace is kept as KEEP.jsonl when keep is not NULL.
   0, or -1 when the command cannot be run at all. */
int hunt_play_one(const hunt_ctx *h, int reference, const char *lua, long index,
                  const char *keep, xpl_outcome *out);

/* xpl_play_fn over a hunt_ctx (arg): plays the batch, ctx->jobs at a time.
   `fusebox learn` plays its probes with it too. */
int hunt_play(void *arg, int reference, int n, char *const *lua, const long *index,
              xpl_outcome *out, char err[XPL_ERRLEN]);
/* The options hunt and learn share: --client NAME, --api NAME (into
   *dialect) and --warp F, for command cmd ("hunt"). 1 taken, 0 not one,
   -1 bad (said on stderr). */
int hunt_client_option(const char *cmd, const char *opt, const char *val, hunt_ctx *h,
                       const char **dialect);
/* Makes ctx->tmp, the run's temporary folder (under $TMPDIR); 0 or -1. */
int hunt_make_tmp(hunt_ctx *h);

/* Writes the findings: terminal lines, --out DIR (scenario, trace,
   hunt.json) and the shared report files. 0, or -1 on an error (said). */
int hunt_write(const hunt_ctx *h, const xpl_hunt_opts *o, const cli_common *c,
               const xpl_hunt_result *res, int argc, char **argv);

#endif
