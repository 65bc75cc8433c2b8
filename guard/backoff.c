/*
 * backoff.c - how long to wait before a retry: min(cap, base * 2^(n-1)),
 * randomised by the policy's jitter so that a herd of clients spreads out.
 * The random value comes in as u, so tests pass exact ones.
 */
#include "guard/guard_int.h"

#include <math.h>

/* The wait before retry n before any jitter: min(cap, base * 2^(n-1)), or
   base with GUARD_FIXED_WAIT; in base's unit. */
static double nominal(double base, double cap, unsigned flags, int n) {
  if (n < 1) n = 1;
  if (flags & GUARD_FIXED_WAIT) return base;
  double b = ldexp(base, n - 1);
  return b > cap ? cap : b;
}

/* The un-randomised wait before retry n, in s; see guard.h. */
double guard_backoff_nominal(const guard_policy *p, int n) {
  return p ? nominal(p->backoff_base, p->backoff_cap, p->flags, n) : 0;
}

/* The wait before retry number n (after n failures), in ms, for u in [0,1). */
double guard__backoff_ms(const guard__pol *p, int n, double u) {
  if (u < 0) u = 0;
  if (u >= 1) u = nextafter(1.0, 0.0);
  double b = nominal(p->base_ms, p->cap_ms, p->flags, n);
  switch (p->jitter) {
  case GUARD_JITTER_NONE: return b;
  case GUARD_JITTER_FULL: return u * b;
  case GUARD_JITTER_EQUAL: return b / 2 + u * (b / 2);
  case GUARD_JITTER_SUBTRACT: return b * (1.0 - u * p->jitter_fraction);
  case GUARD_JITTER_PLUSMINUS: {
    double w = b * (1.0 + (2.0 * u - 1.0) * p->jitter_fraction);
    return w < 0 ? 0 : w;
  }
  }
  return b;
}
