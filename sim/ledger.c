/*
 * ledger.c - the side-effect ledger behind the effect endpoint. It counts
 * how many times each operation really executed, which is what the
 * "no duplicate side effects" verdict judges. It can honour idempotency
 * keys (replay the stored result; same key with another payload -> 409) or
 * ignore them, so a client that relies on nothing else double-executes.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define LEDGER_MAX 100000 /* bounded: entries beyond this are not stored */

typedef struct ledger_entry {
  char *key;         /* Idempotency-Key, or "fp:<fingerprint>:<name>" when none */
  char *name;        /* the effect's name: a key is scoped by it */
  char fingerprint[17];
  int applied;       /* times executed */
  char *result;      /* JSON of the stored result */
} ledger_entry;

struct sim_ledger {
  pthread_mutex_t lock;
  int honour;
  long serial;
  ledger_entry *e;
  size_t n, cap;
};

/* A new ledger. Owned by the caller; NULL on allocation failure. */
sim_ledger *sim__ledger_new(int honour_keys) {
  sim_ledger *lg = calloc(1, sizeof *lg);
  if (lg == NULL) return NULL;
  lg->honour = honour_keys;
  pthread_mutex_init(&lg->lock, NULL);
  return lg;
}

/* Releases the ledger; NULL is a no-op. */
void sim__ledger_free(sim_ledger *lg) {
  if (lg == NULL) return;
  for (size_t i = 0; i < lg->n; i++) {
    free(lg->e[i].key);
    free(lg->e[i].name);
    free(lg->e[i].result);
  }
  free(lg->e);
  pthread_mutex_destroy(&lg->lock);
  free(lg);
}

/* The stored result of an executed effect, as JSON text (caller owns). */
char *sim__ledger_result(long serial, const char *name) {
  char id[32];
  snprintf(id, sizeof id, "eff_%ld", serial);
  cJSON *r = cJSON_CreateObject();
  if (r == NULL) return NULL;
  char *s = NULL;
  if (cJSON_AddStringToObject(r, "id", id) && cJSON_AddStringToObject(r, "name", name) &&
      cJSON_AddStringToObject(r, "status", "done"))
    s = cJSON_PrintUnformatted(r);
  cJSON_Delete(r);
  return s;
}

/* The entry of key and effect name (name NULL: the first applied entry of
   key, whatever its name: a lookup). */
static ledger_entry *find(sim_ledger *lg, const char *key, const char *name) {
  for (size_t i = 0; i < lg->n; i++)
    if (strcmp(lg->e[i].key, key) == 0 &&
        (name != NULL ? strcmp(lg->e[i].name, name) == 0 : lg->e[i].applied > 0))
      return &lg->e[i];
  return NULL;
}

static ledger_entry *add(sim_ledger *lg, const char *key, const char *name, const char *fp) {
  if (lg->n == lg->cap) {
    if (lg->cap >= LEDGER_MAX) return NULL;
    size_t nc = lg->cap ? lg->cap * 2 : 64;
    ledger_entry *ne = realloc(lg->e, nc * sizeof *ne);
    if (ne == NULL) return NULL;
    lg->e = ne;
    lg->cap = nc;
  }
  ledger_entry *e = &lg->e[lg->n];
  memset(e, 0, sizeof *e);
  e->key = strdup(key);
  e->name = strdup(name);
  if (e->key == NULL || e->name == NULL) {
    free(e->key);
    free(e->name);
    return NULL;
  }
  snprintf(e->fingerprint, sizeof e->fingerprint, "%s", fp);
  lg->n++;
  return e;
}

/* The entry an effect is filed under: its Idempotency-Key, or, without a
   key, its payload fingerprint and its name (the same body sent to two
   effects is two operations). Returns key or buf. */
const char *sim__ledger_key(const char *key, const char *name, const char *fingerprint,
                            char buf[SIM_LEDGER_KEYLEN]) {
  if (key != NULL) return key;
  snprintf(buf, SIM_LEDGER_KEYLEN, "fp:%s:%.256s", fingerprint, name ? name : "");
  return buf;
}

/* Executes (when apply) or replays an effect; see sim_int.h. */
int sim__ledger_post(sim_ledger *lg, const char *key, const char *name,
                     const char *fingerprint, int apply, int *count,
                     char **result) {
  char kbuf[SIM_LEDGER_KEYLEN];
  const char *k = sim__ledger_key(key, name, fingerprint, kbuf);
  int action;
  *result = NULL;
  pthread_mutex_lock(&lg->lock);
  /* keyed effects are scoped by name: charge_card sent with send_email's
     key is its own effect, not send_email's replay (issue 29) */
  ledger_entry *e = find(lg, k, name ? name : "");
  if (lg->honour && key != NULL && e != NULL && e->applied > 0 &&
      strcmp(e->fingerprint, fingerprint) != 0) {
    action = SIM_LEDGER_CONFLICT;
  } else if (lg->honour && key != NULL && e != NULL && e->applied > 0) {
    action = SIM_LEDGER_REPLAYED;
  } else if (!apply) {
    action = SIM_LEDGER_NOT_APPLIED;
  } else {
    /* Everything that can run out of memory comes before the commit, so an
       effect is either recorded with its result or not applied at all. */
    char *res = e != NULL && e->result != NULL ? NULL : sim__ledger_result(lg->serial + 1, name);
    char *copy = strdup(res != NULL ? res : e != NULL && e->result != NULL ? e->result : "");
    if ((res == NULL && (e == NULL || e->result == NULL)) || copy == NULL ||
        (e == NULL && (e = add(lg, k, name ? name : "", fingerprint)) == NULL)) {
      free(res);
      free(copy);
      pthread_mutex_unlock(&lg->lock);
      return SIM_ENOMEM;
    }
    if (e->result == NULL) {
      e->result = res;
      lg->serial++;
    } else {
      free(res);
    }
    e->applied++;
    *count = e->applied;
    *result = copy;
    pthread_mutex_unlock(&lg->lock);
    return SIM_LEDGER_APPLIED;
  }
  *count = e ? e->applied : 1;
  if (e != NULL && e->result != NULL && (*result = strdup(e->result)) == NULL) {
    pthread_mutex_unlock(&lg->lock);
    return SIM_ENOMEM;
  }
  pthread_mutex_unlock(&lg->lock);
  return action;
}

/* 1 if key was applied (with *result owned by the caller), else 0. */
int sim__ledger_lookup(sim_ledger *lg, const char *key, char **result) {
  int applied = 0;
  *result = NULL;
  pthread_mutex_lock(&lg->lock);
  ledger_entry *e = find(lg, key, NULL);
  if (e != NULL && e->applied > 0) {
    applied = 1;
    if (e->result) *result = strdup(e->result);
  }
  pthread_mutex_unlock(&lg->lock);
  return applied;
}
