/* test_waiter.c - timers fire once, in order; shutdown wakes everything.
   Due times in the past fire at once, so nothing here sleeps. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <string.h>

#include "sim/sim_int.h"

typedef struct rec {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int order[16];
  int reasons[16];
  int n;
} rec;

typedef struct item {
  rec *r;
  int id;
  sim_wait w;
} item;

static void on_wake(void *arg, int reason) {
  item *it = arg;
  pthread_mutex_lock(&it->r->lock);
  it->r->order[it->r->n] = it->id;
  it->r->reasons[it->r->n] = reason;
  it->r->n++;
  pthread_cond_broadcast(&it->r->cond);
  pthread_mutex_unlock(&it->r->lock);
}

static void wait_for(rec *r, int n) {
  pthread_mutex_lock(&r->lock);
  while (r->n < n) pthread_cond_wait(&r->cond, &r->lock);
  pthread_mutex_unlock(&r->lock);
}

static void test_due_timers_fire_once(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&wt), 0);
  double now = sim__now_ms();
  item it[4];
  for (int i = 0; i < 4; i++) it[i] = (item){.r = &r, .id = i};
  /* All already due, so they fire at once. */
  sim__waiter_add(wt, &it[0].w, now - 10, -1, on_wake, &it[0]);
  sim__waiter_add(wt, &it[1].w, now - 40, -1, on_wake, &it[1]);
  sim__waiter_add(wt, &it[2].w, now - 30, -1, on_wake, &it[2]);
  wait_for(&r, 3);
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_TIMER);
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 3); /* each fired exactly once */
}

static void test_shutdown_wakes_untimed_and_future(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&wt), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, c = {.r = &r, .id = 3};
  sim__waiter_add(wt, &a.w, -1, -1, on_wake, &a);                   /* forever */
  sim__waiter_add(wt, &b.w, sim__now_ms() + 3600e3, -1, on_wake, &b); /* an hour */
  sim__waiter_shutdown(wt);
  CU_ASSERT_EQUAL(r.n, 2);
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_SHUTDOWN);
  CU_ASSERT_EQUAL(r.reasons[1], SIM_WAKE_SHUTDOWN);
  CU_ASSERT_EQUAL(sim__waiter_add(wt, &c.w, -1, -1, on_wake, &c), SIM_EINVAL);
  sim__waiter_free(wt);
}

int suite_waiter(void) {
  CU_pSuite s = CU_add_suite("waiter", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "due timers fire once each", test_due_timers_fire_once);
  CU_add_test(s, "shutdown wakes every wait", test_shutdown_wakes_untimed_and_future);
  return CU_get_error();
}
