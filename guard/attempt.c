/*
 * attempt.c - one HTTP attempt through the environment's transport, timed
 * on the injected clock, and the idempotency keys attempts carry.
 */
#include "guard/guard_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sends one attempt, counts it and records its timing and status. */
guard_tx guard__send(guard__call *c, const guard__req *s,
                     guard_http_response *resp, guard_attempt *a) {
  guard_http_request req = {0};
  req.method = s->method;
  req.url = s->url;
  req.headers = s->headers;
  req.nheaders = s->nheaders;
  req.body = s->body;
  req.body_len = s->body_len;
  req.timeout_ms = s->timeout_ms;
  req.connect_timeout_ms = s->connect_ms;
  req.idle_timeout_ms = s->stream ? s->idle_ms : 0;
  if (req.connect_timeout_ms > 0 && req.timeout_ms > 0 &&
      req.connect_timeout_ms > req.timeout_ms)
    req.connect_timeout_ms = req.timeout_ms;
  double t = guard__now(c->g);
  c->r->requests++;
  guard_tx tx = guard__transport(c->g, &req, resp);
  if ((unsigned)tx > GUARD_TX_OTHER) tx = GUARD_TX_OTHER;
  if (resp->overflow && tx == GUARD_TX_OK) tx = GUARD_TX_TOOBIG;
  a->elapsed_ms = guard__now(c->g) - t;
  a->timeout_ms = s->timeout_ms;
  a->status = resp->status;
  const char *rid = guard__resp_get(resp, "x-request-id");
  if (rid == NULL) rid = guard__resp_get(resp, "request-id");
  if (rid == NULL) rid = guard__resp_get(resp, "x-amzn-requestid"); /* Bedrock */
  if (rid != NULL) guard__strlcpy(a->request_id, rid, sizeof a->request_id);
  if (resp->detail[0]) guard__strlcpy(a->detail, resp->detail, sizeof a->detail);
  return tx;
}

/* Fills an idempotency key "fx-" + 32 hex digits from the random source. */
void guard__new_key(guard *g, char *out, size_t n) {
  unsigned long long hi = guard__rand64(g), lo = guard__rand64(g);
  snprintf(out, n, "fx-%016llx%016llx", hi, lo);
}

/* Adds a header line "name: value". */
int guard__hdrs_add(guard__hdrs *h, const char *name, const char *value) {
  if (h->n >= GUARD__MAX_REQ_HEADERS) return GUARD_ETOOBIG;
  size_t len = strlen(name) + strlen(value) + 3;
  char *l = malloc(len);
  if (l == NULL) return GUARD_ENOMEM;
  snprintf(l, len, "%s: %s", name, value);
  h->line[h->n++] = l;
  return GUARD_OK;
}

/* Releases the header lines. */
void guard__hdrs_free(guard__hdrs *h) {
  for (int i = 0; i < h->n; i++) free(h->line[i]);
  h->n = 0;
}
