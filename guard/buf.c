/*
 * buf.c - bounded growable buffers and small string helpers. Every buffer in
 * guard/ has a maximum: past it the append fails, it never grows on.
 */
#include "guard/guard_int.h"

#include <stdlib.h>
#include <string.h>

/* Prepares an empty buffer that may hold up to max bytes. */
void guard__buf_init(guard__buf *b, size_t max) {
  b->p = NULL;
  b->len = 0;
  b->cap = 0;
  b->max = max;
}

/* Appends n bytes; GUARD_ETOOBIG past the maximum, GUARD_ENOMEM. */
int guard__buf_add(guard__buf *b, const void *data, size_t n) {
  if (n > b->max - b->len) return GUARD_ETOOBIG;
  size_t need = b->len + n + 1;
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need) cap *= 2;
    if (cap > b->max + 1) cap = b->max + 1;
    char *p = realloc(b->p, cap);
    if (p == NULL) return GUARD_ENOMEM;
    b->p = p;
    b->cap = cap;
  }
  if (n > 0) memcpy(b->p + b->len, data, n);
  b->len += n;
  b->p[b->len] = '\0';
  return GUARD_OK;
}

/* Appends a NUL-terminated string. */
int guard__buf_adds(guard__buf *b, const char *s) {
  return guard__buf_add(b, s, strlen(s));
}

/* Empties the buffer, keeping its memory. */
void guard__buf_reset(guard__buf *b) {
  b->len = 0;
  if (b->p != NULL) b->p[0] = '\0';
}

/* Gives the contents away as a malloc'ed string; the caller owns it. */
char *guard__buf_take(guard__buf *b) {
  char *p = b->p;
  if (p == NULL) p = calloc(1, 1);
  b->p = NULL;
  b->len = 0;
  b->cap = 0;
  return p;
}

/* Releases the memory. */
void guard__buf_free(guard__buf *b) {
  free(b->p);
  b->p = NULL;
  b->len = 0;
  b->cap = 0;
}

/* Copies src into dst[n], truncating, always NUL-terminated. */
void guard__strlcpy(char *dst, const char *src, size_t n) {
  if (n == 0) return;
  if (src == NULL) src = "";
  size_t l = strlen(src);
  if (l >= n) l = n - 1;
  memcpy(dst, src, l);
  dst[l] = '\0';
}

/* A malloc'ed copy of s (NULL stays NULL); sets *fail when out of memory. */
char *guard__strdup(const char *s, int *fail) {
  if (s == NULL) return NULL;
  char *d = strdup(s);
  if (d == NULL) *fail = 1;
  return d;
}

/* Case-insensitive ASCII comparison; 1 when equal. */
int guard__streq_ci(const char *a, const char *b) {
  for (;; a++, b++) {
    unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
    if (x >= 'A' && x <= 'Z') x = (unsigned char)(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = (unsigned char)(y - 'A' + 'a');
    if (x != y) return 0;
    if (x == '\0') return 1;
  }
}
