/*
 * env.c - the environment as the loop sees it: each of clock, sleep, random
 * source, wall clock and transport is the injected one, or the real one
 * when the caller left it NULL.
 */
#include "guard/guard_int.h"

#include <errno.h>
#include <math.h>
#include <time.h>

static double real_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void real_sleep_ms(double ms) {
  if (!(ms > 0)) return;
  struct timespec ts;
  ts.tv_sec = (time_t)(ms / 1000.0);
  ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
  if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
  if (ts.tv_nsec < 0) ts.tv_nsec = 0;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* splitmix64: small, fast, and good enough to spread retries. */
static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The monotonic clock, ms. */
double guard__now(guard *g) {
  return g->env.now_ms ? g->env.now_ms(g->env.ud) : real_now_ms();
}

/* Sleeps (or makes the fake clock advance). */
void guard__sleep(guard *g, double ms) {
  if (!(ms > 0)) return;
  if (g->env.sleep_ms)
    g->env.sleep_ms(g->env.ud, ms);
  else
    real_sleep_ms(ms);
}

/* 64 random bits from the injected source or the handle's PRNG. */
uint64_t guard__rand64(guard *g) {
  if (g->env.rand64) return g->env.rand64(g->env.ud);
  pthread_mutex_lock(&g->mu);
  uint64_t v = splitmix64(&g->prng);
  pthread_mutex_unlock(&g->mu);
  return v;
}

/* A uniform double in [0, 1): the top 53 bits. */
double guard__rand01(guard *g) {
  return (double)(guard__rand64(g) >> 11) * 0x1.0p-53;
}

/* The wall clock, Unix seconds. */
double guard__wall(guard *g) {
  if (g->env.wall_s) return g->env.wall_s(g->env.ud);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs one HTTP attempt through the environment's transport. */
guard_tx guard__transport(guard *g, const guard_http_request *req,
                          guard_http_response *resp) {
  if (g->env.transport) return g->env.transport(g->env.transport_ud, req, resp);
  return guard_transport_curl(NULL, req, resp);
}
