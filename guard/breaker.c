/*
 * breaker.c - a circuit breaker per provider: closed -> open after N
 * consecutive failures -> half-open after the cooldown, where exactly one
 * probe may go -> closed when it succeeds, open again when it fails.
 * The handle's mutex is held by every caller.
 */
#include "guard/guard_int.h"

/* May an attempt go now? Claims the half-open probe when it is one. */
int guard__breaker_allow(guard__breaker *b, const guard__pol *p, double now,
                         int *probe, const char **why) {
  *probe = 0;
  if (p->breaker_threshold <= 0) return 1;
  if (b->state == GUARD__BRK_OPEN && now >= b->open_until) {
    b->state = GUARD__BRK_HALF_OPEN;
    b->probing = 0;
  }
  switch (b->state) {
  case GUARD__BRK_CLOSED:
    return 1;
  case GUARD__BRK_OPEN:
    *why = "breaker_open";
    return 0;
  case GUARD__BRK_HALF_OPEN:
    if (b->probing) {
      *why = "breaker_half_open";
      return 0;
    }
    b->probing = 1;
    *probe = 1;
    return 1;
  }
  return 1;
}

/* 1 when the breaker would refuse an attempt now. */
int guard__breaker_refuses(const guard__breaker *b, const guard__pol *p,
                           double now) {
  if (p->breaker_threshold <= 0) return 0;
  if (b->state == GUARD__BRK_OPEN) return now < b->open_until;
  if (b->state == GUARD__BRK_HALF_OPEN) return b->probing;
  return 0;
}

/* Records an attempt's end: ok (the provider answered) or failed. */
void guard__breaker_record(guard__breaker *b, const guard__pol *p, double now,
                           int ok, int probe) {
  if (p->breaker_threshold <= 0) return;
  if (probe) b->probing = 0;
  if (ok) {
    /* A late success from before the breaker opened does not close it:
     * only the probe does. */
    if (b->state == GUARD__BRK_OPEN) return;
    b->state = GUARD__BRK_CLOSED;
    b->failures = 0;
    return;
  }
  if (b->state == GUARD__BRK_HALF_OPEN && probe) {
    b->state = GUARD__BRK_OPEN;
    b->open_until = now + p->breaker_cooldown_ms;
    return;
  }
  if (b->state != GUARD__BRK_CLOSED) return;
  if (++b->failures >= p->breaker_threshold) {
    b->state = GUARD__BRK_OPEN;
    b->open_until = now + p->breaker_cooldown_ms;
  }
}

/* Gives back a probe that was claimed but never sent. */
void guard__breaker_release(guard__breaker *b, int probe) {
  if (probe) b->probing = 0;
}
