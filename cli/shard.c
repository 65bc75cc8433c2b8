/*
 * shard.c - splitting a suite by expected duration (shard.h): the shards
 * of `fusebox run --shard K/N` and the default number of workers of
 * `fusebox run`, both from one longest-first plan.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shard.h"

/* Parses "K/N"; see shard.h. */
int cli_shard_parse(const char *spec, int *k, int *n, char *err, size_t cap) {
  const char *slash = spec ? strchr(spec, '/') : NULL;
  char *end = NULL;
  long kk = 0, nn = 0;
  int ok = slash != NULL && slash != spec;
  if (ok) {
    errno = 0;
    kk = strtol(spec, &end, 10);
    ok = end == slash && errno == 0 && spec[0] >= '0' && spec[0] <= '9';
  }
  if (ok) {
    errno = 0;
    nn = strtol(slash + 1, &end, 10);
    ok = end != slash + 1 && *end == '\0' && errno == 0 && slash[1] >= '0' && slash[1] <= '9';
  }
  if (!ok) {
    snprintf(err, cap, "--shard is K/N (the K-th of N shards, e.g. 1/4), not '%s'",
             spec ? spec : "");
    return -1;
  }
  if (nn < 1 || nn > CLI_SHARD_MAX || kk < 1 || kk > nn) {
    snprintf(err, cap, "--shard %s: K must be 1..N and N 1..%d", spec, CLI_SHARD_MAX);
    return -1;
  }
  *k = (int)kk;
  *n = (int)nn;
  return 0;
}

typedef struct ranked {
  long long ms;    /* cost, whole ms */
  const char *key;
  size_t i;        /* position in the caller's array */
} ranked;

static long long to_ms(double s) {
  if (!(s > 0)) return 0;
  if (s > 1e9) return (long long)1e12;
  return llround(s * 1000.0);
}

static int key_cmp(const char *a, const char *b) { return strcmp(a ? a : "", b ? b : ""); }

/* Longest first; equal costs by key; equal keys by position. */
static int by_cost(const void *x, const void *y) {
  const ranked *a = x, *b = y;
  if (a->ms != b->ms) return a->ms < b->ms ? 1 : -1;
  int c = key_cmp(a->key, b->key);
  if (c) return c;
  return a->i < b->i ? -1 : a->i > b->i;
}

static ranked *rank(const cli_shard_item *items, size_t n) {
  ranked *r = malloc((n ? n : 1) * sizeof *r);
  if (r == NULL) return NULL;
  for (size_t i = 0; i < n; i++) r[i] = (ranked){to_ms(items[i].cost), items[i].key, i};
  qsort(r, n, sizeof *r, by_cost);
  return r;
}

/* The greedy plan over already ranked items; see cli_shard_assign. */
static long long plan(const ranked *r, size_t n, int nbins, int *bin) {
  long long *load = calloc((size_t)nbins, sizeof *load);
  size_t *count = calloc((size_t)nbins, sizeof *count);
  if (load == NULL || count == NULL) {
    free(load);
    free(count);
    return -1;
  }
  long long worst = 0;
  for (size_t k = 0; k < n; k++) {
    int best = 0;
    for (int b = 1; b < nbins; b++)
      if (load[b] < load[best] || (load[b] == load[best] && count[b] < count[best])) best = b;
    load[best] += r[k].ms;
    count[best]++;
    if (bin) bin[r[k].i] = best;
    if (load[best] > worst) worst = load[best];
  }
  free(load);
  free(count);
  return worst;
}

/* Assigns items to bins, longest first; see shard.h. */
long long cli_shard_assign(const cli_shard_item *items, size_t n, int nbins, int *bin) {
  if (nbins < 1) return -1;
  ranked *r = rank(items, n);
  if (r == NULL) return -1;
  long long worst = plan(r, n, nbins, bin);
  free(r);
  return worst;
}

/* The fewest workers whose plan ends with the longest item; see shard.h. */
int cli_shard_workers(const cli_shard_item *items, size_t n, int lo, int hi) {
  if (hi > (int)n) hi = (int)n;
  if (hi < 1) hi = 1;
  if (lo > hi) lo = hi;
  if (lo < 1) lo = 1;
  ranked *r = rank(items, n);
  if (r == NULL) return lo;
  long long longest = n ? r[0].ms : 0;
  int w = lo;
  for (; w < hi; w++)
    if (plan(r, n, w, NULL) <= longest) break;
  free(r);
  return w;
}

static int key_ptr_cmp(const void *x, const void *y) {
  return key_cmp(*(const char *const *)x, *(const char *const *)y);
}

/* FNV-1a over the sorted keys, each ended by a NUL; see shard.h. */
uint64_t cli_shard_set_id(const cli_shard_item *items, size_t n) {
  const char **k = malloc((n ? n : 1) * sizeof *k);
  if (k == NULL) return 0;
  for (size_t i = 0; i < n; i++) k[i] = items[i].key ? items[i].key : "";
  qsort(k, n, sizeof *k, key_ptr_cmp);
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) {
    for (const unsigned char *p = (const unsigned char *)k[i];; p++) {
      h ^= *p;
      h *= 1099511628211ULL;
      if (*p == 0) break;
    }
  }
  free(k);
  return h ? h : 1;
}
