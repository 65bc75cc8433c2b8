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
  /* batching, under lock */
  char *pend;           /* whole lines not yet written */
  size_t pn, pcap;
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
   for the stream), retrying short writes. Under lock. */
static void mark_failed(sim_trace *tr, int e);

static void write_lines(sim_trace *tr, const char *p, size_t n) {
  if (tr->failed) return; /* the file ends at the failure */
  errno = 0;
  if (fflush(tr->f) != 0) {
    mark_failed(tr, errno);
    return;
  }
  int fd = fileno(tr->f);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      mark_failed(tr, w < 0 ? errno : EIO);
      break;
    }
    p += w;
    n -= (size_t)w;
  }
}

/* Writes the pending lines. Under lock. */
static void flush_pending(sim_trace *tr, double now) {
  if (tr->pn == 0) return;
  write_lines(tr, tr->pend, tr->pn);
  tr->pn = 0;
  tr->last_write = now;
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
    double due = tr->last_write + SIM__TRACE_BATCH_MS, now = sim__now_ms();
    if (now >= due) {
      flush_pending(tr, now);
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

/* ---- the line writer (issue 13): one pass from the event's tree to bytes,
   into a buffer reused by each thread; strings escaped and UTF-8-checked
   (an invalid byte becomes U+FFFD) in the same pass, numbers formatted
   directly. The output is what cJSON_PrintUnformatted would print after
   the invalid bytes were replaced, without the copies. */

typedef struct lbuf {
  char *p;
  size_t n, cap;
  int oom;
} lbuf;

static pthread_key_t lb_key;
static pthread_once_t lb_once = PTHREAD_ONCE_INIT;
static int lb_key_ok;
static __thread lbuf *lb_self; /* also the root leak checkers see */

static void lb_free(void *p) {
  lbuf *b = p;
  if (b == NULL) return;
  free(b->p);
  free(b);
}

static void lb_make_key(void) { lb_key_ok = pthread_key_create(&lb_key, lb_free) == 0; }

/* The calling thread's line buffer, emptied; NULL without memory. */
static lbuf *lb_get(void) {
  if (lb_self == NULL) {
    pthread_once(&lb_once, lb_make_key);
    lbuf *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    if (lb_key_ok) pthread_setspecific(lb_key, b);
    lb_self = b;
  }
  lb_self->n = 0;
  lb_self->oom = 0;
  return lb_self;
}

/* Room for more bytes; sets oom (and keeps the buffer) when there is none. */
static int lb_room(lbuf *b, size_t more) {
  if (b->oom) return 0;
  if (b->n + more <= b->cap) return 1;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + more) cap *= 2;
  char *p = realloc(b->p, cap);
  if (p == NULL) {
    b->oom = 1;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

static void lb_put(lbuf *b, const char *s, size_t n) {
  if (!lb_room(b, n)) return;
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

static void lb_putc(lbuf *b, char c) {
  if (!lb_room(b, 1)) return;
  b->p[b->n++] = c;
}

/* A JSON string: escapes as cJSON does, invalid UTF-8 bytes as U+FFFD. */
static void put_string(lbuf *b, const char *s) {
  static const char hex[] = "0123456789abcdef";
  if (s == NULL) s = "";
  size_t n = strlen(s);
  /* At most 6 bytes out per byte in (\u00XX), 3 per invalid byte. */
  if (!lb_room(b, n * 6 + 2)) return;
  char *o = b->p + b->n;
  *o++ = '"';
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) {
      size_t l = utf8_len((const unsigned char *)s + i, n - i);
      if (l == 0) {
        memcpy(o, "\xEF\xBF\xBD", 3);
        o += 3;
        i++;
      } else {
        memcpy(o, s + i, l);
        o += l;
        i += l;
      }
      continue;
    }
    i++;
    if (c == '"' || c == '\\') {
      *o++ = '\\';
      *o++ = (char)c;
    } else if (c >= 0x20) {
      *o++ = (char)c;
    } else {
      *o++ = '\\';
      switch (c) {
      case '\b': *o++ = 'b'; break;
      case '\f': *o++ = 'f'; break;
      case '\n': *o++ = 'n'; break;
      case '\r': *o++ = 'r'; break;
      case '\t': *o++ = 't'; break;
      default:
        *o++ = 'u'; *o++ = '0'; *o++ = '0';
        *o++ = hex[c >> 4]; *o++ = hex[c & 15];
      }
    }
  }
  *o++ = '"';
  b->n = (size_t)(o - b->p);
}

/* A JSON number: integers as integers, others in the shortest of %.15g and
   %.17g that reads back exactly; NaN and infinities as null (as cJSON). */
static void put_number(lbuf *b, double d) {
  char tmp[32];
  int len;
  if (d != d || d > DBL_MAX || d < -DBL_MAX) {
    lb_put(b, "null", 4);
    return;
  }
  if (d == 0 && signbit(d)) { /* as cJSON prints it */
    lb_put(b, "-0", 2);
    return;
  }
  if (d == (double)(long long)d && d < 1e15 && d > -1e15) {
    long long v = (long long)d;
    char *e = tmp + sizeof tmp, *q = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do *--q = (char)('0' + u % 10); while ((u /= 10) != 0);
    if (v < 0) *--q = '-';
    lb_put(b, q, (size_t)(e - q));
    return;
  }
  len = snprintf(tmp, sizeof tmp, "%1.15g", d);
  if (strtod(tmp, NULL) != d) len = snprintf(tmp, sizeof tmp, "%1.17g", d);
  lb_put(b, tmp, (size_t)len);
}

static void put_value(lbuf *b, const cJSON *j, int depth) {
  if (depth > 64) { /* the server's events are shallow; never recurse far */
    lb_put(b, "null", 4);
    return;
  }
  switch (j->type & 0xFF) {
  case cJSON_False: lb_put(b, "false", 5); break;
  case cJSON_True: lb_put(b, "true", 4); break;
  case cJSON_Number: put_number(b, j->valuedouble); break;
  case cJSON_String: put_string(b, j->valuestring); break;
  case cJSON_Raw:
    if (j->valuestring) lb_put(b, j->valuestring, strlen(j->valuestring));
    else lb_put(b, "null", 4);
    break;
  case cJSON_Array:
  case cJSON_Object: {
    int obj = (j->type & 0xFF) == cJSON_Object;
    lb_putc(b, obj ? '{' : '[');
    for (const cJSON *c = j->child; c != NULL; c = c->next) {
      if (c != j->child) lb_putc(b, ',');
      if (obj) {
        put_string(b, c->string);
        lb_putc(b, ':');
      }
      put_value(b, c, depth + 1);
    }
    lb_putc(b, obj ? '}' : ']');
    break;
  }
  default: lb_put(b, "null", 4); break;
  }
}

/* ev as one JSON line ending in '\n' in the calling thread's buffer, or
   NULL without memory. A line never holds a raw '\n': control characters
   are escaped. */
const char *sim__trace_line(const cJSON *ev, size_t *len) {
  lbuf *b = lb_get();
  if (b == NULL) return NULL;
  put_value(b, ev, 0);
  lb_putc(b, '\n');
  if (b->oom) return NULL;
  *len = b->n;
  return b->p;
}

/* Writes one serialised line to tr's file: at once when quiet, else
   batched for the flusher. */
static void emit_line(sim_trace *tr, const char *line, size_t len) {
  pthread_mutex_lock(&tr->lock);
  double now = sim__now_ms();
  if (tr->failed) {
    /* After a failed write nothing more is written. */
  } else if (!tr->flusher_on || (tr->pn == 0 && now - tr->last_write >= SIM__TRACE_BATCH_MS)) {
    /* Quiet (or no flusher): this line goes out now, alone. */
    write_lines(tr, line, len);
    tr->last_write = now;
  } else {
    if (tr->pn + len > tr->pcap) {
      size_t cap = tr->pcap ? tr->pcap : 8192;
      while (cap < tr->pn + len) cap *= 2;
      char *p = realloc(tr->pend, cap);
      if (p == NULL) { /* no room to batch: write what waits, then this */
        flush_pending(tr, now);
        write_lines(tr, line, len);
        tr->last_write = now;
        pthread_mutex_unlock(&tr->lock);
        return;
      }
      tr->pend = p;
      tr->pcap = cap;
    }
    int was_empty = tr->pn == 0;
    memcpy(tr->pend + tr->pn, line, len);
    tr->pn += len;
    if (tr->pn >= SIM__TRACE_BATCH_BYTES) flush_pending(tr, now);
    else if (was_empty) pthread_cond_signal(&tr->cv);
  }
  pthread_mutex_unlock(&tr->lock);
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

/* Writes ev as one line and frees it. Thread-safe. */
void sim__trace_emit(sim_trace *tr, cJSON *ev) {
  if (ev == NULL) return;
  if (!sim__trace_on(tr)) {
    cJSON_Delete(ev);
    return;
  }
  if (tr->session != NULL) {
    cJSON_DeleteItemFromObjectCaseSensitive(ev, "session");
    if (cJSON_AddStringToObject(ev, "session", tr->session) == NULL) {
      cJSON_Delete(ev);
      ev = NULL;
    }
  }
  size_t len = 0;
  const char *line = ev ? sim__trace_line(ev, &len) : NULL;
  cJSON_Delete(ev);
  sim_trace *file = tr->tap_on ? tr->parent : tr;
  if (line == NULL) { /* out of memory: the line is lost, and the trace says so */
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
    return;
  }
  if (tr->tap_on) tap_line(tr, line, len);
  if (file != NULL && file->f != NULL) emit_line(file, line, len);
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
    pthread_mutex_lock(&tr->lock);
    flush_pending(tr, sim__now_ms());
    pthread_mutex_unlock(&tr->lock);
    errno = 0;
    int bad = tr->owned ? fclose(tr->f) != 0 : fflush(tr->f) != 0;
    if (bad) mark_failed(tr, errno);
  }
  int rc = tr->failed ? SIM_EIO : SIM_OK;
  if (rc != SIM_OK && err != NULL) fail_message(tr, err);
  pthread_mutex_destroy(&tr->lock);
  free(tr->pend);
  free(tr->tap);
  free(tr->session);
  free(tr);
  return rc;
}

/* Flushes and closes the trace, ignoring failures. NULL is a no-op. */
void sim__trace_close(sim_trace *tr) { (void)sim__trace_finish(tr, NULL); }
