/*
 * wait.c - the decision after a retryable failure: how long to wait
 * (backoff, with a valid Retry-After as its floor) and whether to wait at
 * all (a bad Retry-After under a "stop" policy, the call's maximum total
 * wait, a wait that would cross the deadline: each stops retrying at once).
 */
#include "guard/guard_int.h"

#include <stdio.h>
#include <string.h>

/* Appends a note to the attempt's detail. */
void guard__note(guard_attempt *a, const char *what) {
  size_t l = strlen(a->detail);
  if (l + 1 >= sizeof a->detail) return;
  snprintf(a->detail + l, sizeof a->detail - l, "%s%s", l ? "; " : "", what);
}

/* Plans the wait after failure n (see guard_int.h). */
int guard__plan_wait(guard__call *c, const guard__pol *pol, int n,
                     const guard__ra *ra, guard_attempt *a, double *wait_ms,
                     guard_wait_why *why) {
  guard *g = c->g;
  double wait = guard__backoff_ms(pol, n, guard__rand01(g));
  guard_wait_why w = GUARD_WAIT_BACKOFF;
  if (!(g->pol.flags & GUARD_IGNORE_RETRY_AFTER)) {
    if (ra->state == GUARD__RA_OK) {
      double asked = ra->ms * g->scale;
      a->retry_after_ms = asked;
      if (asked >= wait) {
        wait = asked;
        w = GUARD_WAIT_RETRY_AFTER;
        /* A floor, not an appointment: a little random time on top, so
           clients told the same Retry-After do not return in lockstep. */
        if (pol->jitter != GUARD_JITTER_NONE) {
          double extra = asked * GUARD__RA_SPREAD;
          if (extra > GUARD__RA_SPREAD_MAX_MS * g->scale) extra = GUARD__RA_SPREAD_MAX_MS * g->scale;
          double spread = extra * guard__rand01(g);
          if (!guard__deadline_crossed_by(&c->dl, guard__now(g), wait + spread)) wait += spread;
        }
      }
    } else if (ra->state == GUARD__RA_BAD) {
      char note[64];
      snprintf(note, sizeof note, "retry-after %s", ra->why);
      guard__note(a, note);
      /* Over the cap the provider still asked for that wait: coming back
         sooner breaks it, so that provider is given up whatever ra_bad
         says (fusebox hunt found the guard retrying a 120 s one early). */
      int over_cap = strcmp(ra->why, "over_cap") == 0;
      if (pol->ra_bad == GUARD_RA_STOP || over_cap) {
        guard__note(a, over_cap ? "stopped: retry-after over the cap" : "stopped: bad retry-after");
        c->stop = over_cap ? "retry-after over the cap" : "bad retry-after";
        return 0;
      }
    }
  }
  if (g->pol.max_wait_ms > 0 && c->waited_ms + wait > g->pol.max_wait_ms) {
    guard__note(a, "stopped: max total wait");
    c->stop = "max total wait";
    return 0;
  }
  if (guard__deadline_crossed_by(&c->dl, guard__now(g), wait)) {
    guard__note(a, "stopped: the wait would cross the deadline");
    c->stop = "wait would cross the deadline";
    return 0;
  }
  *wait_ms = wait;
  *why = w;
  return 1;
}

/* Waits as planned and records it on the attempt. */
void guard__do_wait(guard__call *c, guard_attempt *a, double wait_ms,
                    guard_wait_why why) {
  a->wait_ms = wait_ms;
  a->wait_why = why;
  guard__sleep(c->g, wait_ms);
  c->waited_ms += wait_ms;
}
