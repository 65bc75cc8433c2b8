/*
 * deadline.c - one deadline per call on the monotonic clock, and the slice
 * of what remains that each attempt gets as its timeout.
 */
#include "guard/guard_int.h"

/* Starts a deadline at now; 0 means none. */
void guard__deadline_start(guard__deadline *d, double now, double deadline_ms) {
  d->start_ms = now;
  d->none = deadline_ms <= 0;
  d->at_ms = now + deadline_ms;
}

/* 1 when the deadline has passed. */
int guard__deadline_passed(const guard__deadline *d, double now) {
  return !d->none && now >= d->at_ms;
}

/* 1 when waiting wait_ms from now would reach or cross the deadline. */
int guard__deadline_crossed_by(const guard__deadline *d, double now,
                               double wait_ms) {
  return !d->none && now + wait_ms >= d->at_ms;
}

/* min(cap, max(floor, left / attempts_left)), never past the deadline. */
double guard__attempt_timeout(const guard__deadline *d, double now,
                              const guard__pol *p, int attempts_left) {
  if (attempts_left < 1) attempts_left = 1;
  if (d->none) return p->to_cap_ms; /* 0 = no timeout at all */
  double left = d->at_ms - now;
  if (left <= 0) return 0.001;      /* never "none" when time is up */
  double t = left / attempts_left;
  if (t < p->to_floor_ms) t = p->to_floor_ms;
  if (p->to_cap_ms > 0 && t > p->to_cap_ms) t = p->to_cap_ms;
  if (t > left) t = left;
  return t;
}
