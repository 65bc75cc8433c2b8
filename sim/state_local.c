/*
 * state_local.c - the state in process, as it always was: the key map
 * (keymap.c), the ledger (ledger.c) and the token bucket (ratelimit.c),
 * each behind its own lock. It never fails with SIM_ESTATE.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sim/state_int.h"

typedef struct local {
  sim_keymap *keys;
  sim_ledger *ledger;
  pthread_mutex_t lock;
  long arrivals;
} local;

static int l_arrive(sim_state *st, const char *key, int *attempt, long *n,
                    char err[SIM_ERRLEN]) {
  (void)err;
  local *l = st->impl;
  *attempt = sim__keymap_bump(l->keys, key);
  pthread_mutex_lock(&l->lock);
  *n = ++l->arrivals;
  pthread_mutex_unlock(&l->lock);
  return SIM_OK;
}

static int l_rl_take(sim_state *st, int tokens, sim_rl_result *r, char err[SIM_ERRLEN]) {
  (void)err;
  return sim__ratelimit_take(st->rl, tokens, r);
}

static int l_post(sim_state *st, const char *key, const char *name, const char *fp,
                  int apply, int *count, char **result, char err[SIM_ERRLEN]) {
  (void)err;
  local *l = st->impl;
  return sim__ledger_post(l->ledger, key, name, fp, apply, count, result);
}

static int l_lookup(sim_state *st, const char *key, char **result, char err[SIM_ERRLEN]) {
  (void)err;
  local *l = st->impl;
  return sim__ledger_lookup(l->ledger, key, result);
}

static void l_free(sim_state *st) {
  local *l = st->impl;
  if (l != NULL) {
    sim__keymap_free(l->keys);
    sim__ledger_free(l->ledger);
    pthread_mutex_destroy(&l->lock);
    free(l);
  }
  free(st);
}

static const sim_state_ops local_ops = {l_arrive, l_rl_take, l_post, l_lookup, l_free};

/* The state in process; see state_int.h. */
int sim__state_local_new(int honour, sim_ratelimit *rl, sim_state **out) {
  *out = NULL;
  sim_state *st = calloc(1, sizeof *st);
  local *l = calloc(1, sizeof *l);
  if (st == NULL || l == NULL) {
    free(st);
    free(l);
    sim__ratelimit_free(rl);
    return SIM_ENOMEM;
  }
  pthread_mutex_init(&l->lock, NULL);
  st->ops = &local_ops;
  st->impl = l;
  st->rl = rl;
  st->honour = honour;
  l->keys = sim__keymap_new();
  l->ledger = sim__ledger_new(honour);
  if (l->keys == NULL || l->ledger == NULL) {
    l_free(st);
    sim__ratelimit_free(rl);
    return SIM_ENOMEM;
  }
  *out = st;
  return SIM_OK;
}
