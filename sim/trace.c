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
  int failed;           /* a write failed: no later line is written */
  int err_no;           /* errno of the first failed write */
  char name[256];       /* the path, or "the trace stream", for messages */
  sim_trace_error_fn on_error; /* told once, at the first failed write */
  void *on_error_arg;
  pthread_mutex_t lock;
};

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
    snprintf(tr->name, sizeof tr->name, "%s", path);
  } else {
    tr->f = stream;
    snprintf(tr->name, sizeof tr->name, "the trace stream");
  }
  pthread_mutex_init(&tr->lock, NULL);
  *out = tr;
  return SIM_OK;
}

/* Tells fn(arg, message) once, at the first failed write. */
void sim__trace_on_error(sim_trace *tr, sim_trace_error_fn fn, void *arg) {
  if (tr == NULL) return;
  tr->on_error = fn;
  tr->on_error_arg = arg;
}

/* The message of a failed trace. */
static void fail_message(const sim_trace *tr, char err[SIM_ERRLEN]) {
  int n = snprintf(err, SIM_ERRLEN, "%.150s: cannot write trace: ", tr->name);
  snprintf(err + n, SIM_ERRLEN - (size_t)n, "%.48s%s", strerror(tr->err_no),
           tr->err_no == ENOSPC ? " (the disk is full)" : "");
}

/* Marks the trace failed with errno e (under the lock) and tells the
   caller's callback the first time. */
static void mark_failed(sim_trace *tr, int e) {
  if (tr->failed) return;
  tr->failed = 1;
  tr->err_no = e ? e : EIO;
  if (tr->on_error) {
    char msg[SIM_ERRLEN];
    fail_message(tr, msg);
    tr->on_error(tr->on_error_arg, msg);
  }
}

/* SIM_EIO with the reason in err when a write failed so far, else 0. */
int sim__trace_status(sim_trace *tr, char err[SIM_ERRLEN]) {
  if (tr == NULL) return SIM_OK;
  pthread_mutex_lock(&tr->lock);
  int failed = tr->failed;
  if (failed) fail_message(tr, err);
  pthread_mutex_unlock(&tr->lock);
  return failed ? SIM_EIO : SIM_OK;
}

/* 1 when a line was lost; see sim_int.h. */
int sim__trace_failed(const sim_trace *tr) {
  if (tr == NULL) return 0;
  sim_trace *t = (sim_trace *)tr;
  pthread_mutex_lock(&t->lock);
  int f = t->failed;
  pthread_mutex_unlock(&t->lock);
  return f;
}

/* 1 when events are written anywhere. */
int sim__trace_on(const sim_trace *tr) { return tr != NULL && tr->f != NULL; }

/* A new event object {"ev": kind, "t": t_ms}. Owned by the caller. */
cJSON *sim__trace_event(const char *kind, double t_ms) {
  cJSON *ev = cJSON_CreateObject();
  if (ev == NULL) return NULL;
  cJSON_AddStringToObject(ev, "ev", kind);
  /* Microsecond resolution is plenty and keeps lines short. */
  cJSON_AddNumberToObject(ev, "t", (double)(long long)(t_ms * 1000.0) / 1000.0);
  return ev;
}

/* Length of the valid UTF-8 sequence at s (0 if invalid), at most n bytes. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  if (s[0] < 0x80) return 1;
  /* C0, C1 (overlong) and F5-FF never start a sequence. */
  size_t len = s[0] >= 0xF0 && s[0] <= 0xF4   ? 4
               : s[0] >= 0xE0 && s[0] < 0xF0  ? 3
               : s[0] >= 0xC2 && s[0] < 0xE0  ? 2
                                              : 0;
  if (len == 0 || len > n) return 0;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 0;
  if (len == 3 && s[0] == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
  if (len == 3 && s[0] == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
  if (len == 4 && s[0] == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
  if (len == 4 && s[0] == 0xF4 && s[1] >= 0x90) return 0; /* past U+10FFFF */
  return len;
}

/* A copy of s with every invalid UTF-8 byte replaced by U+FFFD, or NULL when
   s is valid already (or out of memory). */
static char *utf8_fixed(const char *s) {
  size_t n = strlen(s), i = 0;
  while (i < n) {
    size_t l = utf8_len((const unsigned char *)s + i, n - i);
    if (l == 0) break;
    i += l;
  }
  if (i == n) return NULL;
  char *out = malloc(n * 3 + 1);
  if (out == NULL) return NULL;
  size_t o = 0;
  for (i = 0; i < n;) {
    size_t l = utf8_len((const unsigned char *)s + i, n - i);
    if (l == 0) {
      memcpy(out + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i++;
    } else {
      memcpy(out + o, s + i, l);
      o += l;
      i += l;
    }
  }
  out[o] = '\0';
  return out;
}

/* Makes every string (and key) in the tree valid UTF-8: a client can send
   any bytes, and a trace line must stay JSON any reader accepts. */
static void sanitize(cJSON *j) {
  for (cJSON *c = j; c != NULL; c = c->next) {
    if (c->string) {
      char *f = utf8_fixed(c->string);
      if (f) {
        if (!(c->type & cJSON_StringIsConst)) free(c->string);
        c->string = f;
        c->type &= ~cJSON_StringIsConst;
      }
    }
    if (cJSON_IsString(c) && c->valuestring) {
      char *f = utf8_fixed(c->valuestring);
      if (f) {
        free(c->valuestring);
        c->valuestring = f;
      }
    }
    if (c->child) sanitize(c->child);
  }
}

/* Writes ev as one line and frees it. Thread-safe. */
void sim__trace_emit(sim_trace *tr, cJSON *ev) {
  if (ev == NULL) return;
  if (tr == NULL || tr->f == NULL) {
    cJSON_Delete(ev);
    return;
  }
  sanitize(ev->child);
  char *line = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  if (line == NULL) { /* out of memory: the line is lost, and the trace says so */
    pthread_mutex_lock(&tr->lock);
    mark_failed(tr, ENOMEM);
    pthread_mutex_unlock(&tr->lock);
    return;
  }
  pthread_mutex_lock(&tr->lock);
  /* cJSON escapes control characters, so a line never contains '\n'. After
     a failed write nothing more is written: the file ends at the failure. */
  errno = 0;
  if (!tr->failed &&
      (fputs(line, tr->f) < 0 || fputc('\n', tr->f) == EOF || fflush(tr->f) != 0))
    mark_failed(tr, errno);
  pthread_mutex_unlock(&tr->lock);
  free(line);
}

/* Flushes and closes the trace (a borrowed stream is flushed, not
   closed); returns SIM_EIO with the reason in err when any write failed,
   the last flush included. */
int sim__trace_finish(sim_trace *tr, char err[SIM_ERRLEN]) {
  if (tr == NULL) return SIM_OK;
  if (tr->f != NULL) {
    errno = 0;
    int bad = tr->owned ? fclose(tr->f) != 0 : fflush(tr->f) != 0;
    if (bad) mark_failed(tr, errno);
  }
  int rc = tr->failed ? SIM_EIO : SIM_OK;
  if (rc != SIM_OK && err != NULL) fail_message(tr, err);
  pthread_mutex_destroy(&tr->lock);
  free(tr);
  return rc;
}

/* Flushes and closes the trace, ignoring failures. NULL is a no-op. */
void sim__trace_close(sim_trace *tr) { (void)sim__trace_finish(tr, NULL); }
