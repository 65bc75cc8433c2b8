/*
 * effect.c - a side-effecting call. One idempotency key for every attempt.
 * When an attempt's result is unknown (timeout, connection lost after the
 * request went out, an unreadable 200), the ledger is asked before anything
 * is sent again:
 *   GET {effects_url}/effects/{key}
 *     200 applied=true        -> ok, with the stored result
 *     404 / applied=false     -> retry with the same key
 *     anything else (503, ...) -> pending: never re-execute blind
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROVIDER "effects"
#define LEDGER "ledger"

/* What an effect response said. */
typedef enum {
  FX_APPLIED,    /* applied; result in *result */
  FX_NOT_APPLIED,
  FX_UNREADABLE, /* a 2xx body we cannot read */
  FX_NOMEM       /* reading it ran out of memory */
} fx_read;

static int name_ok(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (n == 0 || n > 64) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'))
      return 0;
  }
  return 1;
}

/* Reads {"applied": bool, "result": ...}; *result gets the result's JSON
 * text (malloc'ed) when applied. */
static fx_read read_fx(const char *body, size_t len, char **result) {
  *result = NULL;
  int oom = 0;
  cJSON *root = guard__json_parse(body, len, &oom);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return oom ? FX_NOMEM : FX_UNREADABLE;
  }
  const cJSON *ap = cJSON_GetObjectItemCaseSensitive(root, "applied");
  fx_read r = FX_UNREADABLE;
  if (cJSON_IsTrue(ap)) {
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(root, "result");
    *result = res ? cJSON_PrintUnformatted(res) : strdup("null");
    r = *result ? FX_APPLIED : FX_NOMEM;
  } else if (cJSON_IsFalse(ap)) {
    r = FX_NOT_APPLIED;
  }
  cJSON_Delete(root);
  return r;
}

static int fx_headers(guard__hdrs *h, guard *g, const char *key, int post) {
  int rc = guard__hdrs_add(h, "Accept", "application/json");
  if (rc == GUARD_OK) rc = guard__hdrs_add(h, "User-Agent", g->user_agent);
  if (rc == GUARD_OK && post) rc = guard__hdrs_add(h, "Content-Type", "application/json");
  if (rc == GUARD_OK && post && !(g->pol.flags & GUARD_NO_KEY))
    rc = guard__hdrs_add(h, "Idempotency-Key", key);
  return rc;
}

static char *fx_url(const char *base, const char *tail) {
  size_t n = strlen(base) + strlen("/effects/") + strlen(tail) + 1;
  char *u = malloc(n);
  if (u) snprintf(u, n, "%s/effects/%s", base, tail);
  return u;
}

/* The state of one effect call. */
typedef struct fx_call {
  guard__call c;
  char key[GUARD__MAX_KEY + 1];
  char *result;        /* the applied result's JSON */
  int lookups;
  int unresolved;      /* the last POST's result is unknown and unasked */
  int pending;         /* the ledger could not tell */
  int last_real;       /* last POST attempt line */
  int last_lookup;     /* last lookup line */
} fx_call;

/* Asks the ledger about fx->key. Returns GUARD_OK with fx->result (applied),
 * fx->pending (cannot tell) or neither (not applied). */
static int lookup(fx_call *fx, int attempts_left) {
  guard *g = fx->c.g;
  double now = guard__now(g);
  if (guard__deadline_passed(&fx->c.dl, now)) {
    fx->pending = 1;
    return GUARD_OK;
  }
  guard_attempt *a = guard__log_add(&fx->c, LEDGER, ++fx->lookups);
  if (a == NULL) return GUARD_ENOMEM;
  fx->last_lookup = fx->c.r->nattempts - 1;
  char *url = fx_url(g->effects_url, fx->key);
  guard__hdrs h = {0};
  int rc = url ? fx_headers(&h, g, fx->key, 0) : GUARD_ENOMEM;
  if (rc != GUARD_OK) {
    free(url);
    guard__hdrs_free(&h);
    return rc;
  }
  guard_http_response resp;
  guard__resp_init(&resp, g->max_body, 0, NULL);
  guard__req s = {"GET", url, (const char *const *)h.line, h.n, NULL, 0,
                   guard__attempt_timeout(&fx->c.dl, now, &g->pol, attempts_left),
                   g->pol.connect_ms, 0, 0};
  guard_tx tx = guard__send(&fx->c, &s, &resp, a);
  fx_read rd = FX_UNREADABLE;
  char *result = NULL;
  if (tx == GUARD_TX_OK && resp.status == 200 && !resp.oom)
    rd = read_fx(resp.body.p, resp.body.len, &result);
  if (resp.oom || rd == FX_NOMEM) {
    rc = GUARD_ENOMEM; /* our memory, not the ledger's answer */
  } else if (tx == GUARD_TX_OK && (resp.status == 404 || (resp.status == 200 && rd == FX_NOT_APPLIED))) {
    a->kind = GUARD_KIND_OK;
    guard__strlcpy(a->error, "not_applied", sizeof a->error);
  } else if (rd == FX_APPLIED) {
    a->kind = GUARD_KIND_OK;
    guard__strlcpy(a->error, "", sizeof a->error);
    guard__note(a, "applied");
    fx->result = result;
    result = NULL;
  } else {
    a->kind = tx == GUARD_TX_OK && resp.status >= 500 ? GUARD_KIND_TRANSIENT
              : tx == GUARD_TX_OK                      ? GUARD_KIND_UNKNOWN
                                                       : GUARD_KIND_TRANSIENT;
    if (tx != GUARD_TX_OK)
      guard__strlcpy(a->error, guard__tx_name(tx), sizeof a->error);
    else if (resp.status == 503)
      guard__strlcpy(a->error, "ledger_down", sizeof a->error);
    else
      snprintf(a->error, sizeof a->error, "http_%d", resp.status);
    fx->pending = 1;
  }
  free(result);
  guard__resp_free(&resp);
  guard__hdrs_free(&h);
  free(url);
  return rc;
}

/* One POST. Sets *kind; *unknown when the result cannot be known from it. */
static int post(fx_call *fx, const char *url, const char *payload, int n,
                int *unknown, guard_kind *kind, guard__ra *ra) {
  guard *g = fx->c.g;
  double now = guard__now(g);
  guard_attempt *a = guard__log_add(&fx->c, PROVIDER, n);
  if (a == NULL) return GUARD_ENOMEM;
  guard__hdrs h = {0};
  int rc = fx_headers(&h, g, fx->key, 1);
  if (rc != GUARD_OK) {
    guard__hdrs_free(&h);
    return rc;
  }
  guard_http_response resp;
  guard__resp_init(&resp, g->max_body, 0, NULL);
  guard__req s = {"POST", url, (const char *const *)h.line, h.n, payload,
                   strlen(payload),
                   guard__attempt_timeout(&fx->c.dl, now, &g->pol,
                                          g->pol.attempts - n + 1),
                   g->pol.connect_ms, 0, 0};
  guard_tx tx = guard__send(&fx->c, &s, &resp, a);
  *unknown = 0;
  int two = resp.status >= 200 && resp.status <= 299;
  if (resp.oom) {
    rc = GUARD_ENOMEM; /* our memory, not the provider's answer */
  } else if (tx == GUARD_TX_OK && two) {
    char *result = NULL;
    fx_read rd = read_fx(resp.body.p, resp.body.len, &result);
    if (rd == FX_NOMEM) {
      rc = GUARD_ENOMEM;
    } else if (rd == FX_APPLIED) {
      *kind = GUARD_KIND_OK;
      fx->result = result;
    } else {
      free(result);
      *kind = GUARD_KIND_SHAPE;
      guard__strlcpy(a->error, rd == FX_NOT_APPLIED ? "not_applied" : "unreadable",
                     sizeof a->error);
      *unknown = 1;
    }
  } else if (tx == GUARD_TX_OK && resp.status == 409) {
    *kind = GUARD_KIND_PERMANENT;
    guard__strlcpy(a->error, "conflict", sizeof a->error);
  } else {
    guard__answer ans;
    guard__answer_init(&ans, GUARD_OPENAI, 1024);
    if (tx == GUARD_TX_OK) guard__wire_error(resp.body.p, resp.body.len, &ans);
    guard__facts f = {0};
    f.tx = tx;
    f.status = resp.status;
    f.body = GUARD__BODY_OK;
    f.err_type = ans.err_type[0] ? ans.err_type : NULL;
    f.err_code = ans.err_code[0] ? ans.err_code : NULL;
    f.should_retry = guard__resp_get(&resp, "x-should-retry");
    *kind = guard__classify(&f, a->error, sizeof a->error);
    if (g->pol.flags & GUARD_STATUS_ONLY) *kind = guard__classify_by_status(&f, *kind);
    if (ans.oom) rc = GUARD_ENOMEM;
    guard__answer_free(&ans);
    /* Sent (or maybe sent) and no answer: nobody knows if it was applied. */
    if (tx != GUARD_TX_OK && tx != GUARD_TX_CONNECT) *unknown = 1;
    if (*kind == GUARD_KIND_TRANSIENT && tx != GUARD_TX_OK &&
        guard__deadline_passed(&fx->c.dl, guard__now(g))) {
      *kind = GUARD_KIND_DEADLINE;
      guard__strlcpy(a->error, "deadline", sizeof a->error);
    }
  }
  if (rc != GUARD_OK) {
    guard__resp_free(&resp);
    guard__hdrs_free(&h);
    return rc;
  }
  a->kind = *kind;
  if (*unknown) guard__note(a, "result unknown");
  guard__retry_after(guard__resp_get(&resp, "retry-after-ms"),
                     guard__resp_get(&resp, "retry-after"), guard__wall(g),
                     g->pol.ra_cap_s, ra);
  if (ra->state == GUARD__RA_OK) a->retry_after_ms = ra->ms * g->scale;
  guard__resp_free(&resp);
  guard__hdrs_free(&h);
  return GUARD_OK;
}

static int run(fx_call *fx, const char *url, const char *payload) {
  guard *g = fx->c.g;
  const unsigned flags = g->pol.flags;
  for (int n = 1; n <= g->pol.attempts; n++) {
    if (guard__deadline_passed(&fx->c.dl, guard__now(g))) break;
    if (n > 1 && (flags & GUARD_NEW_KEY_PER_ATTEMPT))
      guard__new_key(g, fx->key, sizeof fx->key);
    int unknown = 0;
    guard_kind kind;
    guard__ra ra;
    int rc = post(fx, url, payload, n, &unknown, &kind, &ra);
    if (rc != GUARD_OK) return rc;
    int ai = fx->c.r->nattempts - 1; /* an index: lookups may move the log */
    if (kind == GUARD_KIND_OK) {
      fx->unresolved = 0;
      pthread_mutex_lock(&g->mu);
      guard__rbudget_success(&g->rbudget);
      pthread_mutex_unlock(&g->mu);
      return GUARD_OK;
    }
    fx->last_real = fx->c.r->nattempts - 1;
    fx->unresolved = unknown;
    if (unknown && !(flags & GUARD_BLIND_REEXECUTE)) {
      rc = lookup(fx, g->pol.attempts - n + 1);
      if (rc != GUARD_OK) return rc;
      if (fx->result != NULL || fx->pending) {
        fx->unresolved = 0;
        return GUARD_OK;
      }
      fx->unresolved = 0; /* the ledger says: not applied */
      if (kind == GUARD_KIND_DEADLINE) kind = GUARD_KIND_TRANSIENT;
    }
    int retryable = kind == GUARD_KIND_TRANSIENT || kind == GUARD_KIND_SHAPE ||
                    ((flags & GUARD_RETRY_EVERYTHING) && kind != GUARD_KIND_DEADLINE);
    if (!retryable || n == g->pol.attempts) break;
    double wait;
    guard_wait_why why;
    if (!guard__plan_wait(&fx->c, &g->pol, n, &ra, &fx->c.r->attempts[ai], &wait, &why))
      break;
    pthread_mutex_lock(&g->mu);
    int budget_ok = guard__rbudget_take(&g->rbudget);
    pthread_mutex_unlock(&g->mu);
    if (!budget_ok) {
      guard_attempt *s = guard__log_add(&fx->c, PROVIDER, n + 1);
      if (s == NULL) return GUARD_ENOMEM;
      s->kind = GUARD_KIND_SKIPPED;
      guard__strlcpy(s->error, "retry_budget_empty", sizeof s->error);
      break;
    }
    guard__do_wait(&fx->c, &fx->c.r->attempts[ai], wait, why);
  }
  return GUARD_OK;
}

/* Performs one side effect; see guard.h. */
int guard_effect(guard *g, const char *name, const char *payload_json,
                 const char *key, guard_result **out) {
  if (out != NULL) *out = NULL;
  if (g == NULL || out == NULL || !name_ok(name) || payload_json == NULL ||
      strlen(payload_json) > GUARD__MAX_REQUEST)
    return GUARD_EINVAL;
  if (key != NULL) {
    size_t kl = strlen(key);
    if (kl == 0 || kl > GUARD__MAX_KEY) return GUARD_EINVAL;
    for (size_t i = 0; i < kl; i++)
      if ((unsigned char)key[i] <= 0x20 || key[i] == 0x7f || key[i] == '/' ||
          key[i] == '?' || key[i] == '#' || key[i] == '%')
        return GUARD_EINVAL;
  }
  fx_call fx;
  memset(&fx, 0, sizeof fx);
  fx.last_real = -1;
  fx.last_lookup = -1;
  int rc = guard__call_begin(&fx.c, g);
  if (rc != GUARD_OK) return rc;
  guard_result *r = fx.c.r;
  guard__deadline_start(&fx.c.dl, fx.c.t0, g->pol.deadline_ms);
  if (key != NULL)
    guard__strlcpy(fx.key, key, sizeof fx.key);
  else
    guard__new_key(g, fx.key, sizeof fx.key);

  char *url = fx_url(g->effects_url, name);
  rc = url ? run(&fx, url, payload_json) : GUARD_ENOMEM;
  free(url);
  guard__strlcpy(r->key, fx.key, sizeof r->key);
  char last[192] = "", look[192] = "";
  if (fx.last_real >= 0) guard__attempt_summary(&r->attempts[fx.last_real], last, sizeof last);
  if (fx.last_lookup >= 0) guard__attempt_summary(&r->attempts[fx.last_lookup], look, sizeof look);
  if (rc != GUARD_OK) {
  } else if (fx.result != NULL) {
    r->outcome = GUARD_OUTCOME_OK;
    free(r->text);
    r->text = fx.result;
    fx.result = NULL;
    r->provider = strdup(PROVIDER);
    if (r->provider == NULL) rc = GUARD_ENOMEM;
  } else if (fx.pending || fx.unresolved) {
    r->outcome = GUARD_OUTCOME_PENDING;
    guard__strlcpy(r->stop, "result unknown", sizeof r->stop);
    rc = guard__result_text(r, "[pending] The outcome of this operation is not "
                               "known yet; it was not repeated.");
    if (rc == GUARD_OK)
      rc = guard__result_reason(r, "result unknown: %s; ledger: %s", last,
                                look[0] ? look : "not asked");
  } else {
    r->outcome = GUARD_OUTCOME_ERROR;
    guard__strlcpy(r->stop, last[0] ? "effect failed" : "deadline", sizeof r->stop);
    rc = guard__result_text(r, "[error] The operation failed and was not applied.");
    if (rc == GUARD_OK)
      rc = guard__result_reason(r, "%s%s", last[0] ? "effect failed: " : "deadline reached before any attempt",
                                last);
  }
  free(fx.result);
  r->total_ms = guard__now(g) - fx.c.t0;
  if (rc != GUARD_OK) {
    guard_result_free(r);
    return rc;
  }
  *out = r;
  return GUARD_OK;
}
