/*
 * util.c - small helpers of the reports module: error strings, an arena for
 * trace data, a bounded string buffer and the escaping every writer needs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/term_rule.h"
#include "reports/reports_int.h"

/* A static description of an error code. */
const char *rpt_status_word(rpt_status s) {
  return s == RPT_PASS ? "pass" : s == RPT_FAIL ? "fail" : "n/a";
}

const char *rpt_strerror(int code) {
  switch (code) {
  case RPT_OK: return "ok";
  case RPT_ENOMEM: return "out of memory";
  case RPT_EIO: return "input/output error";
  case RPT_ETRACE: return "not a fusebox trace";
  case RPT_ETOOBIG: return "over a size bound";
  case RPT_EEXPECT: return "bad expect or client table";
  case RPT_EINVAL: return "invalid argument";
  default: return "unknown error";
  }
}

/* ------------------------------------------------------------ arena */

struct rpt__chunk {
  rpt__chunk *next;
  size_t used, cap;
  max_align_t align[]; /* data follows, aligned for anything */
};

#define RPT__CHUNK_MIN (64 * 1024)

/* Returns n zeroed bytes from the arena, or NULL when over its bound or out of memory. */
void *rpt__arena_alloc(rpt__arena *a, size_t n) {
  size_t al = sizeof(max_align_t);
  n = (n + al - 1) / al * al;
  if (n == 0) n = al;
  rpt__chunk *c = a->head;
  if (c == NULL || c->cap - c->used < n) {
    size_t cap = n > RPT__CHUNK_MIN ? n : RPT__CHUNK_MIN;
    size_t max = a->max ? a->max : RPT__ARENA_MAX;
    if (a->total + cap > max) return NULL;
    c = malloc(sizeof(*c) + cap);
    if (c == NULL) return NULL;
    c->used = 0;
    c->cap = cap;
    c->next = a->head;
    a->head = c;
    a->total += cap;
  }
  char *p = (char *)c->align + c->used;
  c->used += n;
  memset(p, 0, n);
  return p;
}

/* Copies s (NULL gives NULL) into the arena; NULL on failure with *oom set. */
char *rpt__arena_strdup(rpt__arena *a, const char *s, int *oom) {
  if (s == NULL) return NULL;
  size_t n = strlen(s) + 1;
  char *p = rpt__arena_alloc(a, n);
  if (p == NULL) {
    if (oom) *oom = 1;
    return NULL;
  }
  memcpy(p, s, n);
  return p;
}

/* Releases every chunk; the arena can be reused afterwards. */
void rpt__arena_free(rpt__arena *a) {
  rpt__chunk *c = a->head;
  while (c) {
    rpt__chunk *next = c->next;
    free(c);
    c = next;
  }
  a->head = NULL;
  a->total = 0;
}

/* ----------------------------------------------------- bounded buffer */

/* Prepares an empty buffer that never grows past max bytes. */
void rpt__buf_init(rpt__buf *b, size_t max) {
  memset(b, 0, sizeof(*b));
  b->max = max;
}

/* Appends n bytes; returns 0, or -1 when cut or out of memory. */
int rpt__buf_add(rpt__buf *b, const char *s, size_t n) {
  if (b->toobig || b->oom) return -1;
  int cut = 0;
  if (b->len + n > b->max) {
    n = b->max - b->len;
    cut = 1;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n + 1) cap *= 2;
    if (cap > b->max + 1) cap = b->max + 1;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
      b->oom = 1;
      return -1;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
  if (cut) {
    b->toobig = 1;
    return -1;
  }
  return 0;
}

/* The text so far ("" when empty); valid until the next append or free. */
const char *rpt__buf_str(const rpt__buf *b) { return b->p ? b->p : ""; }

/* Releases the buffer's memory; it is empty afterwards. */
void rpt__buf_free(rpt__buf *b) {
  free(b->p);
  size_t max = b->max;
  memset(b, 0, sizeof(*b));
  b->max = max;
}

/* ---------------------------------------------------------- escaping */

/*
 * Writes s as XML/HTML text or attribute content: & < > " ' escaped, invalid
 * UTF-8 and characters XML forbids replaced by U+FFFD, and (attr = 1) tabs
 * and newlines as character references. NULL writes nothing.
 */
void rpt__put_xml(FILE *f, const char *s, int attr) {
  if (s == NULL) return;
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  while (n > 0) {
    uint32_t cp;
    size_t len = term_rule_utf8(p, n, &cp);
    if (len == 0) {
      fputs("\xEF\xBF\xBD", f);
      p++;
      n--;
      continue;
    }
    switch (cp) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    case '\t': fputs(attr ? "&#9;" : "\t", f); break;
    case '\n': fputs(attr ? "&#10;" : "\n", f); break;
    case '\r': fputs("&#13;", f); break;
    default:
      if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) ||
          cp == 0xFFFE || cp == 0xFFFF)
        fputs("\xEF\xBF\xBD", f);
      else
        fwrite(p, 1, len, f);
    }
    p += len;
    n -= len;
  }
}

/*
 * Copies s with every invalid UTF-8 byte replaced by U+FFFD, so that JSON
 * writers never emit invalid text. The caller owns the copy and frees it;
 * NULL when out of memory.
 */
char *rpt__utf8_dup(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  char *out = malloc(n * 3 + 1), *o = out;
  if (out == NULL) return NULL;
  while (n > 0) {
    uint32_t cp;
    size_t len = term_rule_utf8(p, n, &cp);
    if (len == 0) {
      memcpy(o, "\xEF\xBF\xBD", 3);
      o += 3;
      p++;
      n--;
      continue;
    }
    memcpy(o, p, len);
    o += len;
    p += len;
    n -= len;
  }
  *o = '\0';
  return out;
}

/*
 * Writes s for a terminal: every terminal control (common/term_rule.h: C0
 * with '\n' and '\t', DEL, C1, bytes that are not UTF-8) becomes '?',
 * and at most max_cols code points are written (max_cols < 0 = all), the
 * last one replaced by an ellipsis when cut. Returns the columns written.
 */
int rpt__put_term(FILE *f, const char *s, int max_cols) {
  if (s == NULL) return 0;
  const unsigned char *p = (const unsigned char *)s;
  size_t n = strlen(s);
  /* Count code points first, to know whether to cut. */
  int total = 0;
  for (size_t i = 0; i < n;) {
    uint32_t cp;
    size_t len = term_rule_utf8(p + i, n - i, &cp);
    i += len ? len : 1;
    total++;
  }
  int limit = (max_cols >= 0 && total > max_cols) ? max_cols - 1 : total;
  int cols = 0;
  while (n > 0 && cols < limit) {
    uint32_t cp;
    int control;
    size_t len = term_rule_next(p, n, &cp, &control); /* the one rule: common/term_rule.h */
    if (control) fputc('?', f);
    else fwrite(p, 1, len, f);
    p += len;
    n -= len;
    cols++;
  }
  if (limit < total && max_cols > 0) {
    fputs("\xE2\x80\xA6", f);
    cols++;
  }
  return cols;
}

/*
 * Copies a logical-request key for evidence: keys longer than 24 bytes are
 * shortened to their first 20 and an ellipsis. Returns out.
 */
const char *rpt__short_key(const char *key, char *out, size_t outlen) {
  if (key == NULL) key = "?";
  size_t n = strlen(key);
  if (n <= 24) {
    snprintf(out, outlen, "%s", key);
  } else {
    /* Do not cut inside a UTF-8 sequence. */
    size_t cut = 20;
    while (cut > 0 && ((unsigned char)key[cut] & 0xC0) == 0x80) cut--;
    snprintf(out, outlen, "%.*s\xE2\x80\xA6", (int)cut, key);
  }
  return out;
}

/* Formats milliseconds for people ("812 ms", "2.4 s"). Returns out. */
const char *rpt__fmt_ms(double ms, char *out, size_t outlen) {
  if (ms < 0) ms = 0;
  if (ms < 10)
    snprintf(out, outlen, "%.1f ms", ms);
  else if (ms < 10000)
    snprintf(out, outlen, "%.0f ms", ms);
  else
    snprintf(out, outlen, "%.1f s", ms / 1000.0);
  return out;
}

/* Parses JSON text; *oom when cJSON ran out of memory (see reports_int.h). */
cJSON *rpt__json_parse(const char *text, size_t len, int *oom) {
  if (text == NULL) return NULL;
  int saved = errno;
  errno = 0;
  cJSON *o = cJSON_ParseWithLength(text, len);
  if (o == NULL && errno == ENOMEM) *oom = 1;
  errno = saved;
  return o;
}

/*
 * Opens path for writing ("-" = stdout, not to be closed). Returns the
 * stream or NULL with err set.
 */
FILE *rpt__open_out(const char *path, char err[RPT_ERRLEN]) {
  if (path == NULL) {
    snprintf(err, RPT_ERRLEN, "no output path");
    return NULL;
  }
  if (strcmp(path, "-") == 0) return stdout;
  FILE *f = fopen(path, "w");
  if (f == NULL)
    snprintf(err, RPT_ERRLEN, "%s: %s", path, strerror(errno));
  return f;
}

/* Closes what rpt__open_out opened; returns 0 or RPT_EIO with err set. */
int rpt__close_out(FILE *f, const char *path, char err[RPT_ERRLEN]) {
  int bad = ferror(f);
  if (f == stdout) {
    if (fflush(f) != 0) bad = 1;
  } else if (fclose(f) != 0) {
    bad = 1;
  }
  if (bad) {
    snprintf(err, RPT_ERRLEN, "%s: write failed", path ? path : "-");
    return RPT_EIO;
  }
  return 0;
}

/* Reads a whole file of at most max bytes, NUL-terminated; see reports_int.h. */
int rpt__read_file(const char *path, size_t max, char **out, size_t *len,
                   char err[RPT_ERRLEN]) {
  *out = NULL;
  *len = 0;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, RPT_ERRLEN, "%.200s: %s", path, strerror(errno));
    return RPT_EIO;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap + 1);
  int rc = buf ? RPT_OK : RPT_ENOMEM;
  while (rc == RPT_OK) {
    if (n == cap) {
      if (cap >= max) {
        snprintf(err, RPT_ERRLEN, "%.200s: larger than %zu MB", path, max >> 20);
        rc = RPT_ETOOBIG;
        break;
      }
      char *p = realloc(buf, cap * 2 + 1);
      if (p == NULL) {
        rc = RPT_ENOMEM;
        break;
      }
      buf = p;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) {
      if (ferror(f)) {
        snprintf(err, RPT_ERRLEN, "%.200s: read error", path);
        rc = RPT_EIO;
      }
      break;
    }
  }
  fclose(f);
  if (rc == RPT_ENOMEM) snprintf(err, RPT_ERRLEN, "%.200s: out of memory", path);
  if (rc != RPT_OK) {
    free(buf);
    return rc;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return RPT_OK;
}
