/*
 * fake.c - the injected environment of the guard unit tests (see fake.h).
 */
#include "fake.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

const guard_provider FAKE_PROVIDERS[2] = {
    {"primary", "http://fake/v1", GUARD_OPENAI, "sk-test", "gpt-test", NULL},
    {"backup", "http://fake/backup", GUARD_ANTHROPIC, "ak-test", "claude-test", NULL},
};

static double f_now(void *ud) {
  fake *f = ud;
  pthread_mutex_lock(&f->mu);
  double v = f->now;
  pthread_mutex_unlock(&f->mu);
  return v;
}

static void f_sleep(void *ud, double ms) {
  fake *f = ud;
  pthread_mutex_lock(&f->mu);
  f->now += ms;
  f->slept += ms;
  f->nsleep++;
  pthread_mutex_unlock(&f->mu);
}

static uint64_t f_rand(void *ud) {
  fake *f = ud;
  pthread_mutex_lock(&f->mu);
  uint64_t v = f->rnd;
  if (f->rnd_seq != NULL && f->rnd_n > 0) v = f->rnd_seq[f->rnd_i++ % f->rnd_n];
  pthread_mutex_unlock(&f->mu);
  return v;
}

static double f_wall(void *ud) {
  fake *f = ud;
  return f->wall + f_now(f) / 1000.0;
}

static const fake_step *pick(fake *f, const char *url) {
  int last = -1;
  for (int i = 0; i < f->nsteps; i++) {
    const fake_step *s = &f->steps[i];
    if (s->url_has != NULL && strstr(url, s->url_has) == NULL) continue;
    last = i;
    if (s->sticky) return s;
    if (!f->used[i]) {
      f->used[i] = 1;
      return s;
    }
  }
  return last >= 0 ? &f->steps[last] : NULL; /* the last one repeats */
}

static void headers(guard_http_response *resp, const char *h) {
  while (h != NULL && *h) {
    const char *eol = strchr(h, '\n');
    size_t len = eol ? (size_t)(eol - h) : strlen(h);
    const char *colon = memchr(h, ':', len);
    if (colon != NULL)
      guard_resp_header(resp, h, (size_t)(colon - h), colon + 1,
                        len - (size_t)(colon - h) - 1);
    h = eol ? eol + 1 : h + len;
  }
}

static guard_tx f_transport(void *ud, const guard_http_request *req,
                            guard_http_response *resp) {
  fake *f = ud;
  pthread_mutex_lock(&f->mu);
  if (f->nreq < FAKE_MAX_REQS) {
    fake_req *r = &f->req[f->nreq];
    memset(r, 0, sizeof *r);
    strncpy(r->method, req->method, sizeof r->method - 1);
    strncpy(r->url, req->url, sizeof r->url - 1);
    r->body = req->body ? strndup(req->body, req->body_len) : NULL;
    r->timeout_ms = req->timeout_ms;
    r->idle_ms = req->idle_timeout_ms;
    r->connect_ms = req->connect_timeout_ms;
    r->at_ms = f->now;
    for (int i = 0; i < req->nheaders; i++)
      if (strncasecmp(req->headers[i], "Idempotency-Key: ", 17) == 0)
        strncpy(r->key, req->headers[i] + 17, sizeof r->key - 1);
  }
  f->nreq++;
  const fake_step *s = pick(f, req->url);
  fake_step st = s ? *s : (fake_step){.tx = GUARD_TX_CONNECT};
  double ms = st.ms;
  if ((st.tx == GUARD_TX_TIMEOUT || st.tx == GUARD_TX_IDLE) && ms == 0)
    ms = st.tx == GUARD_TX_TIMEOUT ? req->timeout_ms : req->idle_timeout_ms;
  f->now += ms;
  int split = f->split;
  pthread_mutex_unlock(&f->mu);

  if (st.status > 0) {
    guard_resp_status(resp, st.status);
    headers(resp, st.headers);
  }
  if (st.body != NULL) {
    size_t len = st.body_len ? st.body_len : strlen(st.body), step = split > 0 ? (size_t)split : len;
    for (size_t i = 0; i < len; i += step) {
      size_t n = len - i < step ? len - i : step;
      if (guard_resp_body(resp, st.body + i, n) != GUARD_OK) return GUARD_TX_TOOBIG;
    }
  }
  return st.tx;
}

/* Resets a fake. */
void fake_init(fake *f) {
  memset(f, 0, sizeof *f);
  pthread_mutex_init(&f->mu, NULL);
  f->wall = 1767225600.0; /* 2026-01-01T00:00:00Z */
  f->rnd = fake_u(0.5);
}

/* Releases what the fake recorded. */
void fake_free(fake *f) {
  int n = f->nreq < FAKE_MAX_REQS ? f->nreq : FAKE_MAX_REQS;
  for (int i = 0; i < n; i++) free(f->req[i].body);
  pthread_mutex_destroy(&f->mu);
}

/* Appends a scripted step. */
void fake_add(fake *f, fake_step s) {
  if (f->nsteps < FAKE_MAX_STEPS) f->steps[f->nsteps++] = s;
}

/* An env wired to the fake. */
guard_env fake_env(fake *f) {
  guard_env e = {f_now, f_sleep, f_rand, f_wall, f, f_transport, f};
  return e;
}

/* One primary provider, the fake env, no jitter, no breaker, no retry budget. */
void fake_config(guard_config *cfg, fake *f) {
  guard_config_init(cfg);
  cfg->providers = FAKE_PROVIDERS;
  cfg->nproviders = 1;
  cfg->env = fake_env(f);
  cfg->policy.jitter = GUARD_JITTER_NONE;
  cfg->policy.breaker_threshold = 0;
  cfg->policy.retry_budget_capacity = 0;
}

/* A one-message chat request. */
guard_chat_request fake_request(void) {
  static const guard_message msg[] = {{"user", "Say hello."}};
  guard_chat_request r = {0};
  r.messages = msg;
  r.nmessages = 1;
  r.max_tokens = 16;
  return r;
}

/* The 64-bit value that the guard turns into u. */
uint64_t fake_u(double u) { return (uint64_t)(u * 0x1.0p53) << 11; }
