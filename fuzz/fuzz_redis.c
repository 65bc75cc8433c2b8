/*
 * fuzz_redis.c - the fleet state in Redis (sim/state_redis.c) against
 * whatever a Redis may answer. This file is the hiredis the target links
 * (libhiredis is not linked): redisConnectWithTimeout, redisCommand,
 * redisCommandArgv, ... hand state_redis.c reply trees (hiredis's public
 * redisReply: type, integer, str/len, element[]) built from the input, or
 * a failed connection or command, so every reply state_redis.c reads -
 * SCRIPT LOAD, SELECT, the session join, arrivals, the rate limit, the
 * effect ledger and its lookup - comes from the fuzzer, through the real
 * code, with no socket.
 *
 * Input layout: byte 0 picks the options (bit 0 fresh session, bit 1 a
 * URL with a database, so SELECT is sent; bit 2 Idempotency-Key honoured;
 * bit 3 a rate limit), then a sequence of operations after the session
 * join, each one byte (op % 4: arrive, rate limit take, effect post,
 * effect lookup; bits 2-3 pick one of four keys, bit 4 apply), up to the
 * byte 0xff; then the replies, taken in the order the code asks for them.
 * One reply, by its first byte b:
 *   b % 10: 0 string, 1 array, 2 integer, 3 nil, 4 status, 5 error,
 *           6 error "NOSCRIPT ...", 7 no reply: connection closed (EOF),
 *           8 no reply: timed out (EAGAIN), 9 string of a number
 *   string, status, error: a length byte, then that many bytes
 *   integer: 8 bytes little-endian; number: one of a table of edge values
 *   array: a count byte (% 8), then that many replies (depth at most 4)
 * A connection attempt takes one byte first: 0 refused, 1 out of memory,
 * else connected. Input exhausted: every command times out.
 *
 * Checks beyond no crash: each operation returns only the codes its
 * sim_state_ops contract names, SIM_ESTATE with a message; an arrival that
 * succeeds has an attempt in 1..1e9 and an arrival number >= 1; a joined
 * session has a finite age >= 0; a failed join returns no state; every
 * reply tree and context is freed (LeakSanitizer).
 */
#include <errno.h>
#include <hiredis/hiredis.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/state_int.h"

/* ------------------------------------------------------- the input */

static const uint8_t *in_p, *in_end;

static int in_byte(int *out) {
  if (in_p >= in_end) return 0;
  *out = *in_p++;
  return 1;
}

/* A NUL-terminated copy of the next (length byte, bytes), as hiredis
   always terminates str. */
static char *in_str(size_t *len) {
  int n = 0;
  in_byte(&n);
  size_t avail = (size_t)(in_end - in_p);
  size_t k = (size_t)n < avail ? (size_t)n : avail;
  char *s = malloc(k + 1);
  if (s == NULL) abort();
  memcpy(s, in_p, k);
  s[k] = '\0';
  in_p += k;
  *len = k;
  return s;
}

static const char *const NUMBERS[] = {
    "0", "1", "-1", "2", "1000000001", "9223372036854775807", "-9223372036854775808",
    "99999999999999999999999", "-99999999999999999999999", "1e308", "nan", "-0",
    "1700000000000", "4", "5", "",
};

/* ------------------------------------------------------- fake hiredis */

static redisReply *new_reply(int type) {
  redisReply *r = calloc(1, sizeof *r);
  if (r == NULL) abort();
  r->type = type;
  return r;
}

/* The next reply tree, or NULL with *fail set to how the command failed. */
static redisReply *next_reply(int depth, int *fail) {
  int b;
  *fail = 0;
  if (!in_byte(&b)) {
    *fail = 8;
    return NULL;
  }
  switch (b % 10) {
  case 0:
  case 4:
  case 5: {
    redisReply *r = new_reply(b % 10 == 0 ? REDIS_REPLY_STRING
                              : b % 10 == 4 ? REDIS_REPLY_STATUS : REDIS_REPLY_ERROR);
    r->str = in_str(&r->len);
    return r;
  }
  case 6: {
    redisReply *r = new_reply(REDIS_REPLY_ERROR);
    r->str = strdup("NOSCRIPT No matching script. Please use EVAL.");
    if (r->str == NULL) abort();
    r->len = strlen(r->str);
    return r;
  }
  case 9: {
    int k = 0;
    in_byte(&k);
    redisReply *r = new_reply(REDIS_REPLY_STRING);
    r->str = strdup(NUMBERS[k % (int)(sizeof NUMBERS / sizeof NUMBERS[0])]);
    if (r->str == NULL) abort();
    r->len = strlen(r->str);
    return r;
  }
  case 1: {
    redisReply *r = new_reply(REDIS_REPLY_ARRAY);
    int n = 0;
    in_byte(&n);
    n %= 8;
    if (depth >= 4) n = 0;
    r->element = calloc((size_t)n + 1, sizeof *r->element);
    if (r->element == NULL) abort();
    for (int i = 0; i < n; i++) {
      int f;
      redisReply *e = next_reply(depth + 1, &f);
      r->element[i] = e ? e : new_reply(REDIS_REPLY_NIL); /* hiredis never has a hole */
    }
    r->elements = (size_t)n;
    return r;
  }
  case 2: {
    redisReply *r = new_reply(REDIS_REPLY_INTEGER);
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
      int x = 0;
      in_byte(&x);
      v |= (uint64_t)x << (8 * i);
    }
    memcpy(&r->integer, &v, sizeof v);
    return r;
  }
  case 3:
    return new_reply(REDIS_REPLY_NIL);
  default:
    *fail = b % 10;
    return NULL;
  }
}

void freeReplyObject(void *reply) {
  redisReply *r = reply;
  if (r == NULL) return;
  for (size_t i = 0; i < r->elements; i++) freeReplyObject(r->element[i]);
  free(r->element);
  free(r->str);
  free(r);
}

redisContext *redisConnectWithTimeout(const char *ip, int port, const struct timeval tv) {
  (void)ip, (void)port, (void)tv;
  int b = 2;
  in_byte(&b);
  if (b == 1) return NULL;
  redisContext *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  if (b == 0) {
    c->err = REDIS_ERR_IO;
    snprintf(c->errstr, sizeof c->errstr, "Connection refused");
  }
  return c;
}

int redisSetTimeout(redisContext *c, const struct timeval tv) {
  (void)c, (void)tv;
  return REDIS_OK;
}

void redisFree(redisContext *c) { free(c); }

/* A command's answer: the next reply, or the context's error as hiredis
   leaves it when the command failed. */
static void *answer(redisContext *c) {
  if (c == NULL || c->err) abort(); /* hiredis: never used after an error */
  int fail;
  redisReply *r = next_reply(0, &fail);
  if (r != NULL) return r;
  if (fail == 7) {
    c->err = REDIS_ERR_EOF;
    snprintf(c->errstr, sizeof c->errstr, "Server closed the connection");
    errno = 0;
  } else {
    c->err = REDIS_ERR_IO;
    snprintf(c->errstr, sizeof c->errstr, "Resource temporarily unavailable");
    errno = EAGAIN;
  }
  return NULL;
}

void *redisCommand(redisContext *c, const char *format, ...) {
  (void)format;
  return answer(c);
}

void *redisCommandArgv(redisContext *c, int argc, const char **argv, const size_t *argvlen) {
  if (argc < 1 || argv == NULL || argvlen == NULL) abort();
  for (int i = 0; i < argc; i++)
    if (argv[i] == NULL || memchr(argv[i], '\0', argvlen[i]) != NULL) abort();
  return answer(c);
}

/* ------------------------------------------------------- the target */

static const char *const KEYS[] = {
    "hash:00000000000000a1", "idem:order-42",
    "idem:" /* a key over SIM_KEY_RAW_MAX, digested */
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "#starts-with-hash",
};

static void must_err(int rc, const char *err) {
  if (rc != SIM_ESTATE || err[0] == '\0') {
    fprintf(stderr, "a failed call returned %d, err '%s'\n", rc, err);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 64 * 1024) return 0;
  const uint8_t *ops = data + 1, *ops_end = ops;
  while (ops_end < data + size && *ops_end != 0xff && ops_end - ops < 64) ops_end++;
  in_p = ops_end < data + size ? ops_end + 1 : ops_end;
  in_end = data + size;
  int opt = data[0];

  sim_ratelimit *rl = NULL;
  char err[SIM_ERRLEN] = "";
  if (opt & 8) {
    if (sim__ratelimit_new("{\"rpm\":60,\"tpm\":1000,\"burst\":2}", 1.0, NULL, &rl, err) !=
        SIM_OK)
      rl = NULL; /* the test is the state, not the limiter's parser */
  }
  sim_state_redis_opts o = {.url = (opt & 2) ? "redis://127.0.0.1:6379/3"
                                             : "redis://127.0.0.1:6379",
                            .session = "fuzz", .fresh = opt & 1, .ttl_ms = 60000};
  sim_state *st = NULL;
  err[0] = '\0';
  int rc = sim__state_redis_new(&o, (opt & 4) != 0, rl, &st, err);
  if (rc != SIM_OK) {
    if (st != NULL || err[0] == '\0' || (rc != SIM_ESTATE && rc != SIM_ENOMEM)) abort();
    return 0;
  }
  if (st == NULL || strncmp(st->session, "fuzz/", 5) != 0 || !(st->age_ms >= 0)) abort();

  for (const uint8_t *op = ops; op < ops_end; op++) {
    const char *key = KEYS[(*op >> 2) & 3];
    err[0] = '\0';
    switch (*op & 3) {
    case 0: {
      int attempt = -7;
      long n = -7;
      rc = st->ops->arrive(st, key, &attempt, &n, err);
      if (rc != SIM_OK) must_err(rc, err);
      else if (attempt < 1 || attempt > 1000000000 || n < 1) abort();
      break;
    }
    case 1: {
      if (st->rl == NULL) break; /* the server asks only with a limiter */
      sim_rl_result res;
      memset(&res, 0, sizeof res);
      rc = st->ops->rl_take(st, 5, &res, err);
      if (rc != 0 && rc != 1) must_err(rc, err);
      break;
    }
    case 2: {
      int count = -7;
      char *result = NULL;
      rc = st->ops->ledger_post(st, key, "charge", "0123456789abcdef", (*op >> 4) & 1, &count,
                                &result, err);
      if (rc < 1 || rc > 4) {
        must_err(rc, err);
        if (result != NULL) abort();
      }
      free(result);
      break;
    }
    default: {
      char *result = NULL;
      rc = st->ops->ledger_lookup(st, key, &result, err);
      if (rc != 0 && rc != 1) must_err(rc, err);
      if (rc != 1 && result != NULL) abort();
      free(result);
      break;
    }
    }
  }
  sim_ratelimit *keep = st->rl;
  st->ops->free(st);
  sim__ratelimit_free(keep);
  return 0;
}
