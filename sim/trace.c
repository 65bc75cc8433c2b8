/*
 * trace.c - the trace writer: JSON Lines, one event a line, flushed as
 * written so a killed server still leaves every completed line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_int.h"

struct sim_trace {
  FILE *f;
  int owned;            /* 1: we opened f and close it */
  int failed;           /* a write failed; later lines are still attempted */
  pthread_mutex_t lock;
};

/* Milliseconds on CLOCK_MONOTONIC. */
double sim__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/*
 * Opens the trace. A path that cannot be opened for writing is an error now,
 * at start, rather than silent loss later. Caller owns *out.
 */
int sim__trace_open(const char *path, FILE *stream, sim_trace **out,
                    char err[SIM_ERRLEN]) {
  sim_trace *tr = calloc(1, sizeof *tr);
  if (tr == NULL) return SIM_ENOMEM;
  if (path != NULL) {
    tr->f = fopen(path, "w");
    if (tr->f == NULL) {
      snprintf(err, SIM_ERRLEN, "%s: cannot write trace: %s", path, strerror(errno));
      free(tr);
      return SIM_EIO;
    }
    tr->owned = 1;
  } else {
    tr->f = stream;
  }
  pthread_mutex_init(&tr->lock, NULL);
  *out = tr;
  return SIM_OK;
}

/* A new event object {"ev": kind, "t": t_ms}. Owned by the caller. */
cJSON *sim__trace_event(const char *kind, double t_ms) {
  cJSON *ev = cJSON_CreateObject();
  if (ev == NULL) return NULL;
  cJSON_AddStringToObject(ev, "ev", kind);
  /* Microsecond resolution is plenty and keeps lines short. */
  cJSON_AddNumberToObject(ev, "t", (double)(long long)(t_ms * 1000.0) / 1000.0);
  return ev;
}

/* Writes ev as one line and frees it. Thread-safe. */
void sim__trace_emit(sim_trace *tr, cJSON *ev) {
  if (ev == NULL) return;
  if (tr == NULL || tr->f == NULL) {
    cJSON_Delete(ev);
    return;
  }
  char *line = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  if (line == NULL) return;
  pthread_mutex_lock(&tr->lock);
  /* cJSON escapes control characters, so a line never contains '\n'. */
  if (fputs(line, tr->f) < 0 || fputc('\n', tr->f) == EOF || fflush(tr->f) != 0)
    tr->failed = 1;
  pthread_mutex_unlock(&tr->lock);
  free(line);
}

/* Flushes and closes the trace; a borrowed stream is flushed, not closed. */
void sim__trace_close(sim_trace *tr) {
  if (tr == NULL) return;
  if (tr->f != NULL) {
    if (tr->owned) fclose(tr->f);
    else fflush(tr->f);
  }
  pthread_mutex_destroy(&tr->lock);
  free(tr);
}
