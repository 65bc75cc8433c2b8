/*
 * explore_int.h - what the files of explore/ share: the table of fault
 * kinds, their value ladders and the deterministic choice function.
 */
#ifndef FUSEBOX_EXPLORE_INT_H
#define FUSEBOX_EXPLORE_INT_H

#include "explore/explore.h"

typedef struct xpl__kind_info {
  const char *name;
  unsigned calls; /* bit per xpl_call it may be played in */
  int na, nb;     /* ladder sizes of step.a and step.b */
  int rank;       /* strength: shrinking prefers a lower one */
} xpl__kind_info;

extern const xpl__kind_info xpl__kinds[XPL_NKINDS];
extern const int xpl__5xx[4], xpl__4xx[4], xpl__ra_s[5], xpl__trunc_at[3], xpl__chunks[3];
extern const char *const xpl__ra_form[4];
extern const double xpl__delay_s[3];

/* A growing text; oom set when memory ran out (the text is then freed). */
typedef struct xpl__sbuf {
  char *p;
  size_t len, cap;
  int oom;
} xpl__sbuf;
void xpl__add(xpl__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a Lua string literal. */
void xpl__add_quoted(xpl__sbuf *b, const char *s);

void xpl__step_text(const xpl_step *st, char *out, size_t n);

/* A number in [0, n) decided by (seed, index, salt) alone: splitmix64. */
uint32_t xpl__pick(uint64_t seed, long index, uint32_t salt, uint32_t n);

/* 1 when the two schedules are the same. */
int xpl__same(const xpl_schedule *a, const xpl_schedule *b);

#endif
