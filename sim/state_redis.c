/*
 * state_redis.c - the state of a fleet in Redis (`serve --state`), so that
 * several servers serving one scenario act as one provider: a request's
 * second attempt is attempt 2 on whichever server it lands, one rate limit
 * holds for all of them, an effect applied on one is applied for all.
 *
 * Every decision that reads and writes is one Lua script run inside Redis
 * (EVALSHA), so it is atomic across servers; the rate limiter reads Redis's
 * own clock (TIME), so the servers' clocks do not matter. Keys live under
 * "fusebox:<session>:<id>:" and expire ttl_ms after their last write.
 *
 * A small pool of connections serves the server's threads. A failed call
 * drops its connection and returns SIM_ESTATE; the next call reconnects
 * (at most every RECONNECT_MS per connection), so a server recovers by
 * itself when Redis is back.
 *
 * A call that writes carries a deadline on Redis's clock (DEADLINE_MS
 * after it is sent, shorter than the command timeout): a script that Redis
 * runs after it writes nothing and answers "late". So a call the server
 * gave up on (a Redis busy past the timeout: the client got a 500
 * state_unavailable) is never applied behind its back: no attempt counted,
 * no effect applied, no bucket token taken (issue 29). Redis's clock is
 * read from every answer (offset_ms); a "late" answer that still came in
 * time (Redis's clock jumped) is retried once with a fresh deadline.
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/state_int.h"

#define POOL 4               /* connections per server */
#define RECONNECT_MS 200.0   /* a dead connection is retried this often */
#define CONNECT_TIMEOUT_MS 500
#define COMMAND_TIMEOUT_MS 2000
#define DEADLINE_MS 1500     /* a write runs within this of its sending, or not at all */
#define KEYCAP 640           /* prefix (< 200) + tag + a key of SIM_KEY_RAW_MAX or a digest */

/* ---------------------------------------------------------- scripts */

enum { S_SESSION, S_ARRIVE, S_RATE, S_POST, NSCRIPTS };

static const char *const SCRIPTS[NSCRIPTS] = {
    /* S_SESSION: KEYS meta; ARGV fresh, new id, ttl. Joins the session (or
       starts it) and answers {id, start ms, now ms} on Redis's clock. */
    "local t = redis.call('TIME')\n"
    "local now = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))\n"
    "if ARGV[1] ~= '1' then\n"
    "  local m = redis.call('HMGET', KEYS[1], 'id', 'start')\n"
    "  if m[1] then\n"
    "    redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
    "    return {m[1], m[2], now}\n"
    "  end\n"
    "end\n"
    "redis.call('DEL', KEYS[1])\n"
    "redis.call('HSET', KEYS[1], 'id', ARGV[2], 'start', now)\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[3])\n"
    "return {ARGV[2], now, now}\n",

    /* S_ARRIVE: KEYS attempt counter, arrival counter, meta; ARGV ttl,
       deadline. One arrival: {attempt of this key, arrival number in the
       session, now}, or {-1, now} past the deadline (nothing written). */
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "if now > tonumber(ARGV[2]) then return {-1, tostring(now)} end\n"
    "local a = redis.call('INCR', KEYS[1])\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[1])\n"
    "local n = redis.call('INCR', KEYS[2])\n"
    "redis.call('PEXPIRE', KEYS[2], ARGV[1])\n"
    "redis.call('PEXPIRE', KEYS[3], ARGV[1])\n"
    "return {a, n, tostring(now)}\n",

    /* S_RATE: KEYS bucket; ARGV rpm, tpm, req_cap, tok_cap, scale, tokens,
       ttl, deadline. A token bucket over requests and tokens refilled
       continuously in scenario time on Redis's clock: {refused, req left,
       tok left, wait s, now}, or {-1, now} past the deadline. */
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000\n"
    "if now > tonumber(ARGV[8]) then return {-1, tostring(math.floor(now))} end\n"
    "local rpm, tpm = tonumber(ARGV[1]), tonumber(ARGV[2])\n"
    "local rcap, tcap = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local scale, tokens = tonumber(ARGV[5]), tonumber(ARGV[6])\n"
    "local b = redis.call('HMGET', KEYS[1], 'req', 'tok', 'last')\n"
    "local req = tonumber(b[1]) or rcap\n"
    "local tok = tonumber(b[2]) or tcap\n"
    "local last = tonumber(b[3]) or now\n"
    "local el = math.max(0, now - last) / 1000 / scale\n"
    "if rpm > 0 then req = math.min(rcap, req + el * rpm / 60) end\n"
    "if tpm > 0 then tok = math.min(tcap, tok + el * tpm / 60) end\n"
    "local wr, wt = 0, 0\n"
    "if rpm > 0 and req < 1 then wr = (1 - req) * 60 / rpm end\n"
    "if tpm > 0 and tok < tokens then wt = (tokens - tok) * 60 / tpm end\n"
    "local refused = 0\n"
    "if wr > 0 or wt > 0 then refused = 1 else\n"
    "  if rpm > 0 then req = req - 1 end\n"
    "  if tpm > 0 then tok = tok - tokens end\n"
    "end\n"
    "redis.call('HSET', KEYS[1], 'req', tostring(req), 'tok', tostring(tok), 'last', tostring(now))\n"
    "redis.call('PEXPIRE', KEYS[1], ARGV[7])\n"
    "return {refused, tostring(req), tostring(tok), tostring(math.max(wr, wt)),\n"
    "        tostring(math.floor(now))}\n",

    /* S_POST: KEYS entry (of key and name), serial, lookup index (of key);
       ARGV honour, has key, fingerprint, apply, name, ttl, deadline. The ledger.c rule in one step: the fingerprint
       and the result are set only if absent. {action, count, serial, name,
       now}, or {-1, now} past the deadline (nothing applied). */
    "local t = redis.call('TIME')\n"
    "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    "if now > tonumber(ARGV[7]) then return {-1, tostring(now)} end\n"
    "local e = redis.call('HMGET', KEYS[1], 'fp', 'applied', 'serial', 'name')\n"
    "local applied = tonumber(e[2]) or 0\n"
    "local keyed = ARGV[1] == '1' and ARGV[2] == '1' and applied > 0\n"
    "local action\n"
    "if keyed and e[1] ~= ARGV[3] then action = 3\n"
    "elseif keyed then action = 2\n"
    "elseif ARGV[4] ~= '1' then action = 4\n"
    "else\n"
    "  action = 1\n"
    "  redis.call('HSETNX', KEYS[1], 'fp', ARGV[3])\n"
    "  applied = redis.call('HINCRBY', KEYS[1], 'applied', 1)\n"
    "  if not e[3] then\n"
    "    e[3] = tostring(redis.call('INCR', KEYS[2]))\n"
    "    e[4] = ARGV[5]\n"
    "    redis.call('HSETNX', KEYS[1], 'serial', e[3])\n"
    "    redis.call('HSETNX', KEYS[1], 'name', e[4])\n"
    "  end\n"
    "  redis.call('HSETNX', KEYS[3], 'serial', e[3])\n"
    "  redis.call('HSETNX', KEYS[3], 'name', e[4])\n"
    "  redis.call('HINCRBY', KEYS[3], 'applied', 1)\n"
    "  redis.call('PEXPIRE', KEYS[3], ARGV[6])\n"
    "  redis.call('PEXPIRE', KEYS[1], ARGV[6])\n"
    "  redis.call('PEXPIRE', KEYS[2], ARGV[6])\n"
    "end\n"
    "if applied < 1 then applied = 1 end\n"
    "return {action, applied, e[3] or false, e[4] or false, tostring(now)}\n",
};

/* ------------------------------------------------------------ pool */

typedef struct slot {
  pthread_mutex_t lock;
  redisContext *c;     /* NULL: not connected */
  double retry_at;     /* monotonic ms before which no reconnect is tried */
} slot;

typedef struct rstate {
  char host[256];
  int port, db;
  long ttl_ms;
  char prefix[200];    /* "fusebox:<name>:<id>:" */
  char meta[200];      /* "fusebox:<name>:meta" */
  char sha[NSCRIPTS][48];
  unsigned next;       /* round robin over the pool */
  long long offset_ms; /* atomic: Redis's clock (ms) minus sim_now_ms(), last seen */
  slot pool[POOL];
} rstate;

static void drop(slot *s) {
  if (s->c != NULL) redisFree(s->c);
  s->c = NULL;
  s->retry_at = sim_now_ms() + RECONNECT_MS;
}

/* Connects s (locked) and loads the scripts; 0, or SIM_ESTATE with err. */
static int connect_slot(rstate *r, slot *s, char err[SIM_ERRLEN]) {
  if (s->c != NULL) return SIM_OK;
  if (sim_now_ms() < s->retry_at) {
    snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d is unreachable (reconnecting)", r->host, r->port);
    return SIM_ESTATE;
  }
  struct timeval ct = {0, CONNECT_TIMEOUT_MS * 1000};
  struct timeval rt = {COMMAND_TIMEOUT_MS / 1000, (COMMAND_TIMEOUT_MS % 1000) * 1000};
  s->c = redisConnectWithTimeout(r->host, r->port, ct);
  if (s->c == NULL || s->c->err) {
    snprintf(err, SIM_ERRLEN, "cannot connect to Redis at %.64s:%d: %.120s", r->host, r->port,
             s->c ? s->c->errstr : "out of memory");
    drop(s);
    return SIM_ESTATE;
  }
  redisSetTimeout(s->c, rt);
  redisReply *rep = NULL;
  if (r->db != 0) {
    rep = redisCommand(s->c, "SELECT %d", r->db);
    if (rep == NULL || rep->type == REDIS_REPLY_ERROR) goto bad;
    freeReplyObject(rep);
  }
  for (int i = 0; i < NSCRIPTS; i++) {
    rep = redisCommand(s->c, "SCRIPT LOAD %s", SCRIPTS[i]);
    if (rep == NULL || rep->type != REDIS_REPLY_STRING || rep->len >= sizeof r->sha[i]) goto bad;
    /* The digest is the same on every connection: it is stored by the
       first (made before any server thread runs) and only read after. */
    if (r->sha[i][0] == '\0') memcpy(r->sha[i], rep->str, rep->len + 1);
    freeReplyObject(rep);
  }
  return SIM_OK;
bad:
  snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d refused the set-up: %.120s", r->host, r->port,
           rep && rep->type == REDIS_REPLY_ERROR ? rep->str : s->c->errstr);
  if (rep) freeReplyObject(rep);
  drop(s);
  return SIM_ESTATE;
}

/* Takes a connection of the pool, connected, locked; NULL with err. */
static slot *take(rstate *r, char err[SIM_ERRLEN]) {
  slot *s = &r->pool[__atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED) % POOL];
  pthread_mutex_lock(&s->lock);
  if (connect_slot(r, s, err) != SIM_OK) {
    pthread_mutex_unlock(&s->lock);
    return NULL;
  }
  return s;
}

/* 1 when s's last command failed because Redis closed the connection (a
   restart, an idle timeout), not because it was slow. */
static int lost(const slot *s, int saved_errno) {
  if (s->c->err == REDIS_ERR_EOF) return 1;
  return s->c->err == REDIS_ERR_IO && saved_errno != EAGAIN && saved_errno != EWOULDBLOCK &&
         saved_errno != EINTR && saved_errno != 0;
}

/*
 * Sends one command on s (locked, connected). A command on a connection
 * Redis had closed (it restarted: each of the pool's connections failed
 * once, a 500 each, issue 29) is sent again, once, on a fresh connection
 * made at once: a closed connection ran nothing. A timeout is not retried
 * (Redis may be running the command). Returns the reply or NULL; s->c is
 * then NULL only when the reconnection failed.
 */
static redisReply *command(rstate *r, slot *s, int argc, const char **argv, const size_t *lens,
                           char err[SIM_ERRLEN]) {
  errno = 0;
  redisReply *rep = redisCommandArgv(s->c, argc, argv, lens);
  if (rep != NULL || !lost(s, errno)) return rep;
  redisFree(s->c);
  s->c = NULL;
  s->retry_at = 0;
  if (connect_slot(r, s, err) != SIM_OK) return NULL;
  return redisCommandArgv(s->c, argc, argv, lens);
}

/*
 * Runs script `which` with nkeys keys then the args (argv after the script
 * slot): one round trip (two when the connection had been closed). Returns
 * the reply (caller frees) or NULL with err, having dropped the connection
 * when it failed.
 */
static redisReply *run(rstate *r, int which, int nkeys, int nargs, const char **args,
                       char err[SIM_ERRLEN]) {
  const char *argv[16];
  size_t lens[16];
  char nk[8];
  snprintf(nk, sizeof nk, "%d", nkeys);
  argv[0] = "EVALSHA";
  argv[2] = nk;
  for (int i = 0; i < nargs && i < 13; i++) argv[3 + i] = args[i];
  int argc = 3 + (nargs < 13 ? nargs : 13);
  for (int i = 0; i < argc; i++) lens[i] = i == 1 ? 0 : strlen(argv[i]);
  slot *s = take(r, err);
  if (s == NULL) return NULL;
  argv[1] = r->sha[which];
  lens[1] = strlen(argv[1]);
  redisReply *rep = command(r, s, argc, argv, lens, err);
  if (s->c == NULL) { /* closed, and no new connection: err says why */
    pthread_mutex_unlock(&s->lock);
    return NULL;
  }
  if (rep != NULL && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0) {
    freeReplyObject(rep); /* scripts flushed behind our back: send the text */
    argv[0] = "EVAL";
    argv[1] = SCRIPTS[which];
    lens[0] = 4;
    lens[1] = strlen(argv[1]);
    rep = redisCommandArgv(s->c, argc, argv, lens);
  }
  if (rep == NULL) {
    snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d: %.120s", r->host, r->port,
             s->c->errstr[0] ? s->c->errstr : "no reply");
    drop(s);
  } else if (rep->type == REDIS_REPLY_ERROR) {
    snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d: %.120s", r->host, r->port, rep->str);
    freeReplyObject(rep);
    rep = NULL;
  }
  pthread_mutex_unlock(&s->lock);
  return rep;
}

static int elem_int(const redisReply *rep, size_t i, long long *out) {
  if (rep->type != REDIS_REPLY_ARRAY || i >= rep->elements) return -1;
  const redisReply *e = rep->element[i];
  if (e->type == REDIS_REPLY_INTEGER) *out = e->integer;
  else if (e->type == REDIS_REPLY_STRING) *out = strtoll(e->str, NULL, 10);
  else return -1;
  return 0;
}

static const char *elem_str(const redisReply *rep, size_t i) {
  if (rep->type != REDIS_REPLY_ARRAY || i >= rep->elements) return NULL;
  const redisReply *e = rep->element[i];
  return e->type == REDIS_REPLY_STRING ? e->str : NULL;
}

/* 1 with element i read as a number a bucket can hold (finite, within
   1e15: no cast of it overflows), else 0 (fuzz_redis: "-1e23"). */
static int elem_level(const redisReply *rep, size_t i, double *out) {
  const char *s = elem_str(rep, i);
  if (s == NULL) return 0;
  *out = strtod(s, NULL);
  return isfinite(*out) && fabs(*out) <= 1e15;
}

static int bad_reply(redisReply *rep, char err[SIM_ERRLEN]) {
  freeReplyObject(rep);
  snprintf(err, SIM_ERRLEN, "Redis answered a script with an unexpected reply");
  return SIM_ESTATE;
}

/* Learns Redis's clock from `now` (its ms) read in an answer just come. */
static void learn_clock(rstate *r, const char *now) {
  if (now == NULL) return;
  long long t = strtoll(now, NULL, 10);
  /* Not a clock (beyond 2^50 ms, 35,000 years): ignored, so neither this
     difference nor a deadline made from it overflows (fuzz_redis). */
  if (t < 0 || t > (1LL << 50)) return;
  long long off = t - (long long)sim_now_ms();
  __atomic_store_n(&r->offset_ms, off, __ATOMIC_RELAXED);
}

/*
 * Runs a script that writes (its last argument the deadline, appended
 * here): once, and once more if Redis ran it past its deadline although
 * the answer came in time (its clock moved). Returns the reply, whose last
 * element (Redis's now) has been read, or NULL with err.
 */
static redisReply *run_timed(rstate *r, int which, int nkeys, int nargs, const char **args,
                             char err[SIM_ERRLEN]) {
  const char *a[16];
  char dl[24];
  for (int i = 0; i < nargs && i < 15; i++) a[i] = args[i];
  a[nargs] = dl;
  for (int tries = 0; tries < 2; tries++) {
    long long due = (long long)sim_now_ms() + __atomic_load_n(&r->offset_ms, __ATOMIC_RELAXED) +
                    DEADLINE_MS;
    snprintf(dl, sizeof dl, "%lld", due);
    redisReply *rep = run(r, which, nkeys, nargs + 1, a, err);
    if (rep == NULL) return NULL;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 2) return rep; /* bad_reply's */
    learn_clock(r, elem_str(rep, rep->elements - 1));
    long long first;
    if (elem_int(rep, 0, &first) != 0 || first != -1) return rep;
    freeReplyObject(rep); /* late: nothing was written */
  }
  snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d ran the call after its deadline (clock moved?)",
           r->host, r->port);
  return NULL;
}

/* ------------------------------------------------------------- ops */

/*
 * The Redis key name of `key` under the session: prefix, tag, then the key
 * as it is when it has at most SIM_KEY_RAW_MAX bytes, else "#" and its
 * SHA-256 (sim__key_digest). A key name was cut at KEYCAP bytes before, so
 * two long Idempotency-Keys sharing a prefix were one effect (issue 29).
 * A key that starts with '#' is digested too, so no short key can take a
 * long one's name.
 */
static void key_name(const rstate *r, const char *tag, const char *key, char out[KEYCAP]) {
  size_t n = strlen(key);
  if (n <= SIM_KEY_RAW_MAX && key[0] != '#') {
    snprintf(out, KEYCAP, "%s%s%s", r->prefix, tag, key);
    return;
  }
  char d[65];
  sim__key_digest(key, n, d);
  snprintf(out, KEYCAP, "%s%s#%s", r->prefix, tag, d);
}

static int r_arrive(sim_state *st, const char *key, int *attempt, long *n,
                    char err[SIM_ERRLEN]) {
  rstate *r = st->impl;
  char k1[KEYCAP], k2[KEYCAP], ttl[24];
  key_name(r, "a:", key, k1);
  snprintf(k2, sizeof k2, "%sarrivals", r->prefix);
  snprintf(ttl, sizeof ttl, "%ld", r->ttl_ms);
  const char *args[] = {k1, k2, r->meta, ttl};
  redisReply *rep = run_timed(r, S_ARRIVE, 3, 4, args, err);
  if (rep == NULL) return SIM_ESTATE;
  long long a, nn;
  /* INCR counts from 1: anything less is no answer of the script's (and
     (int) of a large negative one is any int at all: fuzz_redis) */
  if (elem_int(rep, 0, &a) || elem_int(rep, 1, &nn) || a < 1 || nn < 1)
    return bad_reply(rep, err);
  freeReplyObject(rep);
  *attempt = a > 1000000000LL ? 1000000000 : (int)a;
  *n = (long)nn;
  return SIM_OK;
}

static int r_rl_take(sim_state *st, int tokens, sim_rl_result *res, char err[SIM_ERRLEN]) {
  rstate *r = st->impl;
  sim_rl_conf cf;
  sim__ratelimit_conf(st->rl, &cf);
  char k[KEYCAP], a[7][32];
  snprintf(k, sizeof k, "%srl", r->prefix);
  double v[5] = {cf.rpm, cf.tpm, cf.req_cap, cf.tok_cap, cf.scale};
  for (int i = 0; i < 5; i++) snprintf(a[i], sizeof a[i], "%.17g", v[i]);
  snprintf(a[5], sizeof a[5], "%d", tokens);
  snprintf(a[6], sizeof a[6], "%ld", r->ttl_ms);
  const char *args[] = {k, a[0], a[1], a[2], a[3], a[4], a[5], a[6]};
  redisReply *rep = run_timed(r, S_RATE, 1, 8, args, err);
  if (rep == NULL) return SIM_ESTATE;
  long long refused;
  double req, tok, wait;
  /* a bucket holds 0..cap (the script never takes more than is there); a
     level past it would make a reset time no integer holds (fuzz_redis) */
  if (elem_int(rep, 0, &refused) || !elem_level(rep, 1, &req) || !elem_level(rep, 2, &tok) ||
      !elem_level(rep, 3, &wait) || wait < 0 || req < 0 || tok < 0 ||
      (cf.rpm > 0 && req > cf.req_cap * (1 + 1e-9) + 1e-9) ||
      (cf.tpm > 0 && tok > cf.tok_cap * (1 + 1e-9) + 1e-9))
    return bad_reply(rep, err);
  sim__ratelimit_answer(st->rl, refused != 0, wait, req, tok, res);
  freeReplyObject(rep);
  return refused != 0;
}

static int r_post(sim_state *st, const char *key, const char *name, const char *fp,
                  int apply, int *count, char **result, char err[SIM_ERRLEN]) {
  rstate *r = st->impl;
  *result = NULL;
  char kbuf[SIM_LEDGER_KEYLEN], k1[KEYCAP], k2[KEYCAP], k3[KEYCAP], ttl[24], tag[160];
  const char *lk = sim__ledger_key(key, name, fp, kbuf);
  /* the entry is scoped by the effect's name (length-prefixed: no name and
     key can be read two ways); the lookup index by the key alone */
  if (name == NULL) name = "";
  snprintf(tag, sizeof tag, "l:%zu:%.128s:", strlen(name), name);
  key_name(r, tag, lk, k1);
  key_name(r, "lk:", lk, k3);
  snprintf(k2, sizeof k2, "%sserial", r->prefix);
  snprintf(ttl, sizeof ttl, "%ld", r->ttl_ms);
  const char *args[] = {k1, k2, k3, st->honour ? "1" : "0", key ? "1" : "0", fp,
                        apply ? "1" : "0", name, ttl};
  redisReply *rep = run_timed(r, S_POST, 3, 9, args, err);
  if (rep == NULL) return SIM_ESTATE;
  long long action, applied;
  if (elem_int(rep, 0, &action) || elem_int(rep, 1, &applied) || action < 1 || action > 4)
    return bad_reply(rep, err);
  const char *serial = elem_str(rep, 2), *ename = elem_str(rep, 3);
  if (serial != NULL && ename != NULL) {
    *result = sim__ledger_result(strtol(serial, NULL, 10), ename);
  }
  *count = (int)applied;
  freeReplyObject(rep);
  return (int)action;
}

static int r_lookup(sim_state *st, const char *key, char **result, char err[SIM_ERRLEN]) {
  rstate *r = st->impl;
  *result = NULL;
  char k[KEYCAP];
  key_name(r, "lk:", key, k);
  slot *s = take(r, err);
  if (s == NULL) return SIM_ESTATE;
  const char *argv[] = {"HMGET", k, "applied", "serial", "name"};
  size_t lens[] = {5, strlen(k), 7, 6, 4};
  redisReply *rep = command(r, s, 5, argv, lens, err); /* a read: one command */
  if (rep == NULL && s->c != NULL) {
    snprintf(err, SIM_ERRLEN, "Redis at %.64s:%d: %.120s", r->host, r->port,
             s->c->errstr[0] ? s->c->errstr : "no reply");
    drop(s);
  }
  pthread_mutex_unlock(&s->lock);
  if (rep == NULL) return SIM_ESTATE;
  long long applied = 0;
  if (elem_str(rep, 0) != NULL) applied = strtoll(elem_str(rep, 0), NULL, 10);
  const char *serial = elem_str(rep, 1), *name = elem_str(rep, 2);
  if (applied > 0 && serial != NULL && name != NULL)
    *result = sim__ledger_result(strtol(serial, NULL, 10), name);
  freeReplyObject(rep);
  return applied > 0;
}

static void r_free(sim_state *st) {
  rstate *r = st->impl;
  if (r != NULL) {
    for (int i = 0; i < POOL; i++) {
      if (r->pool[i].c) redisFree(r->pool[i].c);
      pthread_mutex_destroy(&r->pool[i].lock);
    }
    free(r);
  }
  free(st);
}

static const sim_state_ops redis_ops = {r_arrive, r_rl_take, r_post, r_lookup, r_free};

/* --------------------------------------------------------- set-up */

/* Parses redis://HOST:PORT[/DB]; see state_int.h. */
int sim__state_parse_url(const char *url, char *host, size_t host_cap, int *port, int *db,
                         char err[SIM_ERRLEN]) {
  /* redis://USER:PASSWORD@...: never echoed (stderr, CI logs); not used */
  const char *at = url && strncmp(url, "redis://", 8) == 0 ? strchr(url + 8, '@') : NULL;
  if (at != NULL && (strchr(url + 8, '/') == NULL || strchr(url + 8, '/') > at)) {
    snprintf(err, SIM_ERRLEN,
             "bad state URL 'redis://[redacted]@%.80s': credentials in the URL are not "
             "supported (use a Redis on loopback without AUTH): redis://HOST:PORT[/DB]",
             at + 1);
    return SIM_EINVAL;
  }
  const char *p = url && strncmp(url, "redis://", 8) == 0 ? url + 8 : NULL;
  const char *hend = NULL, *rest = NULL;
  if (p != NULL && *p == '[') {
    hend = strchr(p, ']');
    if (hend != NULL) rest = hend + 1;
    p++;
  } else if (p != NULL) {
    hend = strchr(p, ':');
    rest = hend;
  }
  if (p == NULL || hend == NULL || rest == NULL || *rest != ':' || hend == p ||
      (size_t)(hend - p) >= host_cap) {
    snprintf(err, SIM_ERRLEN, "bad state URL '%s': use redis://HOST:PORT[/DB]",
             url ? url : "");
    return SIM_EINVAL;
  }
  memcpy(host, p, (size_t)(hend - p));
  host[hend - p] = '\0';
  char *end;
  errno = 0;
  long pt = strtol(rest + 1, &end, 10);
  long d = 0;
  if (end != rest + 1 && *end == '/') {
    char *e2;
    d = strtol(end + 1, &e2, 10);
    if (e2 == end + 1 || *e2 != '\0' || d < 0 || d > 1000) end = NULL;
    else end = e2;
  }
  if (end == NULL || end == rest + 1 || *end != '\0' || errno || pt < 1 || pt > 65535) {
    snprintf(err, SIM_ERRLEN, "bad state URL '%s': use redis://HOST:PORT[/DB]", url);
    return SIM_EINVAL;
  }
  *port = (int)pt;
  *db = (int)d;
  return SIM_OK;
}

/* Connects, joins the session, loads the scripts; see state_int.h. */
int sim__state_redis_new(const sim_state_redis_opts *o, int honour, sim_ratelimit *rl,
                         sim_state **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  sim_state *st = calloc(1, sizeof *st);
  rstate *r = calloc(1, sizeof *r);
  if (st == NULL || r == NULL) {
    free(st);
    free(r);
    sim__ratelimit_free(rl);
    return SIM_ENOMEM;
  }
  st->ops = &redis_ops;
  st->impl = r;
  st->rl = rl;
  st->honour = honour;
  for (int i = 0; i < POOL; i++) pthread_mutex_init(&r->pool[i].lock, NULL);
  r->ttl_ms = o->ttl_ms > 0 ? o->ttl_ms : 3600L * 1000;
  int rc = sim__state_parse_url(o->url, r->host, sizeof r->host, &r->port, &r->db, err);
  /* The name goes into Redis key names: a ':' would let one session's keys
     lie inside another's, a '*' match others in a SCAN, a newline or an
     ESC reach a terminal (issue 29). Control sessions obey the same rule. */
  if (rc == SIM_OK && !sim_session_name_ok(o->session)) {
    snprintf(err, SIM_ERRLEN,
             "bad fleet session name: use 1 to %d of A-Z a-z 0-9 . _ - (no ':', '*', blanks "
             "or control characters)", SIM_SESSION_NAME_MAX);
    rc = SIM_EINVAL;
  }
  if (rc != SIM_OK) goto fail;
  snprintf(r->meta, sizeof r->meta, "fusebox:%s:meta", o->session);

  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  char fresh_id[24];
  snprintf(fresh_id, sizeof fresh_id, "%08lx%04x", (unsigned long)(ts.tv_sec ^ ts.tv_nsec),
           (unsigned)getpid() & 0xffff);
  char ttl[24];
  snprintf(ttl, sizeof ttl, "%ld", r->ttl_ms);
  const char *args[] = {r->meta, o->fresh ? "1" : "0", fresh_id, ttl};
  redisReply *rep = run(r, S_SESSION, 1, 4, args, err);
  rc = SIM_ESTATE;
  if (rep == NULL) goto fail;
  const char *id = elem_str(rep, 0), *start = elem_str(rep, 1), *now = elem_str(rep, 2);
  if (id == NULL || start == NULL || now == NULL || strlen(id) > 40) {
    bad_reply(rep, err);
    goto fail;
  }
  /* the session's age starts the server's clock: "nan" or 1e308 from a
     Redis that is not ours would make every trace time NaN (fuzz_redis) */
  double age = strtod(now, NULL) - strtod(start, NULL);
  if (!isfinite(age) || fabs(age) > (double)(1LL << 50)) {
    bad_reply(rep, err);
    goto fail;
  }
  learn_clock(r, now);
  snprintf(r->prefix, sizeof r->prefix, "fusebox:%s:%s:", o->session, id);
  snprintf(st->session, sizeof st->session, "%s/%s", o->session, id);
  st->age_ms = age < 0 ? 0 : age;
  freeReplyObject(rep);
  *out = st;
  return SIM_OK;
fail:
  r_free(st);
  sim__ratelimit_free(rl);
  return rc;
}
