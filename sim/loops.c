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
 * pass). Here a loop sleeps no longer than until its next timer, fires
 * what is due (MHD_resume_connection on its own thread, no wake-up of
 * anyone) and runs the turn that answers it at once.
 *
 * While the loop has timers it waits itself, not in MHD_run_wait: ppoll on
 * the daemon's epoll descriptor (readable when libmicrohttpd has events),
 * to the microsecond, bounded by libmicrohttpd's own next timeout. Then it
 * fires what came due and runs one turn that does not wait, which answers
 * the resumed connections before the new arrivals of that turn. (Waiting
 * in MHD_run_wait on a timerfd instead let a turn's new arrivals go first
 * and left the due answers for the turn after: under 1,000 clients that
 * doubled the p99 error, bench/RESULTS.md.) Without timers it waits in
 * MHD_run_wait: one system call per turn, as libmicrohttpd's own loop.
 *
 * Another thread wakes a loop - a hang-up the waiter saw, shutdown -
 * through an eventfd in the daemon's epoll set whose events carry a NULL
 * pointer, which libmicrohttpd 0.9.75 skips (MHD_epoll, "shutdown
 * signal"): it only makes the wait return. Edge-triggered, so each kick is
 * reported once; the loop drains it when its flag says so.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sim/server_int.h"

struct sim_loop {
  sim_loops *all;
  struct MHD_Daemon *d;
  pthread_t thread;
  int started;
  int evfd;
  int epfd;     /* the daemon's epoll descriptor */
  int kicked;   /* atomic: the eventfd has something to drain */
  int resumed;  /* its own thread resumed a connection: run a turn now */
  int owner;    /* its timers in the waiter: 1 .. SIM_LOOPS_MAX */
  /* sockets accepted elsewhere (front.c), added to the daemon on this
     loop's own thread: libmicrohttpd in external polling is not to be
     called from two threads */
  pthread_mutex_t qlock;
  int qfd[SIM_LOOP_QUEUE];
  int qn;
};

struct sim_loops {
  unsigned next;  /* atomic: the loop the next added socket goes to */
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

/* A connection of l was resumed; see server_int.h. */
void sim__loop_resumed(sim_loop *l) {
  if (l == NULL) return;
  if (l == current) l->resumed = 1; /* libmicrohttpd's own wait would see it; ours must */
  else sim__loop_kick(l);
}

/* Waits until next_due (on the loops' clock), an event of the daemon or
   its next own timeout, whichever comes first. */
static void wait_until(sim_loop *l, double next_due) {
  double d = next_due - sim__env_now_ms(&l->all->env);
  MHD_UNSIGNED_LONG_LONG mhd_ms;
  if (MHD_get_timeout(l->d, &mhd_ms) == MHD_YES && (double)mhd_ms < d) d = (double)mhd_ms;
  if (d <= 0) return;
  if (d > 3600e3) d = 3600e3; /* an injected clock may be far off; look again */
  /* rounded up to the next microsecond: never before the due time */
  long long us = (long long)(d * 1000.0) + 1;
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
  struct pollfd p = {.fd = l->epfd, .events = POLLIN};
  if (ppoll(&p, 1, &ts, NULL) < 0) { /* EINTR: the loop looks again */ }
}

/* Adds the queued sockets to l's daemon (on l's thread). */
static void drain_added(sim_loop *l) {
  int fds[SIM_LOOP_QUEUE], n;
  pthread_mutex_lock(&l->qlock);
  n = l->qn;
  memcpy(fds, l->qfd, (size_t)n * sizeof fds[0]);
  l->qn = 0;
  pthread_mutex_unlock(&l->qlock);
  for (int i = 0; i < n; i++) {
    struct sockaddr_in a = {.sin_family = AF_INET};
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    /* the peer's address as accept() gave it; a bridged HTTP/2 stream
       (a socket pair) reads as AF_UNIX */
    if (getpeername(fds[i], (struct sockaddr *)&peer, &plen) != 0 || plen > sizeof peer) {
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      memcpy(&peer, &a, sizeof a);
      plen = sizeof a;
    }
    (void)MHD_add_connection(l->d, fds[i], (struct sockaddr *)&peer, plen); /* closes it on failure */
  }
}

int sim__loops_add(sim_loops *all, int fd) {
  unsigned k = __atomic_fetch_add(&all->next, 1, __ATOMIC_RELAXED) % (unsigned)all->n;
  sim_loop *l = &all->loop[k];
  int ok = 0;
  pthread_mutex_lock(&l->qlock);
  if (l->qn < SIM_LOOP_QUEUE) {
    l->qfd[l->qn++] = fd;
    ok = 1;
  }
  pthread_mutex_unlock(&l->qlock);
  if (!ok) {
    close(fd); /* a burst beyond the queue: refused, as a full backlog would */
    return -1;
  }
  sim__loop_kick(l);
  return 0;
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
      drain_added(l);
    }
    /* no timer: libmicrohttpd waits for events, but never more than 100 ms,
       so a loop notices `stop` even if its kick was lost (a run hung in
       sim_server_stop once: one loop in epoll_wait(-1) after the kick) */
    int32_t ms = 100;
    double next = sim__waiter_fire_due(all->wt, l->owner);
    if (next >= 0) {
      /* a resumed connection is answered first; else wait here, and fire
         what came due before the turn */
      if (!l->resumed) wait_until(l, next);
      (void)sim__waiter_fire_due(all->wt, l->owner);
      ms = 0;
    }
    l->resumed = 0;
    enum MHD_Result r = MHD_run_wait(l->d, ms);
    sim__conn_turn_done();
    if (r != MHD_YES && !__atomic_load_n(&all->stop, __ATOMIC_ACQUIRE)) {
      struct timespec pause = {0, 1000000}; /* an error turn: do not spin */
      nanosleep(&pause, NULL);
    }
  }
  sim__conn_loop_done();
  return NULL;
}

/* Adds l's eventfd to its daemon's epoll set; 0 on success. */
static int watch_kicks(sim_loop *l) {
  const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->d, MHD_DAEMON_INFO_EPOLL_FD);
  l->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (di == NULL || l->evfd < 0) return -1;
  l->epfd = di->epoll_fd;
  struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = NULL};
  return epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->evfd, &ev);
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
    pthread_mutex_init(&l->qlock, NULL);
    all->n = i + 1;
    /* every loop after the first listens on a duplicate of the first's
       socket, so each daemon closes its own descriptor */
    int fd = i == 0 || listen_fd < 0 ? -1 : dup(listen_fd);
    if (i > 0 && listen_fd >= 0 && fd < 0) {
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
      /* none: the daemons have no socket of their own (front.c accepts) */
      listen_fd = di ? di->listen_fd : -1;
    }
    if (watch_kicks(l) != 0) {
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
    for (int k = 0; k < l->qn; k++) close(l->qfd[k]);
    pthread_mutex_destroy(&l->qlock);
  }
  free(all);
}
