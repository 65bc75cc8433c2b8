/*
 * stages.c - the per-stage times of stages.h, kept only in a build with
 * -DFUSEBOX_STAGES=1 (a bench tool: it writes a file at exit, named by
 * FUSEBOX_STAGES_OUT, which a library otherwise never does).
 */
#ifdef FUSEBOX_STAGES
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sim/stages.h"

enum { ST_DECIDE, ST_DUE, ST_FIRE, ST_LOOP, ST_PLAY, ST_OUT, ST_TOTAL, ST_RESUME, ST_N };
static const char *const NAMES[ST_N] = {
    "arrive->suspend", "suspend->due", "due->fire", "fire->handler",
    "handler->queued", "queued->done", "arrive->done", "resume call"};
#define CAP (1 << 18)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static float *samples[ST_N];
static size_t nsamples[ST_N];
static long nreq, nwaited;

double sim__stages_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void add(int k, double a, double b) {
  if (a <= 0 || b <= 0) return;
  if (samples[k] == NULL) samples[k] = malloc(CAP * sizeof(float));
  if (samples[k] == NULL || nsamples[k] >= CAP) return;
  samples[k][nsamples[k]++] = (float)(b - a);
}

void sim__stages_done(const sim_stamps *s) {
  double done = sim__stages_now();
  pthread_mutex_lock(&lock);
  nreq++;
  if (s->suspend > 0) nwaited++;
  add(ST_DECIDE, s->arrive, s->suspend);
  add(ST_DUE, s->suspend, s->due);
  add(ST_FIRE, s->due, s->fire);
  add(ST_LOOP, s->fire, s->handler);
  add(ST_PLAY, s->handler, s->queued);
  add(ST_OUT, s->queued > 0 ? s->queued : 0, done);
  add(ST_TOTAL, s->arrive, done);
  pthread_mutex_unlock(&lock);
}

void sim__stages_resume_call(double ms) {
  pthread_mutex_lock(&lock);
  add(ST_RESUME, 1, 1 + ms);
  pthread_mutex_unlock(&lock);
}

static int cmp(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

static double pct(const float *v, size_t n, double p) {
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i];
}

__attribute__((destructor)) static void dump(void) {
  const char *path = getenv("FUSEBOX_STAGES_OUT");
  FILE *f = path ? fopen(path, "a") : NULL;
  if (f != NULL) {
    fprintf(f, "stages requests=%ld waited=%ld\n", nreq, nwaited);
    for (int k = 0; k < ST_N; k++) {
      if (nsamples[k] == 0) continue;
      qsort(samples[k], nsamples[k], sizeof(float), cmp);
      fprintf(f, "stage %-17s n=%zu p50=%.3f p90=%.3f p99=%.3f max=%.3f\n", NAMES[k],
              nsamples[k], pct(samples[k], nsamples[k], 0.5), pct(samples[k], nsamples[k], 0.9),
              pct(samples[k], nsamples[k], 0.99), (double)samples[k][nsamples[k] - 1]);
    }
    fclose(f);
  }
  for (int k = 0; k < ST_N; k++) free(samples[k]);
}
#else
typedef int sim__stages_unused; /* ISO C: a translation unit is never empty */
#endif
