/*
 * shrink.c - the neighbours of a failing schedule that are smaller: a step
 * removed, a step replaced by a weaker kind (a reset by a drop, anything by
 * a 503), a value moved down its ladder. The hunt keeps the first that
 * still fails the same verdict and starts again from it (delta debugging
 * over the steps, then over their strength).
 */
#include "explore/explore_int.h"

static int in_space(const xpl_space *sp, int call, int k) {
  return (sp->kinds == 0 || (sp->kinds >> k) & 1u) && xpl_step_fits(call, k);
}

static int push(xpl_schedule *out, int n, int cap, const xpl_schedule *c, long limit) {
  if (n >= cap || xpl_schedule_weight(c) >= limit) return n;
  for (int i = 0; i < n; i++)
    if (xpl__same(&out[i], c)) return n;
  out[n] = *c;
  return n + 1;
}

int xpl_shrink_candidates(const xpl_schedule *s, const xpl_space *sp, xpl_schedule *out, int cap) {
  long w = xpl_schedule_weight(s);
  int n = 0;
  xpl_schedule c;
  /* fewer faulted attempts: each step removed */
  for (int i = 0; s->n > 1 && i < s->n; i++) {
    c = *s;
    for (int j = i; j + 1 < c.n; j++) c.s[j] = c.s[j + 1];
    c.n--;
    n = push(out, n, cap, &c, w);
  }
  /* weaker kinds (of a lower rank), the weakest first */
  for (int rank = 0; rank < 6; rank++)
    for (int i = 0; i < s->n; i++)
      for (int k = 0; k < XPL_NKINDS; k++) {
        if (xpl__kinds[k].rank != rank || rank >= xpl__kinds[s->s[i].kind].rank ||
            !in_space(sp, s->call, k))
          continue;
        c = *s;
        c.s[i].kind = (uint8_t)k;
        c.s[i].a = 0;
        c.s[i].b = 0;
        n = push(out, n, cap, &c, w);
      }
  /* the same kind, lower on its ladders */
  for (int i = 0; i < s->n; i++) {
    for (int a = 0; a < s->s[i].a; a++) {
      c = *s;
      c.s[i].a = (uint8_t)a;
      if (c.s[i].kind == XPL_S_429 && a == 0) c.s[i].b = 0;
      n = push(out, n, cap, &c, w);
    }
    for (int b = 0; b < s->s[i].b; b++) {
      c = *s;
      c.s[i].b = (uint8_t)b;
      n = push(out, n, cap, &c, w);
    }
  }
  return n;
}
