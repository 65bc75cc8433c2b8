/*
 * policy.c - the default policy, its validation, and its internal form
 * (milliseconds, multiplied by the handle's time scale).
 */
#include "guard/guard_int.h"

#include <math.h>
#include <stdio.h>

/* The guarded client's default policy. */
guard_policy guard_policy_default(void) {
  guard_policy p = {0};
  p.attempts = 3;
  p.backoff_base = 0.5;
  p.backoff_cap = 8;
  p.jitter = GUARD_JITTER_FULL;
  p.jitter_fraction = 0.1;
  p.retry_after_cap = 60;
  p.retry_after_bad = GUARD_RA_IGNORE;
  p.max_total_wait = 30;
  p.deadline = 30;
  p.attempt_timeout_cap = 20;
  p.attempt_timeout_floor = 1;
  p.connect_timeout = 5;
  p.stream_idle_timeout = 15;
  p.breaker_threshold = 5;
  p.breaker_cooldown = 30;
  p.retry_budget_capacity = 20;
  p.retry_budget_cost = 1;
  p.retry_budget_refill = 0.2;
  return p;
}

static int bad_time(double v) { return !isfinite(v) || v < 0 || v > 1e7; }

/* Checks a public policy; GUARD_EINVAL with why[n] when it is unusable. */
int guard__policy_check(const guard_policy *p, char *why, size_t n) {
  const char *bad = NULL;
  if (p->attempts < 1 || p->attempts > GUARD__MAX_ATTEMPTS)
    bad = "attempts must be 1..100";
  else if (bad_time(p->backoff_base) || bad_time(p->backoff_cap))
    bad = "backoff_base and backoff_cap must be finite and >= 0";
  else if ((unsigned)p->jitter > GUARD_JITTER_SUBTRACT)
    bad = "unknown jitter mode";
  else if (!isfinite(p->jitter_fraction) || p->jitter_fraction < 0 ||
           p->jitter_fraction > 1)
    bad = "jitter_fraction must be 0..1";
  else if (bad_time(p->retry_after_cap))
    bad = "retry_after_cap must be finite and >= 0";
  else if ((unsigned)p->retry_after_bad > GUARD_RA_STOP)
    bad = "unknown retry_after_bad";
  else if (bad_time(p->max_total_wait) || bad_time(p->deadline) ||
           bad_time(p->attempt_timeout_cap) ||
           bad_time(p->attempt_timeout_floor) || bad_time(p->connect_timeout) ||
           bad_time(p->stream_idle_timeout) || bad_time(p->breaker_cooldown))
    bad = "times must be finite and >= 0";
  else if (p->budget_per_call < 0 || p->budget_per_session < 0)
    bad = "budgets must be >= 0";
  else if (p->breaker_threshold < 0)
    bad = "breaker_threshold must be >= 0";
  else if (!isfinite(p->retry_budget_capacity) || p->retry_budget_capacity < 0 ||
           !isfinite(p->retry_budget_cost) || p->retry_budget_cost < 0 ||
           !isfinite(p->retry_budget_refill) || p->retry_budget_refill < 0)
    bad = "retry budget values must be finite and >= 0";
  else if (p->degraded_text != NULL && p->degraded_text[0] == '\0')
    bad = "degraded_text must not be empty";
  else if (p->blocked_text != NULL && p->blocked_text[0] == '\0')
    bad = "blocked_text must not be empty";
  if (bad == NULL) return GUARD_OK;
  if (why != NULL) snprintf(why, n, "%s", bad);
  return GUARD_EINVAL;
}

/* Converts a public policy to the internal one, durations times scale. */
void guard__pol_from(guard__pol *p, const guard_policy *pub, double scale) {
  double k = 1000.0 * scale;
  p->attempts = pub->attempts;
  p->base_ms = pub->backoff_base * k;
  p->cap_ms = pub->backoff_cap * k;
  p->jitter = pub->jitter;
  p->jitter_fraction = pub->jitter_fraction;
  p->ra_cap_s = pub->retry_after_cap;
  p->ra_bad = pub->retry_after_bad;
  p->max_wait_ms = pub->max_total_wait * k;
  p->deadline_ms = pub->deadline * k;
  p->to_cap_ms = pub->attempt_timeout_cap * k;
  p->to_floor_ms = pub->attempt_timeout_floor * k;
  p->connect_ms = pub->connect_timeout * k;
  p->idle_ms = pub->stream_idle_timeout * k;
  p->breaker_threshold = pub->breaker_threshold;
  p->breaker_cooldown_ms = pub->breaker_cooldown * k;
  p->flags = pub->flags;
}
