/*
 * fake.h - the injected environment of the guard unit tests: a clock that
 * only moves when the code sleeps or a scripted attempt takes time, a fixed
 * random source, a fixed wall clock, and a transport that plays scripted
 * steps and records every request. Nothing sleeps, nothing touches the
 * network.
 */
#ifndef FUSEBOX_TEST_GUARD_FAKE_H
#define FUSEBOX_TEST_GUARD_FAKE_H

#include "guard/guard.h"

#include <pthread.h>

#define FAKE_MAX_STEPS 64
#define FAKE_MAX_REQS 256

/* One scripted attempt. */
typedef struct fake_step {
  const char *url_has;   /* plays only for URLs containing this; NULL = any */
  int status;
  const char *headers;   /* "name: value\n" lines */
  const char *body;
  size_t body_len;       /* bytes of body (a binary one holds NULs); 0 = strlen */
  guard_tx tx;           /* how it ends */
  double ms;             /* time it takes; a TIMEOUT/IDLE with 0 takes the
                            request's timeout */
  int sticky;            /* never used up: plays for every later match */
} fake_step;

typedef struct fake_req {
  char method[8];
  char url[256];
  char key[80];          /* Idempotency-Key header, "" if none */
  char *body;
  double timeout_ms;
  double idle_ms;
  double connect_ms;
  double at_ms;          /* fake time it was sent */
} fake_req;

typedef struct fake {
  pthread_mutex_t mu;
  double now;            /* ms */
  double wall;           /* Unix s at now == 0 */
  uint64_t rnd;          /* what rand64 returns */
  const uint64_t *rnd_seq; /* or these, in turn (rnd_n of them) */
  int rnd_n, rnd_i;
  fake_step steps[FAKE_MAX_STEPS];
  int nsteps;
  int used[FAKE_MAX_STEPS];
  int split;             /* deliver bodies in pieces of this many bytes (0 = whole) */
  int nreq;
  fake_req req[FAKE_MAX_REQS];
  int nsleep;
  double slept;          /* total ms slept */
} fake;

/* Resets a fake: clock 0, wall 2026-01-01T00:00:00Z, random 0.5. */
void fake_init(fake *f);
/* Releases what the fake recorded. */
void fake_free(fake *f);
/* Appends a scripted step. */
void fake_add(fake *f, fake_step s);
/* An env wired to the fake. */
guard_env fake_env(fake *f);
/* A config with one OpenAI provider "primary" at http://fake/v1, the fake
 * env and the default policy with a fixed jitter-free backoff. */
void fake_config(guard_config *cfg, fake *f);
/* The providers fake_config uses: primary (openai), backup (anthropic). */
extern const guard_provider FAKE_PROVIDERS[2];
/* A one-message chat request. */
guard_chat_request fake_request(void);
/* A u in [0,1) as the 64-bit value the guard turns into it. */
uint64_t fake_u(double u);

/* OpenAI and Anthropic bodies used across tests. */
#define OK_OPENAI                                                              \
  "{\"id\":\"c1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"    \
  "\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},"                \
  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":12,"              \
  "\"completion_tokens\":3,\"total_tokens\":15}}"
#define OK_ANTHROPIC                                                           \
  "{\"id\":\"m1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":"     \
  "[{\"type\":\"text\",\"text\":\"hi from backup\"}],\"stop_reason\":"         \
  "\"end_turn\",\"usage\":{\"input_tokens\":10,\"output_tokens\":4}}"
#define ERR_OPENAI(type, code)                                                 \
  "{\"error\":{\"message\":\"words that must not matter\",\"type\":\"" type    \
  "\",\"param\":null,\"code\":\"" code "\"}}"
#define ERR_ANTHROPIC(type)                                                    \
  "{\"type\":\"error\",\"error\":{\"type\":\"" type "\",\"message\":\"x\"}}"

/* Steps, as compound literals. */
#define STEP_OK ((fake_step){.status = 200, .body = OK_OPENAI, .ms = 5})
#define STEP_STATUS(st, b) ((fake_step){.status = (st), .body = (b), .ms = 2})
#define STEP_TX(t) ((fake_step){.tx = (t), .ms = 1})

#endif
