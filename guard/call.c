/*
 * call.c - the guarded chat call: the four gates in order. Budget first (the
 * cheapest: over it, nothing is sent); then, per provider of the chain, the
 * breaker, the deadline and the attempt timeout slice before every attempt;
 * classification after it; for what is retryable, backoff with Retry-After
 * as a floor, the retry budget, max total wait and the deadline before every
 * wait; the next provider when one fails for good; the degraded text when
 * all did.
 */
#include "guard/guard_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one attempt left behind for the loop. */
typedef struct attempt_out {
  guard_kind kind;
  guard__ra ra;        /* the Retry-After reading */
} attempt_out;

static int key_ok(const char *k) {
  if (k == NULL) return 1;
  size_t n = strlen(k);
  if (n == 0 || n > GUARD__MAX_KEY) return 0;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)k[i] <= 0x20 || k[i] == 0x7f) return 0;
  return 1;
}

static int chat_headers(guard__hdrs *h, guard *g, const guard__prov *p,
                        int stream, const char *key) {
  int rc = guard__hdrs_add(h, "Content-Type", "application/json");
  if (rc == GUARD_OK)
    rc = guard__hdrs_add(h, "Accept", !stream ? "application/json"
                                      : p->dialect == GUARD_BEDROCK ? "application/vnd.amazon.eventstream"
                                      : p->dialect == GUARD_OLLAMA ? "application/x-ndjson"
                                                                   : "text/event-stream");
  if (rc == GUARD_OK) rc = guard__hdrs_add(h, "User-Agent", g->user_agent);
  if (rc == GUARD_OK && p->dialect == GUARD_ANTHROPIC)
    rc = guard__hdrs_add(h, "anthropic-version", "2023-06-01");
  if (rc == GUARD_OK && p->key != NULL) {
    if (p->dialect == GUARD_ANTHROPIC) {
      rc = guard__hdrs_add(h, "x-api-key", p->key);
    } else if (p->dialect == GUARD_GEMINI) {
      rc = guard__hdrs_add(h, "x-goog-api-key", p->key);
    } else {
      char auth[GUARD__MAX_SECRET + 8];
      snprintf(auth, sizeof auth, "Bearer %s", p->key);
      rc = guard__hdrs_add(h, "Authorization", auth);
    }
  }
  if (rc == GUARD_OK && key != NULL && key[0])
    rc = guard__hdrs_add(h, "Idempotency-Key", key);
  return rc;
}

/* Sends one chat attempt to p and classifies it into a and *o. */
static int chat_attempt(guard__call *c, guard__prov *p, const char *body,
                        size_t blen, int stream, const char *key,
                        double timeout_ms, guard_attempt *a, guard__answer *ans,
                        attempt_out *o) {
  guard *g = c->g;
  guard__hdrs h = {0};
  int rc = chat_headers(&h, g, p, stream, key);
  if (rc != GUARD_OK) {
    guard__hdrs_free(&h);
    return rc;
  }
  guard_http_response resp;
  guard__resp_init(&resp, g->max_body, stream, ans);
  guard__req s = {"POST", stream && p->url_stream ? p->url_stream : p->url, (const char *const *)h.line, h.n, body, blen,
                   timeout_ms, p->pol.connect_ms, p->pol.idle_ms, stream};
  guard_tx tx = guard__send(c, &s, &resp, a);

  guard__facts f = {0};
  f.tx = tx;
  f.status = resp.status;
  f.body = GUARD__BODY_OK;
  int two = resp.status >= 200 && resp.status <= 299;
  if (two && stream && resp.sse != 0) {
    /* An event stream (or nothing at all where one was due). */
    f.streaming = 1;
    if (tx == GUARD_TX_OK) {
      guard__resp_stream_finish(&resp);
      f.body = guard__wire_stream_end(ans);
    } else if (ans->error) {
      f.body = GUARD__BODY_ERROR;
    }
  } else if (two) {
    if (tx == GUARD_TX_OK) f.body = guard__wire_parse(resp.body.p, resp.body.len, ans);
  } else if (resp.status > 0) {
    guard__wire_error(resp.body.p, resp.body.len, ans);
    const char *et = guard__resp_get(&resp, "x-amzn-errortype");
    if (p->dialect == GUARD_BEDROCK && et != NULL) guard__bedrock_error_type(ans, et);
  }
  if (resp.es.broken != GUARD__ES_FINE) guard__note(a, guard__es_broken_name(resp.es.broken));
  if (resp.oom || ans->oom) {
    /* Our memory ran out, not the provider: no kind would be true. */
    guard__resp_free(&resp);
    guard__hdrs_free(&h);
    return GUARD_ENOMEM;
  }
  f.err_type = ans->err_type[0] ? ans->err_type : NULL;
  f.err_code = ans->err_code[0] ? ans->err_code : NULL;
  f.should_retry = guard__resp_get(&resp, "x-should-retry");
  o->kind = guard__classify(&f, a->error, sizeof a->error);
  if (g->pol.flags & GUARD_STATUS_ONLY) o->kind = guard__classify_by_status(&f, o->kind);
  if (o->kind == GUARD_KIND_TRANSIENT &&
      (tx == GUARD_TX_TIMEOUT || tx == GUARD_TX_CONNECT || tx == GUARD_TX_IDLE) &&
      guard__deadline_passed(&c->dl, guard__now(g))) {
    o->kind = GUARD_KIND_DEADLINE;
    guard__strlcpy(a->error, "deadline", sizeof a->error);
  }
  if (a->detail[0] == '\0' && f.err_type && f.err_code)
    snprintf(a->detail, sizeof a->detail, "type %s", f.err_type);
  if (f.should_retry && o->kind != GUARD_KIND_OK)
    snprintf(a->detail + strlen(a->detail), sizeof a->detail - strlen(a->detail),
             "%sx-should-retry: %s", a->detail[0] ? "; " : "", f.should_retry);
  a->kind = o->kind;
  if (o->kind != GUARD_KIND_OK && ans->text.len > 0) {
    a->partial = strdup(ans->text.p);
    if (a->partial == NULL) rc = GUARD_ENOMEM;
  }
  const char *ra = guard__resp_get(&resp, "retry-after");
  if (ra == NULL && ans->retry_delay[0]) ra = ans->retry_delay; /* Google's RetryInfo */
  guard__retry_after(guard__resp_get(&resp, "retry-after-ms"), ra, guard__wall(g),
                     p->pol.ra_cap_s, &o->ra);
  if (o->ra.state == GUARD__RA_OK) a->retry_after_ms = o->ra.ms * g->scale;
  guard__resp_free(&resp);
  guard__hdrs_free(&h);
  return rc;
}

/* Logs an attempt that was not sent. */
static int log_skip(guard__call *c, const guard__prov *p, int n, const char *why) {
  guard_attempt *a = guard__log_add(c, p->name, n);
  if (a == NULL) return GUARD_ENOMEM;
  a->kind = GUARD_KIND_SKIPPED;
  guard__strlcpy(a->error, why, sizeof a->error);
  return GUARD_OK;
}

static int is_retryable(guard_kind k, unsigned flags) {
  if (k == GUARD_KIND_TRANSIENT || k == GUARD_KIND_SHAPE) return 1;
  if ((flags & GUARD_RETRY_EVERYTHING) &&
      (k == GUARD_KIND_PERMANENT || k == GUARD_KIND_UNKNOWN))
    return 1;
  return 0;
}

/* The loop over the chain. Returns GUARD_OK (the result says how it went)
 * or GUARD_ENOMEM. */
static int run_chain(guard__call *c, const guard_chat_request *req,
                     guard__buf *splice, int *answered, guard__answer *win,
                     int *last_real, int *deadline_hit, char *last_skip,
                     size_t nskip) {
  guard *g = c->g;
  const unsigned flags = g->pol.flags;
  char *bodies[GUARD_COHERE + 1] = {NULL};  /* one per dialect, built once */
  size_t blens[GUARD_COHERE + 1] = {0};
  char key[GUARD__MAX_KEY + 1] = "";
  if (req->idempotency_key) guard__strlcpy(key, req->idempotency_key, sizeof key);
  int rc = GUARD_OK;

  for (int pi = 0; pi < g->nprov && !*answered && !*deadline_hit; pi++) {
    guard__prov *p = &g->prov[pi];
    const guard__pol *pol = &p->pol;
    if (bodies[p->dialect] == NULL) {
      rc = guard__wire_body(p->dialect, p->model, req, &bodies[p->dialect],
                            &blens[p->dialect]);
      if (rc != GUARD_OK) goto out;
    }
    for (int n = 1; n <= pol->attempts; n++) {
      double now = guard__now(g);
      if (guard__deadline_passed(&c->dl, now)) {
        *deadline_hit = 1;
        c->stop = "deadline";
        break;
      }
      int probe = 0;
      const char *why = NULL;
      pthread_mutex_lock(&g->mu);
      int allowed = guard__breaker_allow(&p->brk, pol, now, &probe, &why);
      pthread_mutex_unlock(&g->mu);
      if (!allowed) {
        guard__strlcpy(last_skip, why, nskip);
        c->stop = strcmp(why, "breaker_open") == 0 ? "breaker open" : "breaker half-open";
        rc = log_skip(c, p, n, why);
        if (rc != GUARD_OK) goto out;
        break;
      }
      if (n > 1 && (flags & GUARD_NEW_KEY_PER_ATTEMPT) && key[0])
        guard__new_key(g, key, sizeof key);
      double timeout = guard__attempt_timeout(&c->dl, now, pol, pol->attempts - n + 1);
      guard_attempt *a = guard__log_add(c, p->name, n);
      if (a == NULL) {
        pthread_mutex_lock(&g->mu);
        guard__breaker_release(&p->brk, probe);
        pthread_mutex_unlock(&g->mu);
        rc = GUARD_ENOMEM;
        goto out;
      }
      guard__answer ans;
      guard__answer_init(&ans, p->dialect, g->max_body);
      attempt_out o = {GUARD_KIND_UNKNOWN, {GUARD__RA_NONE, 0, ""}};
      rc = chat_attempt(c, p, bodies[p->dialect], blens[p->dialect], req->stream,
                        key, timeout, a, &ans, &o);
      /* The provider answered (even "no"): that is health for the breaker. */
      int healthy = o.kind == GUARD_KIND_OK || o.kind == GUARD_KIND_PERMANENT;
      double after = guard__now(g);
      pthread_mutex_lock(&g->mu);
      if (rc == GUARD_OK)
        guard__breaker_record(&p->brk, pol, after, healthy, probe);
      else
        guard__breaker_release(&p->brk, probe); /* out of memory: says nothing */
      if (o.kind == GUARD_KIND_OK) guard__rbudget_success(&g->rbudget);
      pthread_mutex_unlock(&g->mu);
      if (rc != GUARD_OK) {
        guard__answer_free(&ans);
        goto out;
      }
      if (o.kind == GUARD_KIND_OK) {
        *answered = pi + 1;
        guard__answer_move(win, &ans); /* handed over: the caller frees it */
        break;
      }
      *last_real = c->r->nattempts - 1;
      if (a->partial && (flags & GUARD_SPLICE_PARTIAL))
        guard__buf_adds(splice, a->partial); /* bounded; a full buffer drops it */
      /* An eager executor keeps the tool calls a failed stream showed. */
      for (int t = 0; (flags & GUARD_SPLICE_PARTIAL) && t < ans.ntc &&
                      c->r->ntool_calls < GUARD_MAX_TOOL_CALLS; t++) {
        c->r->tool_calls[c->r->ntool_calls] = ans.tc[t];
        c->r->tool_calls[c->r->ntool_calls++].partial = 1;
      }
      guard__answer_free(&ans);
      if (o.kind == GUARD_KIND_DEADLINE) {
        *deadline_hit = 1;
        c->stop = "deadline";
        break;
      }
      if (!is_retryable(o.kind, flags)) {
        c->stop = "not retryable";
        break;
      }
      if (n == pol->attempts) {
        c->stop = "attempts used up";
        break;
      }

      double wait;
      guard_wait_why wwhy;
      if (!guard__plan_wait(c, pol, n, &o.ra, a, &wait, &wwhy)) break;
      double now2 = guard__now(g);
      pthread_mutex_lock(&g->mu);
      int refused = guard__breaker_refuses(&p->brk, pol, now2);
      int budget_ok = refused ? 1 : guard__rbudget_take(&g->rbudget);
      pthread_mutex_unlock(&g->mu);
      if (refused || !budget_ok) {
        const char *w = refused ? "breaker_open" : "retry_budget_empty";
        c->stop = refused ? "breaker open" : "retry budget empty";
        guard__strlcpy(last_skip, w, nskip);
        rc = log_skip(c, p, n + 1, w);
        if (rc != GUARD_OK) goto out;
        break;
      }
      guard__do_wait(c, a, wait, wwhy);
    }
  }
out:
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) free(bodies[i]);
  if (rc == GUARD_OK) guard__strlcpy(c->r->key, key, sizeof c->r->key);
  return rc;
}

/* Makes one guarded chat call; see guard.h. */
int guard_chat(guard *g, const guard_chat_request *req, guard_result **out) {
  if (out != NULL) *out = NULL;
  if (g == NULL || req == NULL || out == NULL || req->messages == NULL ||
      req->nmessages < 1 || req->max_tokens < 0 || !key_ok(req->idempotency_key))
    return GUARD_EINVAL;
  for (int i = 0; i < req->nmessages; i++)
    if (req->messages[i].role == NULL || req->messages[i].content == NULL)
      return GUARD_EINVAL;

  guard__call c;
  int rc = guard__call_begin(&c, g);
  if (rc != GUARD_OK) return rc;
  guard_result *r = c.r;
  guard__deadline_start(&c.dl, c.t0, g->pol.deadline_ms);

  /* Gate 1: the budget, before any request. */
  long est = guard__estimate(req);
  r->estimate = est;
  char why[256];
  pthread_mutex_lock(&g->mu);
  int blocked = guard__budget_reserve(&g->budget, g->budget_per_call,
                                      g->budget_per_session, est, why, sizeof why);
  pthread_mutex_unlock(&g->mu);
  if (blocked) {
    r->outcome = GUARD_OUTCOME_BLOCKED;
    guard__strlcpy(r->stop, "token budget", sizeof r->stop);
    rc = guard__result_text(r, g->blocked_text);
    if (rc == GUARD_OK) rc = guard__result_reason(r, "stopped: token budget; %s", why);
    r->total_ms = guard__now(g) - c.t0;
    goto done;
  }

  /* Gates 2-4: time, retries, fallback. */
  guard__buf splice;
  guard__buf_init(&splice, g->max_body);
  guard__answer win;
  int answered = 0, last_real = -1, deadline_hit = 0;
  char last_skip[64] = "";
  rc = run_chain(&c, req, &splice, &answered, &win, &last_real, &deadline_hit,
                 last_skip, sizeof last_skip);
  long charged = 0;
  if (rc == GUARD_OK && answered) {
    guard__prov *p = &g->prov[answered - 1];
    guard__buf text;
    guard__buf_init(&text, 2 * g->max_body);
    rc = guard__buf_add(&text, splice.p ? splice.p : "", splice.len);
    if (rc == GUARD_OK) rc = guard__buf_add(&text, win.text.p ? win.text.p : "", win.text.len);
    if (rc == GUARD_OK) {
      free(r->text);
      r->text = guard__buf_take(&text);
      if (r->text == NULL) rc = GUARD_ENOMEM;
    }
    guard__buf_free(&text);
    r->outcome = GUARD_OUTCOME_OK;
    for (int t = 0; t < win.ntc && r->ntool_calls < GUARD_MAX_TOOL_CALLS; t++)
      r->tool_calls[r->ntool_calls++] = win.tc[t];
    r->provider = strdup(p->name);
    if (r->provider == NULL) rc = GUARD_ENOMEM;
    r->tokens_in = win.tokens_in >= 0 ? win.tokens_in : est - (req->max_tokens > 0 ? req->max_tokens : 1024);
    r->tokens_out = win.tokens_out >= 0 ? win.tokens_out : guard__tokens_of(win.text.len);
    r->tokens = r->tokens_in + r->tokens_out;
    charged = r->tokens;
    guard__answer_free(&win);
  } else if (rc == GUARD_OK) {
    r->outcome = GUARD_OUTCOME_DEGRADED;
    rc = guard__result_text(r, g->degraded_text);
    char last[192] = "";
    if (last_real >= 0) guard__attempt_summary(&r->attempts[last_real], last, sizeof last);
    const char *stop = deadline_hit ? "deadline" : c.stop ? c.stop : "attempts used up";
    guard__strlcpy(r->stop, stop, sizeof r->stop);
    /* The reason leads with why the client gave up: that is what a person
       triaging a failed run looks for first (the last error says what the
       provider did, not why the client stopped asking). */
    if (rc != GUARD_OK)
      ;
    else if (deadline_hit && last_real >= 0)
      rc = guard__result_reason(r, "stopped: deadline; last error: %s", last);
    else if (deadline_hit)
      rc = guard__result_reason(r, "stopped: deadline; reached before any attempt");
    else if (last_real >= 0)
      rc = guard__result_reason(r, "stopped: %s; every provider failed; last error: %s",
                                stop, last);
    else
      rc = guard__result_reason(r, "stopped: %s; no provider could be tried: %s", stop,
                                last_skip[0] ? last_skip : "none");
  }
  guard__buf_free(&splice);
  pthread_mutex_lock(&g->mu);
  guard__budget_settle(&g->budget, est, charged);
  pthread_mutex_unlock(&g->mu);
  r->total_ms = guard__now(g) - c.t0;
done:
  if (rc != GUARD_OK) {
    guard_result_free(r);
    return rc;
  }
  *out = r;
  return GUARD_OK;
}
