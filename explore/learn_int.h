/*
 * learn_int.h - what the files of `fusebox learn` share: the learner, the
 * playing of probes (learn_play.c), the Retry-After probes (learn_ra.c);
 * the other probes and the inference are learn.c's.
 */
#ifndef FUSEBOX_LEARN_INT_H
#define FUSEBOX_LEARN_INT_H

#include "explore/explore_int.h"

/* Gaps that spread less than this are one wait measured with noise (the
   client's own time per request, multiplied under --warp), not jitter. */
#define JITTER_MIN 0.12

typedef struct learner {
  const xpl_learn_opts *o;
  xpl_play_fn play;
  void *arg;
  xpl_policy *p;
  long index;
  char *err;
  const char *client_extra; /* more of the probes' client table (", attempt_timeout = 1") */
  int stream;               /* the probes ask for a stream (call = "stream"); 2: one
                               offering tools (call = "stream_tools") */
} learner;

/* The answer a probe ends with, and the text its stream faults cut. */
#define CHUNKS "chunks = { \"The answer \", \"is \", \"forty-two.\" }, interval = 0.01"

/* Plays n probes (each its step text) at once into out; 0 or -1 (l->err). */
int lrn_play_n(learner *l, int n, char *const *steps, xpl_outcome *out);
/* Plays any number of probes, XPL_BATCH at a time. */
int lrn_play_all(learner *l, int n, char *const *steps, xpl_outcome *out);
/* Plays each of n probes p->plays times: play j of probe i is out[i * plays + j].
   A malloc'd array, NULL on error (l->err says why). */
xpl_outcome *lrn_play_each(learner *l, int n, char *const *steps);
/* Whether the plays of probe i say yes (a tie is yes), their count in
   *count (may be NULL); plays that disagree make the fact flaky. */
int lrn_vote(xpl_policy *p, const xpl_outcome *out, int i, int (*yes)(const xpl_outcome *),
             int *count);
/* " (2 of 3 plays)" when the plays of a fact disagreed, else "". */
const char *lrn_split(const xpl_policy *p, int c, char buf[48]);
/* Appends to the evidence of fact k (what the wire showed). */
void lrn_ev(xpl_policy *p, int k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The gap before arrival k (k >= 1): from the end of the one before. */
double lrn_gap(const xpl_outcome *o, int k);
int lrn_retried(const xpl_outcome *o);
void lrn_add_retry(xpl_policy *p, const char *what);
/* What a retry after a response leads to: stop, immediate, backoff. */
const char *lrn_classify(const xpl_policy *p, const xpl_outcome *o);
double lrn_median(double *v, int n); /* sorts v */
/* Two significant figures: a measured 0.4987 s is 0.5. */
double lrn_round2(double x);

/* Retry-After: each form and which wins, the cap (by bisection), bad and
   past values; only for a client that retries a 429. 0 or -1. */
int lrn_probe_retry_after(learner *l);

#endif
