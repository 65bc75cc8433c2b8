/*
 * retry_budget.c - the token bucket shared by every call of a handle: each
 * retry takes `cost` tokens, each success returns `refill`, up to
 * `capacity`. When it is empty, calls fail fast instead of retrying, so a
 * fleet of calls cannot turn an outage into a storm. The handle's mutex is
 * held by every caller.
 */
#include "guard/guard_int.h"

/* Prepares a full bucket (capacity 0 = no retry budget). */
void guard__rbudget_init(guard__rbudget *b, double capacity, double cost,
                         double refill) {
  b->capacity = capacity;
  b->tokens = capacity;
  b->cost = cost;
  b->refill = refill;
}

/* Takes the cost of one retry; 1 when allowed, 0 when the bucket is empty. */
int guard__rbudget_take(guard__rbudget *b) {
  if (b->capacity <= 0) return 1;
  /* A small tolerance so that refills of 0.2 add up to a whole token. */
  if (b->tokens + 1e-9 < b->cost) return 0;
  b->tokens -= b->cost;
  if (b->tokens < 0) b->tokens = 0;
  return 1;
}

/* Returns tokens for one success. */
void guard__rbudget_success(guard__rbudget *b) {
  if (b->capacity <= 0) return;
  b->tokens += b->refill;
  if (b->tokens > b->capacity) b->tokens = b->capacity;
}
