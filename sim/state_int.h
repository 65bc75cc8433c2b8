/*
 * state_int.h - where a session's shared decisions live: the attempt
 * counter of each logical request, the arrival counter, the side-effect
 * ledger and the rate-limit buckets. In process (state_local.c, the
 * default) or in Redis (state_redis.c, `serve --state`), so that several
 * servers of one fleet act as one provider (docs/fleet.md).
 *
 * Every call that reads and writes shared state is one atomic decision:
 * one lock in process, one Redis command (a Lua script) in Redis. A call
 * that cannot reach the state returns SIM_ESTATE with the reason in err;
 * the server then answers with a fusebox error, never a provider fault.
 */
#ifndef FUSEBOX_STATE_INT_H
#define FUSEBOX_STATE_INT_H

#include "sim/sim_int.h"

typedef struct sim_state sim_state;

/* What a backend does; every function is thread-safe. */
typedef struct sim_state_ops {
  /* One arrival of key: its attempt number and its arrival number in the
     session. */
  int (*arrive)(sim_state *st, const char *key, int *attempt, long *n,
                char err[SIM_ERRLEN]);
  /* Takes one request and `tokens` tokens from the buckets (st->rl is not
     NULL). Returns 1 refused, 0 admitted, SIM_ESTATE. */
  int (*rl_take)(sim_state *st, int tokens, sim_rl_result *r, char err[SIM_ERRLEN]);
  /* As sim__ledger_post: returns the action (SIM_LEDGER_*) or SIM_ESTATE. */
  int (*ledger_post)(sim_state *st, const char *key, const char *name,
                     const char *fingerprint, int apply, int *count, char **result,
                     char err[SIM_ERRLEN]);
  /* As sim__ledger_lookup: 1 applied, 0 not, or SIM_ESTATE. */
  int (*ledger_lookup)(sim_state *st, const char *key, char **result,
                       char err[SIM_ERRLEN]);
  void (*free)(sim_state *st);
} sim_state_ops;

struct sim_state {
  const sim_state_ops *ops;
  sim_ratelimit *rl;     /* the scenario's limiter settings; NULL = none */
  int honour;            /* the ledger honours Idempotency-Key */
  char session[160];     /* "name/id" in Redis; "" in process */
  double age_ms;         /* how old the session was when this server joined */
  void *impl;            /* the backend's own data */
};

/*
 * The state in process: today's key map, ledger and token bucket. Takes
 * rl (NULL = no limit). The caller owns *out (sim__state_free).
 */
int sim__state_local_new(int honour, sim_ratelimit *rl, sim_state **out);

/* Options of a state in Redis. */
typedef struct sim_state_redis_opts {
  const char *url;       /* redis://HOST:PORT[/DB] */
  const char *session;   /* session name (required) */
  int fresh;             /* 1: start the session afresh */
  long ttl_ms;           /* keys expire this long after their last write */
} sim_state_redis_opts;

/*
 * Connects to Redis, joins (or starts) the session and loads the scripts.
 * Takes rl even on failure. Returns SIM_OK, SIM_EINVAL (a bad URL) or
 * SIM_ESTATE (Redis unreachable) with the reason in err. The caller owns
 * *out (sim__state_free).
 */
int sim__state_redis_new(const sim_state_redis_opts *o, int honour, sim_ratelimit *rl,
                         sim_state **out, char err[SIM_ERRLEN]);

/* Parses redis://HOST:PORT[/DB] (HOST may be [v6]); SIM_EINVAL with err. */
int sim__state_parse_url(const char *url, char *host, size_t host_cap, int *port,
                         int *db, char err[SIM_ERRLEN]);

/*
 * The state a server's options ask for: in Redis when o->state_url is set,
 * else in process; with the scenario's limiter (on env's clock) either way. The caller owns
 * *out. On error a negative code with the reason in err.
 */
int sim__state_open(const sim_server_opts *o, sim_scenario *sc, double scale,
                    const sim_env *env, sim_state **out, char err[SIM_ERRLEN]);
/* This server's name in a fleet: o->instance, else "host-pid". */
void sim__state_instance(const sim_server_opts *o, char *out, size_t cap);

/* Releases the state, its limiter included; NULL is a no-op. */
void sim__state_free(sim_state *st);

/* The error a server answers when the state is unreachable: status 500, a
   body of type `fusebox_state_unavailable` and the header X-Fusebox-Error,
   so no client mistakes it for the provider. Owned by the caller. */
sim_step *sim__state_error_step(const char *why);

#endif
