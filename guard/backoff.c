/*
 * backoff.c - how long to wait before a retry: min(cap, base * 2^(n-1)),
 * randomised by the policy's jitter so that a herd of clients spreads out.
 * The random value comes in as u, so tests pass exact ones.
 */
#include "guard/guard_int.h"

#include <math.h>

/* The wait before retry number n (after n failures), in ms, for u in [0,1). */
double guard__backoff_ms(const guard__pol *p, int n, double u) {
  if (n < 1) n = 1;
  if (u < 0) u = 0;
  if (u >= 1) u = nextafter(1.0, 0.0);
  double b;
  if (p->flags & GUARD_FIXED_WAIT) {
    b = p->base_ms;
  } else {
    /* 2^(n-1) overflows nothing: n is at most 100 and the cap bounds it. */
    b = ldexp(p->base_ms, n - 1);
    if (b > p->cap_ms) b = p->cap_ms;
  }
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
