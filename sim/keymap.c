/*
 * keymap.c - counts arrivals per logical request key, so each arrival knows
 * which attempt of its request it is.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define KEYMAP_BUCKETS 4096
#define KEYMAP_MAX_KEYS 1000000 /* bounded: a runaway client cannot eat memory */

typedef struct entry {
  struct entry *next;
  int count;
  char key[]; /* NUL-terminated */
} entry;

struct sim_keymap {
  pthread_mutex_t lock;
  long nkeys;
  entry *bucket[KEYMAP_BUCKETS];
};

static size_t hash(const char *s) {
  size_t h = 5381;
  for (; *s; s++) h = h * 33 + (unsigned char)*s;
  return h % KEYMAP_BUCKETS;
}

/* A new, empty map. Owned by the caller; NULL on allocation failure. */
sim_keymap *sim__keymap_new(void) {
  sim_keymap *m = calloc(1, sizeof *m);
  if (m != NULL) pthread_mutex_init(&m->lock, NULL);
  return m;
}

/* Releases the map; NULL is a no-op. */
void sim__keymap_free(sim_keymap *m) {
  if (m == NULL) return;
  for (size_t i = 0; i < KEYMAP_BUCKETS; i++) {
    entry *e = m->bucket[i];
    while (e != NULL) {
      entry *next = e->next;
      free(e);
      e = next;
    }
  }
  pthread_mutex_destroy(&m->lock);
  free(m);
}

/* Adds one arrival for key; returns its new count, or SIM_ENOMEM. */
int sim__keymap_bump(sim_keymap *m, const char *key) {
  size_t b = hash(key);
  int count = SIM_ENOMEM;
  pthread_mutex_lock(&m->lock);
  entry *e = m->bucket[b];
  while (e != NULL && strcmp(e->key, key) != 0) e = e->next;
  if (e == NULL && m->nkeys < KEYMAP_MAX_KEYS) {
    size_t len = strlen(key);
    e = malloc(sizeof *e + len + 1);
    if (e != NULL) {
      memcpy(e->key, key, len + 1);
      e->count = 0;
      e->next = m->bucket[b];
      m->bucket[b] = e;
      m->nkeys++;
    }
  }
  if (e != NULL) count = ++e->count;
  pthread_mutex_unlock(&m->lock);
  return count;
}
