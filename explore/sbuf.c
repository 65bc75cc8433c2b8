/*
 * sbuf.c - a growing text, for the files explore/ writes (scenarios,
 * profiles, policy cards).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "explore/explore_int.h"

void xpl__add(xpl__sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      b->oom = 1;
      return;
    }
    if (b->p && b->len + (size_t)w < b->cap) {
      b->len += (size_t)w;
      return;
    }
    size_t nc = (b->cap ? b->cap * 2 : 1024) + (size_t)w;
    char *np = realloc(b->p, nc);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np;
    b->cap = nc;
  }
}
