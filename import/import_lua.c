/*
 * import_lua.c - writing Lua text for `fusebox import`: the bounded text buffer and the
 * string, comment and number literals every generated scenario is made of.
 * Whatever bytes the input holds, what these write loads as Lua text.
 */
#define _GNU_SOURCE /* strcasestr, timegm */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "import/import_int.h"

/* ============================================================ buffers */

/* Starts an empty buffer that may hold up to max bytes. */
void imp__buf_init(imp_buf *b, size_t max) {
  memset(b, 0, sizeof *b);
  b->max = max;
}

/* Releases the buffer's text; b can be used again after imp__buf_init. */
void imp__buf_free(imp_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Takes the text out of b (an empty string when nothing was written); the
   caller owns it. NULL when out of memory. */
char *imp__buf_take(imp_buf *b) {
  char *p = b->p;
  if (p == NULL) p = calloc(1, 1);
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

/* Appends n bytes; over the maximum or out of memory it sets b->over or
   b->nomem and appends nothing more. */
void imp__buf_put(imp_buf *b, const char *s, size_t n) {
  if (b->over || b->nomem) return;
  if (b->len + n > b->max) {
    b->over = 1;
    return;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
      b->nomem = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

/* Appends a NUL-terminated string. */
void imp__buf_puts(imp_buf *b, const char *s) { imp__buf_put(b, s, strlen(s)); }

/* Appends printf-formatted text. */
void imp__buf_printf(imp_buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    imp__buf_put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (big == NULL) {
    b->nomem = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  imp__buf_put(b, big, (size_t)n);
  free(big);
}

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3;
  else if (c >= 0xF0 && c <= 0xF4) len = 4;
  else return 0;
  if (len > n) return 0;
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* Appends s as a double-quoted Lua string literal. */
void imp__lua_string(imp_buf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  imp__buf_put(b, "\"", 1);
  size_t run = 0; /* bytes copied as they are, pending */
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    const char *esc = NULL;
    char num[8];
    size_t take = 1;
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c < 0x20 || c == 0x7F) {
      snprintf(num, sizeof num, "\\%03u", c);
      esc = num;
    } else if (c >= 0x80) {
      take = utf8_len(u + i, n - i);
      if (take == 0) {
        snprintf(num, sizeof num, "\\%03u", c);
        esc = num;
        take = 1;
      }
    }
    if (esc != NULL) {
      imp__buf_put(b, s + i - run, run);
      run = 0;
      imp__buf_puts(b, esc);
    } else {
      run += take;
    }
    i += take;
  }
  imp__buf_put(b, s + n - run, run);
  imp__buf_put(b, "\"", 1);
}

/* Appends s for a line comment: printable and UTF-8 only, at most max. */
void imp__lua_comment(imp_buf *b, const char *s, size_t max) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strlen(s);
  size_t out = 0;
  for (size_t i = 0; i < n && out < max;) {
    unsigned char c = u[i];
    size_t take = 1;
    if (c >= 0x80) take = utf8_len(u + i, n - i);
    if (c < 0x20 || c == 0x7F || take == 0) {
      imp__buf_put(b, "?", 1);
      take = 1;
    } else {
      imp__buf_put(b, s + i, take);
    }
    i += take;
    out += take;
  }
  if (n > max) imp__buf_puts(b, "...");
}

/* Appends v with at most 3 decimals and no trailing zeros. */
void imp__lua_number(imp_buf *b, double v) {
  char tmp[64];
  if (!isfinite(v)) v = 0;
  snprintf(tmp, sizeof tmp, "%.3f", v);
  char *dot = strchr(tmp, '.');
  if (dot != NULL) {
    char *e = tmp + strlen(tmp) - 1;
    while (e > dot && *e == '0') *e-- = '\0';
    if (e == dot) *e = '\0';
  }
  if (strcmp(tmp, "-0") == 0) strcpy(tmp, "0");
  imp__buf_puts(b, tmp);
}

