/*
 * attempt_log.c - the result of a call and its attempt log: one line per
 * attempt (or skipped attempt), bounded in number, owned by the result.
 */
#include "guard/guard_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Allocates an empty result for a call starting now. */
int guard__call_begin(guard__call *c, guard *g) {
  memset(c, 0, sizeof *c);
  c->g = g;
  /* tool_calls (17 KB, last) is set only up to ntool_calls: not zeroed. */
  c->r = malloc(sizeof *c->r);
  if (c->r == NULL) return GUARD_ENOMEM;
  memset(c->r, 0, offsetof(guard_result, tool_calls));
  c->r->text = calloc(1, 1);
  if (c->r->text == NULL) {
    free(c->r);
    c->r = NULL;
    return GUARD_ENOMEM;
  }
  c->t0 = guard__now(g);
  return GUARD_OK;
}

/* Appends a zeroed attempt-log line started now; NULL when full or OOM. */
guard_attempt *guard__log_add(guard__call *c, const char *provider, int n) {
  guard_result *r = c->r;
  if (r->nattempts >= GUARD__MAX_LOG) return NULL;
  if (r->nattempts == c->cap_log) {
    int cap = c->cap_log ? c->cap_log * 2 : 8;
    if (cap > GUARD__MAX_LOG) cap = GUARD__MAX_LOG;
    guard_attempt *a = realloc(r->attempts, (size_t)cap * sizeof *a);
    if (a == NULL) return NULL;
    r->attempts = a;
    c->cap_log = cap;
  }
  guard_attempt *a = &r->attempts[r->nattempts++];
  memset(a, 0, sizeof *a);
  a->n = n;
  guard__strlcpy(a->provider, provider, sizeof a->provider);
  a->start_ms = guard__now(c->g) - c->t0;
  a->retry_after_ms = -1;
  return a;
}

/* Sets the result's text (a copy). */
int guard__result_text(guard_result *r, const char *text) {
  char *t = strdup(text ? text : "");
  if (t == NULL) return GUARD_ENOMEM;
  free(r->text);
  r->text = t;
  return GUARD_OK;
}

/* Sets the result's reason, printf-style, bounded to 512 bytes. */
int guard__result_reason(guard_result *r, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  char *t = strdup(buf);
  if (t == NULL) return GUARD_ENOMEM;
  free(r->reason);
  r->reason = t;
  return GUARD_OK;
}

/* "provider #n: kind status error" for an attempt. */
void guard__attempt_summary(const guard_attempt *a, char *out, size_t n) {
  char status[16] = "";
  if (a->status) snprintf(status, sizeof status, " %d", a->status);
  snprintf(out, n, "%s #%d: %s%s%s%s", a->provider, a->n,
           guard_kind_name(a->kind), status, a->error[0] ? " " : "", a->error);
}

/* Releases a result. */
void guard_result_free(guard_result *r) {
  if (r == NULL) return;
  for (int i = 0; i < r->nattempts; i++) free(r->attempts[i].partial);
  free(r->attempts);
  free(r->text);
  free(r->reason);
  free(r->provider);
  free(r);
}
