/*
 * loops.c - the server's event loops: one thread per loop, each running a
 * libmicrohttpd daemon of its own in "external polling" mode on the one
 * listening socket, and firing the timers of its own connections between
 * turns (issue 13 item 5).
 *
 * Why not libmicrohttpd's thread pool: its loops cannot run a timer, so a
 * delayed answer was resumed from another thread through the loop's
 * eventfd, and under 1,000 clients it waited for the turn in progress and
 * then for the turn that wrote it (bench/RESULTS.md, issue 13 second
 * pass). Here a loop sleeps in MHD_run_wait no longer than until its next
 * timer, fires what is due (MHD_resume_connection on its own thread, no
 * wake-up of anyone) and runs the turn that answers it at once.
 *
 * Two descriptors of the loop's own sit in the daemon's epoll set with
 * events that carry a NULL pointer, which libmicrohttpd 0.9.75 skips
 * (MHD_epoll, "shutdown signal"): each only makes the turn return.
 * - A timerfd armed to the next timer with nanosecond precision
 *   (epoll_wait's own timeout is whole milliseconds: rounded up it made
 *   every delay 0.5 ms late on average). It is set again only when the
 *   next due time changed. The turn's millisecond timeout, rounded up,
 *   stays as a backstop (and serves an injected clock, which a timerfd
 *   cannot follow).
 * - An eventfd by which another thread wakes the loop: a hang-up the
 *   waiter saw, shutdown. The loop drains it when its flag says so.
 * Both are edge-triggered, so each expiry or kick is reported once.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "sim/server_int.h"

struct sim_loop {
  sim_loops *all;
  struct MHD_Daemon *d;
  pthread_t thread;
  int started;
  int evfd;
  int tfd;      /* timerfd, armed to `armed` */
  double armed; /* the due time it is set to; -1: none */
  int kicked;   /* atomic: the eventfd has something to drain */
  int owner;    /* its timers in the waiter: 1 .. SIM_LOOPS_MAX */
};

struct sim_loops {
  sim_waiter *wt;
  sim_env env;
  int stop;     /* atomic */
  int n;
  sim_loop loop[SIM_LOOPS_MAX];
};

static __thread sim_loop *current;

sim_loop *sim__loop_current(void) { return current; }

int sim__loop_owner(const sim_loop *l) { return l ? l->owner : 0; }

/* Wakes l from another thread; see server_int.h. */
void sim__loop_kick(sim_loop *l) {
  if (l == NULL) return;
  uint64_t one = 1;
  __atomic_store_n(&l->kicked, 1, __ATOMIC_RELEASE);
  if (write(l->evfd, &one, sizeof one) < 0) { /* the counter is full: a kick is pending */ }
}

/* How long the loop may sleep: until its next timer, in whole ms rounded
   up; -1 without one. */
static int32_t sleep_ms(const sim_loops *all, double next_due) {
  if (next_due < 0) return -1;
  double d = next_due - sim__env_now_ms(&all->env);
  if (d <= 0) return 0;
  if (d > 1e9) return 1000000000;
  return (int32_t)ceil(d);
}

/* Arms l's timerfd to next_due (on the loops' clock) unless it is set to
   it and has not expired yet (an expiry with the timer still not due, by
   rounding, must be armed again). Without a next timer it is left as it
   is: a stale expiry costs one empty turn, less than a system call to
   disarm it every time. */
static void arm(sim_loop *l, double next_due) {
  if (next_due < 0) {
    l->armed = -1;
    return;
  }
  double d = next_due - sim__env_now_ms(&l->all->env);
  if (next_due == l->armed && d > 0) return;
  /* rounded up to the next microsecond: never before the due time */
  long long us = d > 0 ? (long long)(d * 1000.0) + 1 : 1;
  struct itimerspec it = {{0, 0}, {(time_t)(us / 1000000), (long)(us % 1000000) * 1000}};
  if (timerfd_settime(l->tfd, 0, &it, NULL) == 0) l->armed = next_due;
}

static void *loop_main(void *arg) {
  sim_loop *l = arg;
  sim_loops *all = l->all;
  current = l;
  pthread_setname_np(pthread_self(), "fbx-loop"); /* bench/lib.sh finds it so */
  while (!__atomic_load_n(&all->stop, __ATOMIC_ACQUIRE)) {
    if (__atomic_load_n(&l->kicked, __ATOMIC_RELAXED) &&
        __atomic_exchange_n(&l->kicked, 0, __ATOMIC_ACQ_REL)) {
      uint64_t v;
      if (read(l->evfd, &v, sizeof v) < 0) { /* drained already */ }
    }
    double next = sim__waiter_fire_due(all->wt, l->owner);
    arm(l, next);
    int32_t ms = sleep_ms(all, next);
    if (ms > 0 && ms < 1000000000) ms++; /* the timerfd comes first */
    if (MHD_run_wait(l->d, ms) != MHD_YES &&
        !__atomic_load_n(&all->stop, __ATOMIC_ACQUIRE)) {
      struct timespec pause = {0, 1000000}; /* an error turn: do not spin */
      nanosleep(&pause, NULL);
    }
  }
  return NULL;
}

/* Adds l's eventfd and timerfd to its daemon's epoll set; 0 on success. */
static int watch_own(sim_loop *l) {
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_EPOLL_FD);
  l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  l->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (di == NULL || l->evfd < 0 || l->tfd < 0) return -1;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = NULL};
  if (epoll_ctl(di->epoll_fd, EPOLL_CTL_ADD, l->evfd, &ev) != 0) return -1;
  return epoll_ctl(di->epoll_fd, EPOLL_CTL_ADD, l->tfd, &ev);
}

/* Starts n loops; see server_int.h. */
int sim__loops_start(int n, sim_waiter *wt, const sim_env *env, sim_daemon_fn make, void *arg,
                     sim_loops **out) {
  if (n < 1) n = 1;
  if (n > SIM_LOOPS_MAX) n = SIM_LOOPS_MAX;
  sim_loops *all = calloc(1, sizeof *all);
  if (all == NULL) return SIM_ENOMEM;
  all->wt = wt;
  if (env != NULL) all->env = *env;
  int listen_fd = -1, rc = SIM_OK;
  for (int i = 0; i < n; i++) {
    sim_loop *l = &all->loop[i];
    l->all = all;
    l->owner = i + 1;
    l->evfd = -1;
    l->tfd = -1;
    l->armed = -1;
    all->n = i + 1;
    /* every loop after the first listens on a duplicate of the first's
       socket, so each daemon closes its own descriptor */
    int fd = i == 0 ? -1 : dup(listen_fd);
    if (i > 0 && fd < 0) {
      rc = SIM_EIO;
      break;
    }
    l->d = make(arg, i, n, fd);
    if (l->d == NULL) {
      if (fd >= 0) close(fd);
      rc = SIM_ELISTEN;
      break;
    }
    if (i == 0) {
      const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_LISTEN_FD);
      listen_fd = di ? di->listen_fd : -1;
      if (listen_fd < 0) {
        rc = SIM_EIO;
        break;
      }
    }
    if (watch_own(l) != 0) {
      rc = SIM_EIO;
      break;
    }
  }
  for (int i = 0; rc == SIM_OK && i < n; i++) {
    sim_loop *l = &all->loop[i];
    if (pthread_create(&l->thread, NULL, loop_main, l) != 0) rc = SIM_EIO;
    else l->started = 1;
  }
  if (rc != SIM_OK) {
    sim__loops_stop(all);
    return rc;
  }
  *out = all;
  return SIM_OK;
}

/* The first loop's daemon (its port is the server's). */
struct MHD_Daemon *sim__loops_daemon(const sim_loops *all) {
  return all && all->n > 0 ? all->loop[0].d : NULL;
}

/* Stops every loop, then its daemon; see server_int.h. */
void sim__loops_stop(sim_loops *all) {
  if (all == NULL) return;
  __atomic_store_n(&all->stop, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < all->n; i++)
    if (all->loop[i].started) sim__loop_kick(&all->loop[i]);
  for (int i = 0; i < all->n; i++)
    if (all->loop[i].started) pthread_join(all->loop[i].thread, NULL);
  /* Connections still open end here, on this thread, with their `end`
     lines (how "shutdown"). */
  for (int i = 0; i < all->n; i++) {
    sim_loop *l = &all->loop[i];
    if (l->d != NULL) MHD_stop_daemon(l->d);
    if (l->evfd >= 0) close(l->evfd);
    if (l->tfd >= 0) close(l->tfd);
  }
  free(all);
}
