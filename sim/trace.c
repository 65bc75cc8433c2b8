/*
 * trace.c - the trace writer: JSON Lines, one event a line.
 *
 * Lines reach the kernel in batches (issue 13): a line is written at once
 * when nothing was written in the last SIM__TRACE_BATCH_MS; otherwise it
 * waits in a pending buffer that a flusher thread writes when that time has
 * passed since the last write, or at once when it holds
 * SIM__TRACE_BATCH_BYTES, and at close. Every write(2) holds whole lines
 * only, so a server killed with SIGKILL leaves a file whose every line
 * parses, at most the last few ms of lines missing (a quiet server loses
 * none: its lines go out one by one as before).
 *
 * The pending buffer is swapped out under `lock` and written under
 * `wlock` only (issue 30): a loop adding a line never waits for a
 * write(2) of 64 KiB to finish, and writes still reach the file in the
 * order their lines were added.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/json_write_int.h"
#include "sim/sim_int.h"

#define SIM__TRACE_BATCH_MS 5.0
#define SIM__TRACE_BATCH_BYTES 65536

struct sim_trace {
  FILE *f;
  int owned;            /* 1: we opened f and close it */
  int failed;           /* a write failed: no later line is written */
  int err_no;           /* errno of the first failed write */
  char name[256];       /* the path, or "the trace stream", for messages */
  sim_trace_error_fn on_error; /* told once, at the first failed write */
  void *on_error_arg;
  pthread_mutex_t lock;
  pthread_mutex_t wlock; /* held while writing to f, taken before lock */
  /* batching, under lock */
  char *pend;           /* whole lines not yet written */
  size_t pn, pcap;
  char *spare;          /* the other buffer: what flush_out writes (under wlock) */
  size_t scap;
  double last_write;    /* ms, CLOCK_MONOTONIC; 0 = never */
  int flusher_on;       /* the flusher thread runs */
  int stop;             /* tells the flusher to end */
  pthread_cond_t cv;    /* CLOCK_MONOTONIC */
  pthread_t flusher;
  /* A session's tap (sim__trace_tap_new): its lines in memory, passed on
     to the parent's file. */
  int tap_on;
  sim_trace *parent;    /* borrowed; NULL = lines stay in memory only */
  char *session;        /* added to every line as "session"; NULL = none */
  char *tap;            /* the lines, under lock */
  size_t tn, tcap, tmax;
  int tap_full;         /* a line did not fit under tmax: the tap stops */
};

/* Writes n bytes of whole lines with write(2) (after anything stdio holds
   for the stream), retrying short writes. Under wlock, not lock. */
static void mark_failed(sim_trace *tr, int e);

static void mark_failed_locked(sim_trace *tr, int e) {
  pthread_mutex_lock(&tr->lock);
  mark_failed(tr, e);
  pthread_mutex_unlock(&tr->lock);
}

static void write_lines(sim_trace *tr, const char *p, size_t n) {
  pthread_mutex_lock(&tr->lock);
  int failed = tr->failed; /* the file ends at the failure */
  pthread_mutex_unlock(&tr->lock);
  if (failed) return;
  errno = 0;
  if (fflush(tr->f) != 0) {
    mark_failed_locked(tr, errno);
    return;
  }
  int fd = fileno(tr->f);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      mark_failed_locked(tr, w < 0 ? errno : EIO);
      break;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Writes the pending lines: swaps them out under lock, writes them under
   wlock alone. Under neither lock. */
static void flush_out(sim_trace *tr) {
  pthread_mutex_lock(&tr->wlock);
  pthread_mutex_lock(&tr->lock);
  char *out = tr->pend;
  size_t n = tr->pn, cap = tr->pcap;
  tr->pend = tr->spare;
  tr->pcap = tr->scap;
  tr->spare = out;
  tr->scap = cap;
  tr->pn = 0;
  if (n > 0) tr->last_write = sim_now_ms();
  pthread_mutex_unlock(&tr->lock);
  if (n > 0) write_lines(tr, out, n);
  pthread_mutex_unlock(&tr->wlock);
}

/* The flusher: writes pending lines SIM__TRACE_BATCH_MS after the last
   write; sleeps while nothing is pending. */
static void *flusher_main(void *arg) {
  sim_trace *tr = arg;
  pthread_mutex_lock(&tr->lock);
  while (!tr->stop) {
    if (tr->pn == 0) {
      pthread_cond_wait(&tr->cv, &tr->lock);
      continue;
    }
    double due = tr->last_write + SIM__TRACE_BATCH_MS, now = sim_now_ms();
    if (now >= due) {
      pthread_mutex_unlock(&tr->lock);
      flush_out(tr);
      pthread_mutex_lock(&tr->lock);
      continue;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long long ns = (long long)ts.tv_nsec + (long long)((due - now) * 1e6) + 1;
    ts.tv_sec += (time_t)(ns / 1000000000LL);
    ts.tv_nsec = (long)(ns % 1000000000LL);
    pthread_cond_timedwait(&tr->cv, &tr->lock, &ts);
  }
  pthread_mutex_unlock(&tr->lock);
  return NULL;
}

/* Starts the flusher (under no lock); without it every line is written at
   once, as before batching. */
static void start_flusher(sim_trace *tr) {
  pthread_condattr_t ca;
  if (pthread_condattr_init(&ca) != 0) return;
  int ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
           pthread_cond_init(&tr->cv, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!ok) return;
  if (pthread_create(&tr->flusher, NULL, flusher_main, tr) != 0) {
    pthread_cond_destroy(&tr->cv);
    return;
  }
  tr->flusher_on = 1;
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
    snprintf(tr->name, sizeof tr->name, "%s", path);
  } else {
    tr->f = stream;
    snprintf(tr->name, sizeof tr->name, "the trace stream");
  }
  pthread_mutex_init(&tr->lock, NULL);
  pthread_mutex_init(&tr->wlock, NULL);
  if (tr->f != NULL) start_flusher(tr);
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
int sim__trace_on(const sim_trace *tr) {
  return tr != NULL && (tr->f != NULL || tr->tap_on);
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

/* ---- the line writer (issue 13): each event goes from its fields to bytes
   in one pass (sim/json_write.c: strings escaped and UTF-8-checked, an
   invalid byte written as U+FFFD, numbers formatted directly), into a
   buffer each thread reuses. The hot events (arrive, end) are written field
   by field with sim__trace_begin/sim__trace_commit and never become a
   tree; the rest come as cJSON trees through sim__trace_emit. */

#define SIM__TRACE_LINE_MAX ((size_t)64 << 20) /* a longer line is lost, and told */

static pthread_key_t lb_key;
static pthread_once_t lb_once = PTHREAD_ONCE_INIT;
static int lb_key_ok;
static __thread sim_jw *lb_self; /* also the root leak checkers see */

static void lb_free(void *p) {
  sim_jw *w = p;
  if (w == NULL) return;
  sim__jw_free(w);
  free(w);
}

static void lb_make_key(void) { lb_key_ok = pthread_key_create(&lb_key, lb_free) == 0; }

/* The calling thread's line buffer, emptied; NULL without memory. */
static sim_jw *lb_get(void) {
  if (lb_self == NULL) {
    pthread_once(&lb_once, lb_make_key);
    sim_jw *w = calloc(1, sizeof *w);
    if (w == NULL) return NULL;
    sim__jw_init(w, SIM__TRACE_LINE_MAX);
    w->fix_utf8 = 1; /* a trace line is valid UTF-8 whatever a client sent */
    if (lb_key_ok) pthread_setspecific(lb_key, w);
    lb_self = w;
  }
  sim__jw_reset(lb_self);
  return lb_self;
}

/* ev as one JSON line ending in '\n' in the calling thread's buffer, or
   NULL without memory. A line never holds a raw '\n': control characters
   are escaped. */
const char *sim__trace_line(const cJSON *ev, size_t *len) {
  sim_jw *w = lb_get();
  if (w == NULL) return NULL;
  sim__jw_cjson(w, ev);
  sim__jw_raw(w, "\n", 1);
  if (w->oom) return NULL;
  *len = w->n;
  return w->p;
}

/* Opens a line {"ev": kind, "t": t_ms} in the calling thread's buffer; see
   sim_int.h. */
sim_jw *sim__trace_begin(const sim_trace *tr, const char *kind, double t_ms) {
  if (!sim__trace_on(tr)) return NULL;
  sim_jw *w = lb_get();
  if (w == NULL) return NULL;
  SIM__JW_LIT(w, "{\"ev\":");
  sim__jw_str(w, kind);
  /* Microsecond resolution is plenty and keeps lines short. */
  sim__jw_next_us(w, ",\"t\":", 5, (long long)(t_ms * 1000.0));
  return w;
}

/* Writes one serialised line to tr's file: at once when quiet, else
   batched for the flusher. */
static void emit_line(sim_trace *tr, const char *line, size_t len) {
  pthread_mutex_lock(&tr->lock);
  if (tr->failed) { /* after a failed write nothing more is written */
    pthread_mutex_unlock(&tr->lock);
    return;
  }
  double now = sim_now_ms();
  /* quiet (or no flusher): this line goes out now, alone */
  int now_out = !tr->flusher_on || (tr->pn == 0 && now - tr->last_write >= SIM__TRACE_BATCH_MS);
  if (tr->pn + len > tr->pcap) {
    size_t cap = tr->pcap ? tr->pcap : 8192;
    while (cap < tr->pn + len) cap *= 2;
    char *p = realloc(tr->pend, cap);
    if (p == NULL) { /* no room to batch: write what waits, then this */
      pthread_mutex_unlock(&tr->lock);
      flush_out(tr);
      pthread_mutex_lock(&tr->wlock);
      write_lines(tr, line, len);
      pthread_mutex_unlock(&tr->wlock);
      return;
    }
    tr->pend = p;
    tr->pcap = cap;
  }
  int was_empty = tr->pn == 0;
  memcpy(tr->pend + tr->pn, line, len);
  tr->pn += len;
  now_out |= tr->pn >= SIM__TRACE_BATCH_BYTES;
  if (!now_out && was_empty) pthread_cond_signal(&tr->cv);
  pthread_mutex_unlock(&tr->lock);
  if (now_out) flush_out(tr);
}

/* Keeps a line in a tap, up to its cap. */
static void tap_line(sim_trace *tr, const char *line, size_t len) {
  pthread_mutex_lock(&tr->lock);
  if (!tr->tap_full && tr->tn + len > tr->tmax) tr->tap_full = 1;
  if (!tr->tap_full && tr->tn + len > tr->tcap) {
    size_t cap = tr->tcap ? tr->tcap : 16384;
    while (cap < tr->tn + len) cap *= 2;
    if (cap > tr->tmax) cap = tr->tmax;
    char *p = realloc(tr->tap, cap);
    if (p == NULL) tr->tap_full = 1;
    else {
      tr->tap = p;
      tr->tcap = cap;
    }
  }
  if (!tr->tap_full) {
    memcpy(tr->tap + tr->tn, line, len);
    tr->tn += len;
  }
  pthread_mutex_unlock(&tr->lock);
}

/* Out of memory: a line is lost, and the trace says so (the tap stops, the
   file fails as a full disk would). */
static void line_lost(sim_trace *tr) {
  sim_trace *file = tr->tap_on ? tr->parent : tr;
  if (tr->tap_on) {
    pthread_mutex_lock(&tr->lock);
    tr->tap_full = 1;
    pthread_mutex_unlock(&tr->lock);
  }
  if (file != NULL && file->f != NULL) {
    pthread_mutex_lock(&file->lock);
    mark_failed(file, ENOMEM);
    pthread_mutex_unlock(&file->lock);
  }
}

/* Ends the line w holds (the session's name last, then '}' and a newline)
   and hands it to the tap and the file; see sim_int.h. */
void sim__trace_commit(sim_trace *tr, sim_jw *w) {
  if (w == NULL || !sim__trace_on(tr)) return;
  if (tr->session != NULL) sim__jw_kstr(w, "session", tr->session);
  sim__jw_close(w, '}');
  sim__jw_raw(w, "\n", 1);
  sim_trace *file = tr->tap_on ? tr->parent : tr;
  if (w->oom) {
    line_lost(tr);
    return;
  }
  if (tr->tap_on) tap_line(tr, w->p, w->n);
  if (file != NULL && file->f != NULL) emit_line(file, w->p, w->n);
}

/* Writes ev as one line and frees it. Thread-safe. A tap's session name
   replaces any "session" ev has, last on the line. */
void sim__trace_emit(sim_trace *tr, cJSON *ev) {
  if (ev == NULL) return;
  sim_jw *w = sim__trace_on(tr) ? lb_get() : NULL;
  if (w != NULL) {
    sim__jw_open(w, '{');
    for (const cJSON *c = ev->child; c != NULL; c = c->next) {
      if (tr->session != NULL && c->string != NULL && strcmp(c->string, "session") == 0)
        continue;
      sim__jw_key(w, c->string);
      sim__jw_cjson(w, c);
    }
    sim__trace_commit(tr, w);
  } else if (sim__trace_on(tr)) {
    line_lost(tr);
  }
  cJSON_Delete(ev);
}

/* A session's tap on parent; see sim_int.h. */
int sim__trace_tap_new(sim_trace *parent, const char *session, size_t max_bytes,
                       sim_trace **out) {
  *out = NULL;
  sim_trace *tr = calloc(1, sizeof *tr);
  if (tr == NULL) return SIM_ENOMEM;
  if (session != NULL && (tr->session = strdup(session)) == NULL) {
    free(tr);
    return SIM_ENOMEM;
  }
  tr->tap_on = 1;
  tr->parent = parent;
  tr->tmax = max_bytes;
  snprintf(tr->name, sizeof tr->name, "a session's trace");
  pthread_mutex_init(&tr->lock, NULL);
  pthread_mutex_init(&tr->wlock, NULL);
  *out = tr;
  return SIM_OK;
}

/* A copy of a tap's lines; see sim_int.h. */
int sim__trace_tap_copy(sim_trace *tr, char **out, size_t *len, int *full) {
  *out = NULL;
  *len = 0;
  *full = 0;
  if (tr == NULL || !tr->tap_on) return SIM_EINVAL;
  pthread_mutex_lock(&tr->lock);
  char *p = malloc(tr->tn + 1);
  if (p != NULL) {
    if (tr->tn) memcpy(p, tr->tap, tr->tn);
    p[tr->tn] = '\0';
    *len = tr->tn;
    *full = tr->tap_full;
  }
  pthread_mutex_unlock(&tr->lock);
  if (p == NULL) return SIM_ENOMEM;
  *out = p;
  return SIM_OK;
}

/* Flushes and closes the trace (a borrowed stream is flushed, not
   closed); returns SIM_EIO with the reason in err when any write failed,
   the pending lines and the last flush included. */
int sim__trace_finish(sim_trace *tr, char err[SIM_ERRLEN]) {
  if (tr == NULL) return SIM_OK;
  if (tr->flusher_on) {
    pthread_mutex_lock(&tr->lock);
    tr->stop = 1;
    pthread_cond_signal(&tr->cv);
    pthread_mutex_unlock(&tr->lock);
    pthread_join(tr->flusher, NULL);
    pthread_cond_destroy(&tr->cv);
  }
  if (tr->f != NULL) {
    flush_out(tr);
    errno = 0;
    int bad = tr->owned ? fclose(tr->f) != 0 : fflush(tr->f) != 0;
    if (bad) mark_failed(tr, errno);
  }
  int rc = tr->failed ? SIM_EIO : SIM_OK;
  if (rc != SIM_OK && err != NULL) fail_message(tr, err);
  pthread_mutex_destroy(&tr->lock);
  pthread_mutex_destroy(&tr->wlock);
  free(tr->pend);
  free(tr->spare);
  free(tr->tap);
  free(tr->session);
  free(tr);
  return rc;
}

/* Flushes and closes the trace, ignoring failures. NULL is a no-op. */
void sim__trace_close(sim_trace *tr) { (void)sim__trace_finish(tr, NULL); }
