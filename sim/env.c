/*
 * env.c - the clocks sim reads, real or injected (sim_env): every timer,
 * the rate limiter and trace times go through here, never straight to
 * clock_gettime, so tests can run them on a fake clock.
 */
#include <time.h>

#include "sim/sim_int.h"

/* Milliseconds on CLOCK_MONOTONIC. */
double sim_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* env's monotonic milliseconds; the real clock when env or its member is NULL. */
double sim__env_now_ms(const sim_env *env) {
  return env != NULL && env->now_ms != NULL ? env->now_ms(env->ud) : sim_now_ms();
}

/* env's wall clock in seconds since the epoch; the system's when NULL. */
double sim__env_wall_s(const sim_env *env) {
  if (env != NULL && env->wall_s != NULL) return env->wall_s(env->ud);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
