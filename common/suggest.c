/*
 * suggest.c - the did-you-mean rule (see suggest.h): one edit distance and
 * one threshold for every table, step and name fusebox checks.
 */
#include <stddef.h>
#include <string.h>

#include "common/suggest.h"

/* Edit distance with adjacent swaps (optimal string alignment); see suggest.h. */
int fb_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > FB_SUGGEST_MAX || lb > FB_SUGGEST_MAX) return FB_SUGGEST_MAX + 1;
  int d[FB_SUGGEST_MAX + 1][FB_SUGGEST_MAX + 1];
  for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          d[i - 2][j - 2] + 1 < v)
        v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[la][lb];
}

/* How far a name may be from a known one; see suggest.h. */
int fb_suggest_limit(size_t len) { return len <= 4 ? 1 : 2; }

/* The nearest known name within the limit; see suggest.h. */
const char *fb_suggest(const char *key, const char *const *known, int *dist) {
  const char *best = NULL;
  int bestd = fb_suggest_limit(strlen(key)) + 1;
  for (int i = 0; known[i] != NULL; i++) {
    int dd = fb_distance(key, known[i]);
    if (dd < bestd && strcmp(key, known[i]) != 0) {
      bestd = dd;
      best = known[i];
    }
  }
  if (dist != NULL) *dist = best ? bestd : -1;
  return best;
}
