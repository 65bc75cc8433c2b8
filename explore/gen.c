/*
 * gen.c - drawing schedules. Every choice is a function of (seed, index,
 * salt): the index-th schedule of a seed is the same whatever ran before
 * it, on any machine, at any concurrency.
 */
#include <string.h>

#include "explore/explore_int.h"

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint32_t xpl__pick(uint64_t seed, long index, uint32_t salt, uint32_t n) {
  if (n <= 1) return 0;
  uint64_t h = mix(mix(seed) ^ mix((uint64_t)index * 0x100000001b3ull + salt));
  return (uint32_t)(h % n);
}

int xpl__same(const xpl_schedule *a, const xpl_schedule *b) {
  if (a->call != b->call || a->n != b->n) return 0;
  for (int i = 0; i < a->n; i++)
    if (a->s[i].kind != b->s[i].kind || a->s[i].a != b->s[i].a || a->s[i].b != b->s[i].b)
      return 0;
  return 1;
}

static int max_steps(const xpl_space *sp) {
  return sp->max_steps >= 1 && sp->max_steps <= XPL_MAX_STEPS ? sp->max_steps : 3;
}

static int kind_allowed(const xpl_space *sp, int call, int k) {
  return (sp->kinds == 0 || (sp->kinds >> k) & 1u) && xpl_step_fits(call, k);
}

/* The calls of the space (chat and stream when it names none) that have at
   least one allowed kind; returns how many, in out. */
static int calls_of(const xpl_space *sp, int out[XPL_NCALLS]) {
  unsigned calls = sp->calls ? sp->calls : (1u << XPL_CALL_CHAT) | (1u << XPL_CALL_STREAM);
  int n = 0;
  for (int c = 0; c < XPL_NCALLS; c++) {
    if (!((calls >> c) & 1u)) continue;
    for (int k = 0; k < XPL_NKINDS; k++)
      if (kind_allowed(sp, c, k)) {
        out[n++] = c;
        break;
      }
  }
  return n;
}

/* Ladder limits for b of kind k with form a, as the space allows. */
static int b_limit(const xpl_space *sp, int k) {
  int nb = xpl__kinds[k].nb;
  if (k == XPL_S_429 && sp->max_ra_index >= 0 && sp->max_ra_index + 1 < nb) nb = sp->max_ra_index + 1;
  return nb;
}

static int a_limit(const xpl_space *sp, int k) {
  int na = xpl__kinds[k].na;
  if (k == XPL_S_429 && sp->no_date) na = 3; /* none, seconds, ms */
  return na;
}

/* One random step for call, from choice salts base.. */
static void draw_step(const xpl_space *sp, int call, uint64_t seed, long index, uint32_t salt,
                      xpl_step *st) {
  int ks[XPL_NKINDS], nk = 0;
  for (int k = 0; k < XPL_NKINDS; k++)
    if (kind_allowed(sp, call, k)) ks[nk++] = k;
  int k = nk ? ks[xpl__pick(seed, index, salt, (uint32_t)nk)] : XPL_S_5XX;
  st->kind = (uint8_t)k;
  st->a = (uint8_t)xpl__pick(seed, index, salt + 1, (uint32_t)a_limit(sp, k));
  st->b = (uint8_t)xpl__pick(seed, index, salt + 2, (uint32_t)b_limit(sp, k));
  if (k == XPL_S_429 && st->a == 0) st->b = 0; /* no value without a header */
}

void xpl_gen_random(const xpl_space *sp, uint64_t seed, long index, xpl_schedule *out) {
  memset(out, 0, sizeof *out);
  int calls[XPL_NCALLS];
  int nc = calls_of(sp, calls);
  out->call = (uint8_t)(nc ? calls[xpl__pick(seed, index, 1, (uint32_t)nc)] : XPL_CALL_CHAT);
  out->n = (uint8_t)(1 + xpl__pick(seed, index, 2, (uint32_t)max_steps(sp)));
  for (int i = 0; i < out->n; i++) draw_step(sp, out->call, seed, index, 16u + 4u * (uint32_t)i, &out->s[i]);
}

void xpl_gen_mutate(const xpl_space *sp, uint64_t seed, long index, const xpl_schedule *parent,
                    xpl_schedule *out) {
  *out = *parent;
  int ms = max_steps(sp);
  uint32_t op = xpl__pick(seed, index, 3, 4);
  int at = (int)xpl__pick(seed, index, 4, out->n);
  if (op == 0 && out->n < ms) { /* insert a step */
    memmove(&out->s[at + 1], &out->s[at], (size_t)(out->n - at) * sizeof out->s[0]);
    out->n++;
    draw_step(sp, out->call, seed, index, 40, &out->s[at]);
  } else if (op == 1 && out->n > 1) { /* remove one */
    memmove(&out->s[at], &out->s[at + 1], (size_t)(out->n - at - 1) * sizeof out->s[0]);
    out->n--;
  } else if (op == 2) { /* another value of the same kind */
    xpl_step *st = &out->s[at];
    st->a = (uint8_t)xpl__pick(seed, index, 41, (uint32_t)a_limit(sp, st->kind));
    st->b = (uint8_t)xpl__pick(seed, index, 42, (uint32_t)b_limit(sp, st->kind));
    if (st->kind == XPL_S_429 && st->a == 0) st->b = 0;
  } else { /* another step in that place */
    draw_step(sp, out->call, seed, index, 44, &out->s[at]);
  }
}
