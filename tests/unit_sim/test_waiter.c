/* test_waiter.c - timers fire once, in order; shutdown wakes everything.
   Due times in the past fire at once, so nothing here sleeps. */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim_int.h"

typedef struct rec {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int order[16];
  int reasons[16];
  pthread_t threads[16]; /* which thread fired each */
  double at[16];         /* when, on the real clock */
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
  it->r->threads[it->r->n] = pthread_self();
  it->r->at[it->r->n] = sim_now_ms();
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
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(NULL, &wt), 0);
  double now = sim_now_ms();
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
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(NULL, &wt), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, c = {.r = &r, .id = 3};
  sim__waiter_add(wt, &a.w, -1, -1, on_wake, &a);                   /* forever */
  sim__waiter_add(wt, &b.w, sim_now_ms() + 3600e3, -1, on_wake, &b); /* an hour */
  sim__waiter_shutdown(wt);
  CU_ASSERT_EQUAL(r.n, 2);
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_SHUTDOWN);
  CU_ASSERT_EQUAL(r.reasons[1], SIM_WAKE_SHUTDOWN);
  CU_ASSERT_EQUAL(sim__waiter_add(wt, &c.w, -1, -1, on_wake, &c), SIM_EINVAL);
  sim__waiter_free(wt);
}

typedef struct fake_clock {
  pthread_mutex_t lock;
  double ms;
} fake_clock;

static double fake_now(void *ud) {
  fake_clock *fc = ud;
  pthread_mutex_lock(&fc->lock);
  double v = fc->ms;
  pthread_mutex_unlock(&fc->lock);
  return v;
}

static void fake_set(fake_clock *fc, double ms) {
  pthread_mutex_lock(&fc->lock);
  fc->ms = ms;
  pthread_mutex_unlock(&fc->lock);
}

/* 1 when r reaches n fired waits within about 2 s of real time. */
static int fired_soon(rec *r, int n) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 2;
  pthread_mutex_lock(&r->lock);
  while (r->n < n && pthread_cond_timedwait(&r->cond, &r->lock, &until) == 0) {
  }
  int ok = r->n >= n;
  pthread_mutex_unlock(&r->lock);
  return ok;
}

/* Timers on an injected clock: an hour-long delay fires when the clock says
   so, not when the wall clock does, and in due order. The fake clock is
   far from the real one, so a waiter reading the real clock would fire
   nothing here, or everything at once. */
static void test_timers_on_injected_clock(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const double t0 = 1e12; /* 31 years of uptime */
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = t0};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&env, &wt), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, due = {.r = &r, .id = 3};
  sim__waiter_add(wt, &b.w, t0 + 7200e3, -1, on_wake, &b); /* in two hours */
  sim__waiter_add(wt, &a.w, t0 + 3600e3, -1, on_wake, &a); /* in one hour */
  sim__waiter_add(wt, &due.w, t0 - 1, -1, on_wake, &due);  /* due now */
  CU_ASSERT_TRUE(fired_soon(&r, 1));
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 1); /* the same pass would have fired a and b */
  CU_ASSERT_EQUAL(r.order[0], 3);
  pthread_mutex_unlock(&r.lock);
  fake_set(&fc, t0 + 3600e3);
  sim__waiter_kick(wt);
  CU_ASSERT_TRUE(fired_soon(&r, 2));
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 2);
  CU_ASSERT_EQUAL(r.order[1], 1);
  CU_ASSERT_EQUAL(r.reasons[1], SIM_WAKE_TIMER);
  pthread_mutex_unlock(&r.lock);
  fake_set(&fc, t0 + 7200e3);
  sim__waiter_kick(wt);
  CU_ASSERT_TRUE(fired_soon(&r, 3));
  CU_ASSERT_EQUAL(r.order[2], 2);
  CU_ASSERT_EQUAL(r.reasons[2], SIM_WAKE_TIMER);
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 3);
}

/* Timers fire where the connections are: a thread adding a wait, or
   polling, fires the timers already due itself, before returning; a timer
   not yet due stays for later. The waiter thread sleeps an hour of real
   time here (nothing kicks it), so only the calling thread can fire. */
static void test_adding_thread_fires_due_timers(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const double t0 = 1e12;
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = t0};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&env, &wt), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, c = {.r = &r, .id = 3},
       d = {.r = &r, .id = 4};
  sim__waiter_add(wt, &a.w, t0 + 3600e3, -1, on_wake, &a);
  sim__waiter_add(wt, &b.w, t0 + 3600e3 + 10, -1, on_wake, &b);
  fake_set(&fc, t0 + 3600e3); /* a is due, b is 10 ms away */
  sim__waiter_add(wt, &c.w, t0 + 7200e3, -1, on_wake, &c);
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 1); /* fired before sim__waiter_add returned */
  CU_ASSERT_EQUAL(r.order[0], 1);
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_TIMER);
  CU_ASSERT_TRUE(pthread_equal(r.threads[0], pthread_self()));
  pthread_mutex_unlock(&r.lock);
  sim__waiter_poll(wt); /* nothing more is due */
  CU_ASSERT_EQUAL(r.n, 1);
  fake_set(&fc, t0 + 3600e3 + 10);
  sim__waiter_poll(wt); /* b is due now */
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 2);
  CU_ASSERT_EQUAL(r.order[1], 2);
  CU_ASSERT_TRUE(pthread_equal(r.threads[1], pthread_self()));
  pthread_mutex_unlock(&r.lock);
  sim__waiter_add(wt, &d.w, -1, -1, on_wake, &d); /* c stays: not due */
  CU_ASSERT_EQUAL(r.n, 2);
  sim__waiter_free(wt); /* shutdown wakes c and d, once each */
  CU_ASSERT_EQUAL(r.n, 4);
  CU_ASSERT_EQUAL(r.reasons[2], SIM_WAKE_SHUTDOWN);
  CU_ASSERT_EQUAL(r.reasons[3], SIM_WAKE_SHUTDOWN);
}

/* The waiter thread's own sleep is not rounded up to whole milliseconds:
   a timer 3.2 ms away on the real clock fires within a wide bound, and
   never early. */
static void test_waiter_thread_fires_on_time(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(NULL, &wt), 0);
  item a = {.r = &r, .id = 1};
  double due = sim_now_ms() + 3.2;
  sim__waiter_add(wt, &a.w, due, -1, on_wake, &a);
  CU_ASSERT_TRUE(fired_soon(&r, 1));
  CU_ASSERT_TRUE(r.at[0] >= due); /* never early */
  CU_ASSERT_FALSE(pthread_equal(r.threads[0], pthread_self()));
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 1);
}

/* A socket's hang-up ends its wait; the socket stays watched across waits
   (no epoll_ctl per wait), so a hang-up between two waits ends the next
   one at once. Timers on an injected clock: nothing here waits on time. */
static void test_hangup_across_waits(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const double t0 = 1e12;
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = t0};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  sim_waiter *wt;
  int sv[2];
  CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&env, &wt), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, c = {.r = &r, .id = 3};
  sim__waiter_add(wt, &a.w, t0 + 1000, sv[0], on_wake, &a); /* a delay */
  fake_set(&fc, t0 + 1000);
  sim__waiter_poll(wt);
  /* This thread or the waiter thread fires it: adding the first timer woke
     the waiter thread, which may read the clock after fake_set. */
  CU_ASSERT_TRUE(fired_soon(&r, 1));
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_TIMER);
  close(sv[1]); /* the peer leaves between two waits */
  sim__waiter_add(wt, &b.w, -1, sv[0], on_wake, &b); /* a hang: ends at the hang-up */
  CU_ASSERT_TRUE(fired_soon(&r, 2));
  CU_ASSERT_EQUAL(r.order[1], 2);
  CU_ASSERT_EQUAL(r.reasons[1], SIM_WAKE_HANGUP);
  sim__waiter_add(wt, &c.w, -1, sv[0], on_wake, &c); /* and so does the next */
  CU_ASSERT_TRUE(fired_soon(&r, 3));
  CU_ASSERT_EQUAL(r.reasons[2], SIM_WAKE_HANGUP);
  sim__waiter_forget(wt, sv[0]);
  close(sv[0]);
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 3);
}

/* After sim__waiter_forget the fd number's next socket is watched afresh:
   its own hang-up ends its wait (a waiter that thought the number still
   watched would never see it), and the earlier socket's hang-up is not
   taken for it. */
static void test_forget_then_new_socket(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(NULL, &wt), 0);
  int s1[2], s2[2];
  CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, s1), 0);
  item a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2}, c = {.r = &r, .id = 3};
  sim__waiter_add(wt, &a.w, sim_now_ms() - 1, s1[0], on_wake, &a); /* due at once */
  CU_ASSERT_TRUE(fired_soon(&r, 1));
  close(s1[1]); /* hung up while no wait is registered */
  sim__waiter_forget(wt, s1[0]);
  int old = s1[0];
  close(s1[0]);
  CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, s2), 0);
  CU_ASSERT_EQUAL(s2[0], old); /* the lowest free number again */
  sim__waiter_add(wt, &b.w, sim_now_ms() + 3600e3, s2[0], on_wake, &b);
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 1); /* the old socket's hang-up did not end b */
  pthread_mutex_unlock(&r.lock);
  sim__waiter_add(wt, &c.w, -1, -1, on_wake, &c); /* unwatched */
  close(s2[1]);
  CU_ASSERT_TRUE(fired_soon(&r, 2));
  CU_ASSERT_EQUAL(r.order[1], 2);
  CU_ASSERT_EQUAL(r.reasons[1], SIM_WAKE_HANGUP);
  sim__waiter_forget(wt, s2[0]);
  close(s2[0]);
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 3);
  CU_ASSERT_EQUAL(r.reasons[2], SIM_WAKE_SHUTDOWN);
}

/* An event loop's timers (owner 1, 2) are its own: the waiter thread, even
   woken with them due, fires only owner 0's; sim__waiter_fire_due fires
   the owner's due ones on the calling thread and says when the next one
   is due. Injected clock: nothing waits on time. */
static void test_owned_timers_fire_on_their_loop(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const double t0 = 1e12;
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = t0};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  sim_waiter *wt;
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&env, &wt), 0);
  item z = {.r = &r, .id = 0}, a = {.r = &r, .id = 1}, b = {.r = &r, .id = 2},
       c = {.r = &r, .id = 3};
  CU_ASSERT_EQUAL(sim__waiter_add_on(wt, 1, &a.w, t0 + 1000, -1, on_wake, &a), SIM_OK);
  CU_ASSERT_EQUAL(sim__waiter_add_on(wt, 1, &c.w, t0 + 5000, -1, on_wake, &c), SIM_OK);
  CU_ASSERT_EQUAL(sim__waiter_add_on(wt, 2, &b.w, t0 + 500, -1, on_wake, &b), SIM_OK);
  CU_ASSERT_EQUAL(sim__waiter_fire_due(wt, 1), t0 + 1000); /* none due yet */
  CU_ASSERT_EQUAL(r.n, 0);
  sim__waiter_add(wt, &z.w, t0 + 1000, -1, on_wake, &z);
  fake_set(&fc, t0 + 1000); /* a, b and z are due */
  sim__waiter_kick(wt);
  CU_ASSERT_TRUE(fired_soon(&r, 1)); /* the waiter thread's pass */
  pthread_mutex_lock(&r.lock);
  CU_ASSERT_EQUAL(r.n, 1);
  CU_ASSERT_EQUAL(r.order[0], 0);
  CU_ASSERT_FALSE(pthread_equal(r.threads[0], pthread_self()));
  pthread_mutex_unlock(&r.lock);
  CU_ASSERT_EQUAL(sim__waiter_fire_due(wt, 2), -1); /* b, and nothing after */
  CU_ASSERT_EQUAL(r.n, 2);
  CU_ASSERT_EQUAL(r.order[1], 2);
  CU_ASSERT_TRUE(pthread_equal(r.threads[1], pthread_self()));
  CU_ASSERT_EQUAL(sim__waiter_fire_due(wt, 1), t0 + 5000); /* a; c is next */
  CU_ASSERT_EQUAL(r.n, 3);
  CU_ASSERT_EQUAL(r.order[2], 1);
  CU_ASSERT_EQUAL(r.reasons[2], SIM_WAKE_TIMER);
  CU_ASSERT_TRUE(pthread_equal(r.threads[2], pthread_self()));
  CU_ASSERT_EQUAL(sim__waiter_fire_due(wt, 1), t0 + 5000); /* fired once */
  CU_ASSERT_EQUAL(r.n, 3);
  sim__waiter_free(wt); /* shutdown ends c */
  CU_ASSERT_EQUAL(r.n, 4);
  CU_ASSERT_EQUAL(r.order[3], 3);
  CU_ASSERT_EQUAL(r.reasons[3], SIM_WAKE_SHUTDOWN);
}

/* A hang-up ends a loop's timed wait on the waiter thread, and takes it
   off the loop's heap: the loop never fires it again. */
static void test_owned_wait_ends_at_hangup(void) {
  rec r = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};
  const double t0 = 1e12;
  fake_clock fc = {.lock = PTHREAD_MUTEX_INITIALIZER, .ms = t0};
  sim_env env = {.now_ms = fake_now, .ud = &fc};
  sim_waiter *wt;
  int sv[2];
  CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  CU_ASSERT_EQUAL_FATAL(sim__waiter_new(&env, &wt), 0);
  item a = {.r = &r, .id = 1};
  CU_ASSERT_EQUAL(sim__waiter_add_on(wt, 3, &a.w, t0 + 1000, sv[0], on_wake, &a), SIM_OK);
  close(sv[1]);
  CU_ASSERT_TRUE(fired_soon(&r, 1));
  CU_ASSERT_EQUAL(r.reasons[0], SIM_WAKE_HANGUP);
  CU_ASSERT_FALSE(pthread_equal(r.threads[0], pthread_self()));
  fake_set(&fc, t0 + 1000);
  CU_ASSERT_EQUAL(sim__waiter_fire_due(wt, 3), -1);
  CU_ASSERT_EQUAL(r.n, 1);
  sim__waiter_forget(wt, sv[0]);
  close(sv[0]);
  sim__waiter_free(wt);
  CU_ASSERT_EQUAL(r.n, 1);
}

int suite_waiter(void) {
  CU_pSuite s = CU_add_suite("waiter", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "due timers fire once each", test_due_timers_fire_once);
  CU_add_test(s, "shutdown wakes every wait", test_shutdown_wakes_untimed_and_future);
  CU_add_test(s, "timers run on the injected clock", test_timers_on_injected_clock);
  CU_add_test(s, "a thread adding or polling fires due timers itself",
              test_adding_thread_fires_due_timers);
  CU_add_test(s, "the waiter thread fires a real-clock timer", test_waiter_thread_fires_on_time);
  CU_add_test(s, "a hang-up ends the wait, across waits", test_hangup_across_waits);
  CU_add_test(s, "a forgotten fd's next socket is watched afresh", test_forget_then_new_socket);
  CU_add_test(s, "a loop's timers fire on that loop only", test_owned_timers_fire_on_their_loop);
  CU_add_test(s, "a hang-up ends a loop's wait for good", test_owned_wait_ends_at_hangup);
  return CU_get_error();
}
