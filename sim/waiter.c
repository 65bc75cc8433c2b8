/*
 * waiter.c - what keeps every suspended connection waiting: min-heaps of
 * timers (delays, stream intervals, stalls) and, on one thread, an epoll
 * set of sockets watched for hang-up (hangs and endless stalls). Thousands
 * of connections wait at the cost of a few bytes each.
 *
 * Timers fire where the connections are. The server's event loops own
 * theirs (owners 1..SIM_LOOPS_MAX: a heap each): a loop adds its waits on
 * its own thread, fires them in sim__waiter_fire_due between turns and
 * sleeps no longer than its next one (loops.c), so a due answer needs no
 * other thread and no wake-up (issue 13). Owner 0's timers are the waiter
 * thread's: it sleeps until the nearest with nanosecond precision
 * (epoll_pwait2, or epoll_wait in whole milliseconds where the kernel or
 * valgrind lacks it), and a thread adding one of them first fires those
 * already due. Hang-ups and shutdown wake any owner's wait, on the waiter
 * thread.
 *
 * A socket is watched for hang-up from its first wait until the server
 * says it is closing (sim__waiter_forget), not added and removed per wait:
 * on this kind of VM each epoll_ctl costs a few microseconds of the loops'
 * CPU, two per delayed request (issue 13 perf profile: 12 % of the
 * server). A hang-up is remembered: a later wait on the socket ends at
 * once (edge-triggered epoll would not tell it again). Events carry the
 * fd and a registration number, so an event of an earlier socket with the
 * same fd number is ignored.
 *
 * A wait is taken off the heap under the lock before it fires, so it is
 * fired once whichever thread fires it, and a woken connection (which the
 * server may free right after) is never touched again here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim_int.h"

#define HEAP_MAX 1000000 /* bounded: one entry per suspended connection */
#define BATCH 256
#define ADD_BATCH 64     /* due timers an adding thread fires at most */
#define FD_MAX (1 << 22) /* bounded: sockets watched by fd number */

/* One timer heap: a min-heap on due_ms. */
typedef struct heap {
  sim_wait **v;
  size_t n, cap;
} heap;

/* The hang-up watch of one fd number. */
typedef struct watch {
  sim_wait *w;      /* the wait registered on it, or NULL */
  uint32_t gen;     /* registration number, in its events */
  unsigned char registered; /* in the epoll set for the current socket */
  unsigned char hup;        /* the peer hung up (it lasts) */
} watch;

struct sim_waiter {
  pthread_mutex_t lock;
  pthread_cond_t drained;
  pthread_t thread;
  int epfd;
  int evfd;         /* wakes the thread when a nearer timer or shutdown comes */
  heap heaps[SIM_WAIT_OWNERS]; /* [0]: the waiter thread's; [k]: event loop k's */
  int stopping;     /* shutdown asked: refuse new waits */
  int stopped;      /* the thread has woken everything and exited */
  sim_wait **untimed; /* waits without a timer, for shutdown */
  size_t nuntimed, capuntimed;
  watch *watches;   /* by fd number */
  size_t nwatches;
  sim_env env;      /* the clock due times are on */
  int no_pwait2;    /* epoll_pwait2 said ENOSYS: epoll_wait in ms instead */
};

static void heap_swap(heap *h, size_t a, size_t b) {
  sim_wait *t = h->v[a];
  h->v[a] = h->v[b];
  h->v[b] = t;
  h->v[a]->heap_idx = a;
  h->v[b]->heap_idx = b;
}

static void heap_up(heap *h, size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h->v[p]->due_ms <= h->v[i]->due_ms) break;
    heap_swap(h, p, i);
    i = p;
  }
}

static void heap_down(heap *h, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->n && h->v[l]->due_ms < h->v[m]->due_ms) m = l;
    if (r < h->n && h->v[r]->due_ms < h->v[m]->due_ms) m = r;
    if (m == i) return;
    heap_swap(h, i, m);
    i = m;
  }
}

static void heap_remove(heap *h, sim_wait *w) {
  size_t i = w->heap_idx;
  h->n--;
  if (i != h->n) {
    h->v[i] = h->v[h->n];
    h->v[i]->heap_idx = i;
    heap_down(h, i);
    heap_up(h, i);
  }
}

static void untimed_remove(sim_waiter *wt, sim_wait *w) {
  size_t i = w->heap_idx;
  wt->nuntimed--;
  if (i != wt->nuntimed) {
    wt->untimed[i] = wt->untimed[wt->nuntimed];
    wt->untimed[i]->heap_idx = i;
  }
}

/* Unregisters w (lock held). The caller fires it after unlocking. Its
   socket stays watched: its next wait needs no system call. */
static void detach(sim_waiter *wt, sim_wait *w) {
  if (w->due_ms >= 0) heap_remove(&wt->heaps[w->owner], w);
  else untimed_remove(wt, w);
  if (w->fd >= 0 && (size_t)w->fd < wt->nwatches && wt->watches[w->fd].w == w)
    wt->watches[w->fd].w = NULL;
  w->active = 0;
}

static uint64_t watch_data(int fd, uint32_t gen) {
  return ((uint64_t)gen << 32) | (uint64_t)(uint32_t)(fd + 1); /* never 0: the eventfd's */
}

/* The watch of fd, grown to fit (lock held); NULL when out of bounds. */
static watch *watch_of(sim_waiter *wt, int fd) {
  if (fd < 0 || fd >= FD_MAX) return NULL;
  if ((size_t)fd >= wt->nwatches) {
    size_t n = wt->nwatches ? wt->nwatches : 1024;
    while (n <= (size_t)fd) n *= 2;
    watch *nw = realloc(wt->watches, n * sizeof *nw);
    if (nw == NULL) return NULL;
    memset(nw + wt->nwatches, 0, (n - wt->nwatches) * sizeof *nw);
    wt->watches = nw;
    wt->nwatches = n;
  }
  return &wt->watches[fd];
}

/* Watches fd for hang-up, once per socket (lock held). 0 when watched. */
static int watch_fd(sim_waiter *wt, watch *x, int fd) {
  if (x->registered) return 0;
  x->gen++;
  struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLET,
                           .data.u64 = watch_data(fd, x->gen)};
  if (epoll_ctl(wt->epfd, EPOLL_CTL_ADD, fd, &ev) != 0 &&
      (errno != EEXIST || epoll_ctl(wt->epfd, EPOLL_CTL_MOD, fd, &ev) != 0))
    return -1;
  x->registered = 1;
  x->hup = 0;
  return 0;
}

static int grow(sim_wait ***v, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  if (need > HEAP_MAX) return -1;
  size_t nc = *cap ? *cap * 2 : 256;
  while (nc < need) nc *= 2;
  sim_wait **nv = realloc(*v, nc * sizeof **v);
  if (nv == NULL) return -1;
  *v = nv;
  *cap = nc;
  return 0;
}

static void fire_all(sim_wait **list, size_t n, int reason) {
  for (size_t i = 0; i < n; i++) list[i]->fn(list[i]->arg, reason);
}

/* Takes up to max timers of owner due at now off its heap into due (lock
   held). */
static size_t take_due(sim_waiter *wt, int owner, double now, sim_wait **due, size_t max) {
  heap *h = &wt->heaps[owner];
  size_t ndue = 0;
  while (h->n > 0 && h->v[0]->due_ms <= now && ndue < max) {
    sim_wait *w = h->v[0];
    detach(wt, w);
    due[ndue++] = w;
  }
  return ndue;
}

/*
 * Waits for socket events until *timeout (NULL: no limit), with nanosecond
 * precision where the kernel has epoll_pwait2. Where it does not (a kernel
 * before 5.11, or valgrind, which does not know the call), it falls back to
 * epoll_wait with the timeout rounded up to the next millisecond, so a timer
 * is never fired early. Returns what epoll returns.
 */
static int wait_events(sim_waiter *wt, struct epoll_event *evs,
                       const struct timespec *timeout) {
  if (!wt->no_pwait2) {
    int k = epoll_pwait2(wt->epfd, evs, BATCH, timeout, NULL);
    if (k >= 0 || errno != ENOSYS) return k;
    wt->no_pwait2 = 1; /* only this thread reads or writes it */
  }
  int ms = -1;
  if (timeout != NULL) {
    double d = (double)timeout->tv_sec * 1000.0 + (double)timeout->tv_nsec / 1e6;
    ms = d >= 2e9 ? 2000000000 : (int)d;
    if ((double)ms < d) ms++;
  }
  return epoll_wait(wt->epfd, evs, BATCH, ms);
}

static void *waiter_main(void *arg) {
  sim_waiter *wt = arg;
  struct epoll_event evs[BATCH];
  sim_wait *due[BATCH];
  for (;;) {
    pthread_mutex_lock(&wt->lock);
    struct timespec ts, *timeout = NULL; /* NULL: until an event */
    if (wt->heaps[0].n > 0) {
      double d = wt->heaps[0].v[0]->due_ms - sim__env_now_ms(&wt->env);
      if (d < 0) d = 0;
      ts.tv_sec = (time_t)(d / 1000.0);
      ts.tv_nsec = (long)((d - (double)ts.tv_sec * 1000.0) * 1e6);
      if (ts.tv_nsec > 999999999L) ts.tv_nsec = 999999999L;
      timeout = &ts;
    }
    int stopping = wt->stopping;
    pthread_mutex_unlock(&wt->lock);
    if (stopping) break;

    int k = wait_events(wt, evs, timeout);
    if (k < 0 && errno != EINTR) break;

    size_t ndue = 0;
    pthread_mutex_lock(&wt->lock);
    for (int i = 0; i < k; i++) {
      if (evs[i].data.u64 == 0) { /* the eventfd */
        uint64_t v;
        if (read(wt->evfd, &v, sizeof v) < 0) { /* nothing to drain */ }
        continue;
      }
      int fd = (int)(uint32_t)(evs[i].data.u64 & 0xffffffffu) - 1;
      uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
      if (fd < 0 || (size_t)fd >= wt->nwatches) continue;
      watch *x = &wt->watches[fd];
      if (!x->registered || x->gen != gen) continue; /* an earlier socket's */
      x->hup = 1; /* a hang-up lasts: every later wait on the socket ends at once */
      if (x->w != NULL && ndue < BATCH) {
        sim_wait *w = x->w;
        detach(wt, w);
        due[ndue++] = w;
      } /* else impossible: k <= BATCH events, one wait each */
    }
    pthread_mutex_unlock(&wt->lock);
    fire_all(due, ndue, SIM_WAKE_HANGUP);

    /* Timers, in batches so the lock is never held while waking. */
    for (;;) {
      double now = sim__env_now_ms(&wt->env);
      pthread_mutex_lock(&wt->lock);
      ndue = take_due(wt, 0, now, due, BATCH);
      pthread_mutex_unlock(&wt->lock);
      if (ndue == 0) break;
      fire_all(due, ndue, SIM_WAKE_TIMER);
    }
  }

  /* Shutdown: wake everything still waiting, then say so. */
  for (;;) {
    size_t ndue = 0;
    pthread_mutex_lock(&wt->lock);
    for (int o = 0; o < SIM_WAIT_OWNERS; o++) {
      heap *h = &wt->heaps[o];
      while (h->n > 0 && ndue < BATCH) {
        sim_wait *w = h->v[h->n - 1];
        detach(wt, w);
        due[ndue++] = w;
      }
    }
    while (wt->nuntimed > 0 && ndue < BATCH) {
      sim_wait *w = wt->untimed[wt->nuntimed - 1];
      detach(wt, w);
      due[ndue++] = w;
    }
    pthread_mutex_unlock(&wt->lock);
    if (ndue == 0) break;
    fire_all(due, ndue, SIM_WAKE_SHUTDOWN);
  }
  pthread_mutex_lock(&wt->lock);
  wt->stopped = 1;
  pthread_cond_broadcast(&wt->drained);
  pthread_mutex_unlock(&wt->lock);
  return NULL;
}

/* Starts the waiter thread on env's clock. Caller owns *out (sim__waiter_free). */
int sim__waiter_new(const sim_env *env, sim_waiter **out) {
  sim_waiter *wt = calloc(1, sizeof *wt);
  if (wt == NULL) return SIM_ENOMEM;
  if (env != NULL) wt->env = *env;
  wt->epfd = epoll_create1(EPOLL_CLOEXEC);
  wt->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wt->epfd < 0 || wt->evfd < 0) goto fail;
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(wt->epfd, EPOLL_CTL_ADD, wt->evfd, &ev) != 0) goto fail;
  pthread_mutex_init(&wt->lock, NULL);
  pthread_cond_init(&wt->drained, NULL);
  if (pthread_create(&wt->thread, NULL, waiter_main, wt) != 0) {
    pthread_mutex_destroy(&wt->lock);
    pthread_cond_destroy(&wt->drained);
    goto fail;
  }
  *out = wt;
  return SIM_OK;
fail:
  if (wt->epfd >= 0) close(wt->epfd);
  if (wt->evfd >= 0) close(wt->evfd);
  free(wt);
  return SIM_EIO;
}

static void kick(sim_waiter *wt) {
  uint64_t one = 1;
  if (write(wt->evfd, &one, sizeof one) < 0) { /* already pending */ }
}

/* Makes the waiter thread read its clock again; see sim_int.h. */
void sim__waiter_kick(sim_waiter *wt) {
  if (wt != NULL) kick(wt);
}

/* Registers a wait on the waiter thread's timers; see sim_int.h. */
int sim__waiter_add(sim_waiter *wt, sim_wait *w, double due_ms, int fd,
                    sim_wake_fn fn, void *arg) {
  return sim__waiter_add_on(wt, 0, w, due_ms, fd, fn, arg);
}

/* Registers a wait on owner's timers, after firing that owner's timers
   already due; see sim_int.h. */
int sim__waiter_add_on(sim_waiter *wt, int owner, sim_wait *w, double due_ms, int fd,
                       sim_wake_fn fn, void *arg) {
  if (owner < 0 || owner >= SIM_WAIT_OWNERS) owner = 0;
  w->due_ms = due_ms;
  w->fd = fd;
  w->fn = fn;
  w->arg = arg;
  w->owner = owner;
  int rc = SIM_OK, nearer = 0;
  sim_wait *due[ADD_BATCH];
  size_t ndue = 0;
  int hung_up = 0;
  double now = sim__env_now_ms(&wt->env);
  heap *h = &wt->heaps[owner];
  pthread_mutex_lock(&wt->lock);
  if (!wt->stopping) ndue = take_due(wt, owner, now, due, ADD_BATCH);
  watch *x = fd >= 0 && !wt->stopping ? watch_of(wt, fd) : NULL;
  if (x == NULL || watch_fd(wt, x, fd) != 0) {
    w->fd = -1; /* not watched: the wait ends at its due time or shutdown */
  } else if (x->hup) {
    hung_up = 1; /* the peer left before this wait: it ends at once */
  }
  if (wt->stopping) {
    rc = SIM_EINVAL;
  } else if (hung_up) {
    w->active = 0;
  } else if (due_ms >= 0) {
    if (grow(&h->v, &h->cap, h->n + 1) != 0) {
      rc = SIM_ENOMEM;
    } else {
      w->heap_idx = h->n;
      h->v[h->n++] = w;
      heap_up(h, w->heap_idx);
      /* only the waiter thread sleeps on heap 0; an owner loop reads its
         next due time before it sleeps (sim__waiter_fire_due) */
      nearer = owner == 0 && h->v[0] == w;
    }
  } else if (grow(&wt->untimed, &wt->capuntimed, wt->nuntimed + 1) != 0) {
    rc = SIM_ENOMEM;
  } else {
    w->heap_idx = wt->nuntimed;
    wt->untimed[wt->nuntimed++] = w;
  }
  if (rc == SIM_OK && !hung_up) {
    w->active = 1;
    if (w->fd >= 0) x->w = w;
  }
  pthread_mutex_unlock(&wt->lock);
  if (nearer) kick(wt);
  fire_all(due, ndue, SIM_WAKE_TIMER);
  if (hung_up) fn(arg, SIM_WAKE_HANGUP);
  return rc;
}

/* Fires owner's due timers on the calling thread; see sim_int.h. */
double sim__waiter_fire_due(sim_waiter *wt, int owner) {
  if (owner < 0 || owner >= SIM_WAIT_OWNERS) return -1;
  heap *h = &wt->heaps[owner];
  /* Only the owner adds to its heap, so an empty heap stays empty until
     it adds: no lock or clock for a loop with no timer (every turn of a
     busy server). */
  if (__atomic_load_n(&h->n, __ATOMIC_RELAXED) == 0) return -1;
  sim_wait *due[BATCH];
  for (;;) {
    double now = sim__env_now_ms(&wt->env), next = -1;
    pthread_mutex_lock(&wt->lock);
    size_t ndue = wt->stopping ? 0 : take_due(wt, owner, now, due, BATCH);
    if (h->n > 0) next = h->v[0]->due_ms;
    pthread_mutex_unlock(&wt->lock);
    fire_all(due, ndue, SIM_WAKE_TIMER);
    if (ndue < BATCH) return next;
  }
}

/* The server closes fd: stop watching it; see sim_int.h. */
void sim__waiter_forget(sim_waiter *wt, int fd) {
  if (wt == NULL || fd < 0) return;
  pthread_mutex_lock(&wt->lock);
  if ((size_t)fd < wt->nwatches && wt->watches[fd].registered) {
    watch *x = &wt->watches[fd];
    /* No EPOLL_CTL_DEL: closing the socket takes it out of the epoll set
       (a system call less per connection). Should the socket stay open
       and be watched again, the ADD finds it there and modifies it, and
       its events meanwhile carry the old registration number. */
    x->registered = 0;
    x->hup = 0;
    if (x->w != NULL) x->w->fd = -1; /* still waiting: its timer or shutdown ends it */
    x->w = NULL;
  }
  pthread_mutex_unlock(&wt->lock);
}

/* Fires, on the calling thread, the timers already due; see sim_int.h. */
void sim__waiter_poll(sim_waiter *wt) {
  sim_wait *due[ADD_BATCH];
  size_t ndue = 0;
  double now = sim__env_now_ms(&wt->env);
  if (pthread_mutex_trylock(&wt->lock) != 0) return; /* the waiter is at it */
  if (!wt->stopping) ndue = take_due(wt, 0, now, due, ADD_BATCH);
  pthread_mutex_unlock(&wt->lock);
  fire_all(due, ndue, SIM_WAKE_TIMER);
}

/* Wakes, on the calling thread, every wait whose arg match accepts; see
   sim_int.h. */
int sim__waiter_wake_if(sim_waiter *wt, int (*match)(void *arg, void *ctx), void *ctx,
                        int reason) {
  if (wt == NULL) return 0;
  int total = 0;
  for (;;) {
    sim_wait *due[BATCH];
    size_t ndue = 0;
    pthread_mutex_lock(&wt->lock);
    /* collected first, detached after: detaching moves heap entries */
    for (int o = 0; o < SIM_WAIT_OWNERS && ndue < BATCH; o++)
      for (size_t i = 0; i < wt->heaps[o].n && ndue < BATCH; i++)
        if (match(wt->heaps[o].v[i]->arg, ctx)) due[ndue++] = wt->heaps[o].v[i];
    for (size_t i = 0; i < wt->nuntimed && ndue < BATCH; i++)
      if (match(wt->untimed[i]->arg, ctx)) due[ndue++] = wt->untimed[i];
    for (size_t i = 0; i < ndue; i++) detach(wt, due[i]);
    pthread_mutex_unlock(&wt->lock);
    if (ndue == 0) return total;
    fire_all(due, ndue, reason);
    total += (int)ndue;
  }
}

/* Wakes every wait with SIM_WAKE_SHUTDOWN, refuses new ones, and returns
   once all have been woken. */
void sim__waiter_shutdown(sim_waiter *wt) {
  if (wt == NULL) return;
  pthread_mutex_lock(&wt->lock);
  wt->stopping = 1;
  pthread_mutex_unlock(&wt->lock);
  kick(wt);
  pthread_mutex_lock(&wt->lock);
  while (!wt->stopped) pthread_cond_wait(&wt->drained, &wt->lock);
  pthread_mutex_unlock(&wt->lock);
}

/* Shuts down (if not yet) and releases the waiter. NULL is a no-op. */
void sim__waiter_free(sim_waiter *wt) {
  if (wt == NULL) return;
  sim__waiter_shutdown(wt);
  pthread_join(wt->thread, NULL);
  close(wt->epfd);
  close(wt->evfd);
  for (int o = 0; o < SIM_WAIT_OWNERS; o++) free(wt->heaps[o].v);
  free(wt->untimed);
  free(wt->watches);
  pthread_mutex_destroy(&wt->lock);
  pthread_cond_destroy(&wt->drained);
  free(wt);
}
