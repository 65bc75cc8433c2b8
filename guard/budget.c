/*
 * budget.c - the token budget, checked before any request: an estimate of
 * the call (its texts at about four characters a token, plus max_tokens)
 * against the per-call limit, and against the session limit counting what
 * was charged and what calls in flight reserved. Only answers actually
 * produced are charged. The handle's mutex is held by every caller.
 */
#include "guard/guard_int.h"

#include <stdio.h>
#include <string.h>

/* Tokens in chars characters of text, as the client reckons them: a token
   is about four characters, rounded up. The one rule for every estimate the
   client makes (the budget before a call, an answer without usage). */
long guard__tokens_of(size_t chars) { return (long)((chars + 3) / 4); }

/* guard__tokens_of the request's texts plus its max_tokens. */
long guard__estimate(const guard_chat_request *req) {
  size_t chars = req->system ? strlen(req->system) : 0;
  for (int i = 0; i < req->nmessages; i++)
    if (req->messages[i].content) chars += strlen(req->messages[i].content);
  long max_tokens = req->max_tokens > 0 ? req->max_tokens : 1024;
  return guard__tokens_of(chars) + max_tokens;
}

/* Checks est against both limits and reserves it; 1 when blocked. */
int guard__budget_reserve(guard__budget *b, long per_call, long per_session,
                          long est, char *why, size_t n) {
  if (per_call > 0 && est > per_call) {
    snprintf(why, n, "over the per-call token budget: estimate %ld > %ld", est,
             per_call);
    return 1;
  }
  if (per_session > 0 && b->used + b->reserved + est > per_session) {
    snprintf(why, n,
             "over the session token budget: %ld used + %ld in flight + "
             "estimate %ld > %ld",
             b->used, b->reserved, est, per_session);
    return 1;
  }
  b->reserved += est;
  return 0;
}

/* Drops a call's reservation and charges what it produced. */
void guard__budget_settle(guard__budget *b, long est, long charged) {
  b->reserved -= est;
  if (b->reserved < 0) b->reserved = 0;
  if (charged > 0) b->used += charged;
}
