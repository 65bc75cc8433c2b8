/*
 * json_write.c - JSON straight from fields to bytes; see json_write_int.h.
 * The trace's line writer and the hot answer bodies use it, so a string is
 * escaped and UTF-8-checked in one pass and no tree is built to be printed.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/json_write_int.h"

/* Empty writer bounded by max; see json_write_int.h. */
void sim__jw_init(sim_jw *w, size_t max) {
  w->p = NULL;
  w->n = w->cap = 0;
  w->max = max;
  w->oom = 0;
  w->fix_utf8 = 0;
}

/* Empties the writer and keeps its buffer. */
void sim__jw_reset(sim_jw *w) {
  w->n = 0;
  w->oom = 0;
}

/* Frees the buffer; the writer is empty after. */
void sim__jw_free(sim_jw *w) {
  free(w->p);
  w->p = NULL;
  w->n = w->cap = 0;
}

/* The bytes, NUL-terminated, owned by the caller; see json_write_int.h. */
char *sim__jw_take(sim_jw *w) {
  if (w->oom || w->n + 1 > w->max) {
    sim__jw_free(w);
    return NULL;
  }
  /* the buffer as it is when the NUL fits and it is at most twice the
     bytes (an answer's body: no shrinking copy, issue 30); shrunk when it
     would waste more (a stream's frames are all kept while it plays) */
  int keep = w->n + 1 <= w->cap && w->cap - w->n <= w->n + 1;
  char *p = keep ? w->p : realloc(w->p, w->n + 1);
  if (p == NULL) {
    sim__jw_free(w);
    return NULL;
  }
  p[w->n] = '\0';
  w->p = NULL;
  w->n = w->cap = 0;
  return p;
}

/* Room for more bytes; sets oom (keeping what is written) when there is
   none within max. */
static int room(sim_jw *w, size_t more) {
  if (more <= w->cap - w->n && !w->oom) return 1; /* cap <= max: the usual case */
  if (w->oom) return 0;
  if (more > w->max || w->n > w->max - more) {
    w->oom = 1;
    return 0;
  }
  if (w->n + more <= w->cap) return 1;
  size_t cap = w->cap ? w->cap : 512;
  while (cap < w->n + more) cap *= 2;
  if (cap > w->max) cap = w->max;
  char *p = realloc(w->p, cap);
  if (p == NULL) {
    w->oom = 1;
    return 0;
  }
  w->p = p;
  w->cap = cap;
  return 1;
}

/* Appends n raw bytes. */
void sim__jw_raw(sim_jw *w, const char *s, size_t n) {
  if (!room(w, n)) return;
  memcpy(w->p + w->n, s, n);
  w->n += n;
}

/* One byte. */
static void put_byte(sim_jw *w, char c) {
  if (room(w, 1)) w->p[w->n++] = c;
}

/* The comma before an element, unless it opens its container or follows
   its key. */
static void sep(sim_jw *w) {
  if (w->n == 0 || w->oom) return;
  char last = w->p[w->n - 1];
  if (last != '{' && last != '[' && last != ':') put_byte(w, ',');
}

void sim__jw_open(sim_jw *w, char c) {
  sep(w);
  put_byte(w, c);
}

void sim__jw_close(sim_jw *w, char c) { put_byte(w, c); }

/* Length of a valid UTF-8 sequence at s, 0 when invalid. */
size_t sim__utf8_len(const unsigned char *s, size_t n) {
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

/* Per byte: 1 escaped (control, '"', '\\'), 2 the start or part of a
   multi-byte sequence (checked when the writer fixes UTF-8), 0 as it is. */
static const unsigned char byte_class[256] = {
    [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 2,
};

/* The bytes put_string writes for the n bytes at s, quotes included. */
static size_t escaped_len(const char *s, size_t n, int fix) {
  size_t len = 2;
  for (size_t i = 0; i < n;) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 && fix) {
      size_t l = sim__utf8_len((const unsigned char *)s + i, n - i);
      len += l == 0 ? 3 : l;
      i += l == 0 ? 1 : l;
      continue;
    }
    i++;
    if (c == '"' || c == '\\') len += 2;
    else if (c >= 0x20) len += 1;
    else if (c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') len += 2;
    else len += 6;
  }
  return len;
}

/* The pn raw bytes at pre (a literal key, or none), then a JSON string of
   n bytes, no comma: escapes as cJSON does (invalid UTF-8 bytes as U+FFFD
   when the writer fixes UTF-8). One room check for both. */
static void put_string_after(sim_jw *w, const char *pre, size_t pn, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  /* At most 6 bytes out per byte in (\u00XX), 3 per invalid byte; a long
     string is measured first, so room is what it needs, not 6 times. */
  size_t need = n <= w->max / 6 ? n * 6 + 2 : (size_t)-1;
  if (need > 65536) need = escaped_len(s, n, w->fix_utf8);
  if (!room(w, pn + need)) return;
  char *o = w->p + w->n;
  if (pn > 0) {
    memcpy(o, pre, pn);
    o += pn;
  }
  *o++ = '"';
  const unsigned char stop = w->fix_utf8 ? 3 : 1; /* which classes end a run */
  for (size_t i = 0; i < n;) {
    /* A run of bytes written as they are, copied at once. */
    size_t j = i;
    while (j < n && (byte_class[(unsigned char)s[j]] & stop) == 0) j++;
    memcpy(o, s + i, j - i);
    o += j - i;
    i = j;
    if (i >= n) break;
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80) {
      size_t l = w->fix_utf8 ? sim__utf8_len((const unsigned char *)s + i, n - i) : 1;
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
  w->n = (size_t)(o - w->p);
}

static void put_string(sim_jw *w, const char *s, size_t n) { put_string_after(w, NULL, 0, s, n); }

void sim__jw_strn(sim_jw *w, const char *s, size_t n) {
  sep(w);
  put_string(w, s ? s : "", s ? n : 0);
}

void sim__jw_str(sim_jw *w, const char *s) {
  if (s == NULL) s = "";
  sim__jw_strn(w, s, strlen(s));
}

void sim__jw_key(sim_jw *w, const char *key) {
  sep(w);
  if (key == NULL) key = "";
  put_string(w, key, strlen(key));
  put_byte(w, ':');
}

/* Writes v's digits (a '-' before them when negative) to end just before
   e; returns where they start. */
static char *int_before(char *e, long long v) {
  /* two digits a division (every answer has four numbers, every trace
     line several) */
  static const char two[201] = "00010203040506070809101112131415161718192021222324"
                               "25262728293031323334353637383940414243444546474849"
                               "50515253545556575859606162636465666768697071727374"
                               "75767778798081828384858687888990919293949596979899";
  unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
  for (; u >= 100; u /= 100) {
    e -= 2;
    memcpy(e, two + 2 * (u % 100), 2);
  }
  if (u >= 10) {
    e -= 2;
    memcpy(e, two + 2 * u, 2);
  } else {
    *--e = (char)('0' + u);
  }
  if (v < 0) *--e = '-';
  return e;
}

/* Writes q thousandths (microseconds as milliseconds) to end just before
   e: the whole part, then the fraction without its trailing zeros (none
   for a whole number); returns where they start. */
static char *thousandths_before(char *e, long long q) {
  unsigned long long u = q < 0 ? 0ULL - (unsigned long long)q : (unsigned long long)q;
  unsigned frac = (unsigned)(u % 1000);
  if (frac != 0) {
    int digits = frac % 10 ? 3 : frac % 100 ? 2 : 1;
    for (int i = 3; i > digits; i--) frac /= 10;
    for (int i = 0; i < digits; i++, frac /= 10) *--e = (char)('0' + frac % 10);
    *--e = '.';
  }
  e = int_before(e, (long long)(u / 1000));
  if (q < 0) *--e = '-';
  return e;
}

/* A number as cJSON prints it; NaN and infinities as null. */
void sim__jw_num(sim_jw *w, double d) {
  char tmp[32];
  int len;
  sep(w);
  if (d != d || d > DBL_MAX || d < -DBL_MAX) {
    sim__jw_raw(w, "null", 4);
    return;
  }
  if (d == 0 && signbit(d)) { /* as cJSON prints it */
    sim__jw_raw(w, "-0", 2);
    return;
  }
  /* the range first: (long long) of 1e40 is undefined (fuzz_api) */
  if (d < 1e15 && d > -1e15 && d == (double)(long long)d) {
    char *e = tmp + sizeof tmp, *q = int_before(e, (long long)d);
    sim__jw_raw(w, q, (size_t)(e - q));
    return;
  }
  /* Milliseconds to the microsecond (every time in the trace): what %1.15g
     prints for them, without printf's cost. d must be the double nearest
     q/1000 (division is correctly rounded), so %1.15g reads back exactly. */
  long long q = llround(d * 1000.0);
  if (d > -1e12 && d < 1e12 && (double)q / 1000.0 == d) { /* not whole: d is not */
    char *e = tmp + sizeof tmp, *o = thousandths_before(e, q);
    sim__jw_raw(w, o, (size_t)(e - o));
    return;
  }
  /* cJSON's rule (print_number, 1.7.15): %1.15g when it reads back as
     nearly equal (within DBL_EPSILON, relative), else %1.17g. */
  len = snprintf(tmp, sizeof tmp, "%1.15g", d);
  double back = strtod(tmp, NULL);
  if (!(fabs(back - d) <= fmax(fabs(back), fabs(d)) * DBL_EPSILON))
    len = snprintf(tmp, sizeof tmp, "%1.17g", d);
  sim__jw_raw(w, tmp, (size_t)len);
}

void sim__jw_bool(sim_jw *w, int v) {
  sep(w);
  if (v) sim__jw_raw(w, "true", 4);
  else sim__jw_raw(w, "false", 5);
}

void sim__jw_null(sim_jw *w) {
  sep(w);
  sim__jw_raw(w, "null", 4);
}

static void put_value(sim_jw *w, const cJSON *j, int depth) {
  if (depth > CJSON_NESTING_LIMIT) { /* deeper than cJSON parses: never recurse far */
    sim__jw_null(w);
    return;
  }
  switch (j->type & 0xFF) {
  case cJSON_False: sim__jw_bool(w, 0); break;
  case cJSON_True: sim__jw_bool(w, 1); break;
  case cJSON_Number: sim__jw_num(w, j->valuedouble); break;
  case cJSON_String: sim__jw_str(w, j->valuestring); break;
  case cJSON_Raw:
    sep(w);
    if (j->valuestring) sim__jw_raw(w, j->valuestring, strlen(j->valuestring));
    else sim__jw_raw(w, "null", 4);
    break;
  case cJSON_Array:
  case cJSON_Object: {
    int obj = (j->type & 0xFF) == cJSON_Object;
    sim__jw_open(w, obj ? '{' : '[');
    for (const cJSON *c = j->child; c != NULL; c = c->next) {
      if (obj) sim__jw_key(w, c->string); /* elements get their commas from sep */
      put_value(w, c, depth + 1);
    }
    sim__jw_close(w, obj ? '}' : ']');
    break;
  }
  default: sim__jw_null(w); break;
  }
}

void sim__jw_cjson(sim_jw *w, const cJSON *j) {
  if (j == NULL) sim__jw_null(w);
  else put_value(w, j, 0);
}

void sim__jw_kstr(sim_jw *w, const char *key, const char *s) {
  sim__jw_key(w, key);
  sim__jw_str(w, s);
}

void sim__jw_knum(sim_jw *w, const char *key, double d) {
  sim__jw_key(w, key);
  sim__jw_num(w, d);
}

void sim__jw_kbool(sim_jw *w, const char *key, int v) {
  sim__jw_key(w, key);
  sim__jw_bool(w, v);
}

void sim__jw_knull(sim_jw *w, const char *key) {
  sim__jw_key(w, key);
  sim__jw_null(w);
}

void sim__jw_next_str(sim_jw *w, const char *lit, size_t n, const char *s) {
  if (s == NULL) s = "";
  char last = n > 0 ? lit[n - 1] : '\0';
  if (n > 0 && (last == '{' || last == '[' || last == ':')) { /* no comma: one write */
    put_string_after(w, lit, n, s, strlen(s));
    return;
  }
  sim__jw_raw(w, lit, n);
  sim__jw_str(w, s);
}

void sim__jw_next_num(sim_jw *w, const char *lit, size_t n, double d) {
  sim__jw_raw(w, lit, n);
  sim__jw_num(w, d);
}

/* lit, then the len bytes at s, in one write. */
static void raw2(sim_jw *w, const char *lit, size_t n, const char *s, size_t len) {
  if (!room(w, n + len)) return;
  memcpy(w->p + w->n, lit, n);
  memcpy(w->p + w->n + n, s, len);
  w->n += n + len;
}

void sim__jw_next_int(sim_jw *w, const char *lit, size_t n, long long v) {
  if (v >= 1000000000000000LL || v <= -1000000000000000LL) { /* printed as a double */
    sim__jw_next_num(w, lit, n, (double)v);
    return;
  }
  char tmp[24], *e = tmp + sizeof tmp, *q = int_before(e, v);
  raw2(w, lit, n, q, (size_t)(e - q));
}

void sim__jw_next_us(sim_jw *w, const char *lit, size_t n, long long us) {
  if (us >= 1000000000000000LL || us <= -1000000000000000LL) { /* past the fast paths */
    sim__jw_next_num(w, lit, n, (double)us / 1000.0);
    return;
  }
  char tmp[24], *e = tmp + sizeof tmp, *q = thousandths_before(e, us);
  raw2(w, lit, n, q, (size_t)(e - q));
}

void sim__jw_next_bool(sim_jw *w, const char *lit, size_t n, int v) {
  sim__jw_raw(w, lit, n);
  sim__jw_bool(w, v);
}
