/*
 * waiter.c - one thread that keeps every suspended connection waiting: a
 * min-heap of timers (delays, stream intervals, stalls) and an epoll set of
 * sockets watched for hang-up (hangs and endless stalls). Thousands of
 * connections wait at the cost of one thread and a few bytes each.
 *
 * Only the waiter thread fires waits, so a wait can never be fired twice,
 * and a woken connection (which the server may free right after) is never
 * touched again here.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sim/sim_int.h"

#define HEAP_MAX 1000000 /* bounded: one entry per suspended connection */
#define BATCH 256

struct sim_waiter {
  pthread_mutex_t lock;
  pthread_cond_t drained;
  pthread_t thread;
  int epfd;
  int evfd;         /* wakes the thread when a nearer timer or shutdown comes */
  sim_wait **heap;  /* min-heap on due_ms */
  size_t n, cap;
  int stopping;     /* shutdown asked: refuse new waits */
  int stopped;      /* the thread has woken everything and exited */
  sim_wait **untimed; /* waits without a timer, for shutdown */
  size_t nuntimed, capuntimed;
  sim_env env;      /* the clock due times are on */
};

static void heap_swap(sim_waiter *wt, size_t a, size_t b) {
  sim_wait *t = wt->heap[a];
  wt->heap[a] = wt->heap[b];
  wt->heap[b] = t;
  wt->heap[a]->heap_idx = a;
  wt->heap[b]->heap_idx = b;
}

static void heap_up(sim_waiter *wt, size_t i) {
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (wt->heap[p]->due_ms <= wt->heap[i]->due_ms) break;
    heap_swap(wt, p, i);
    i = p;
  }
}

static void heap_down(sim_waiter *wt, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < wt->n && wt->heap[l]->due_ms < wt->heap[m]->due_ms) m = l;
    if (r < wt->n && wt->heap[r]->due_ms < wt->heap[m]->due_ms) m = r;
    if (m == i) return;
    heap_swap(wt, i, m);
    i = m;
  }
}

static void heap_remove(sim_waiter *wt, sim_wait *w) {
  size_t i = w->heap_idx;
  wt->n--;
  if (i != wt->n) {
    wt->heap[i] = wt->heap[wt->n];
    wt->heap[i]->heap_idx = i;
    heap_down(wt, i);
    heap_up(wt, i);
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

/* Unregisters w (lock held). The caller fires it after unlocking. */
static void detach(sim_waiter *wt, sim_wait *w) {
  if (w->due_ms >= 0) heap_remove(wt, w);
  else untimed_remove(wt, w);
  if (w->fd >= 0) epoll_ctl(wt->epfd, EPOLL_CTL_DEL, w->fd, NULL);
  w->active = 0;
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

static void *waiter_main(void *arg) {
  sim_waiter *wt = arg;
  struct epoll_event evs[BATCH];
  sim_wait *due[BATCH];
  for (;;) {
    pthread_mutex_lock(&wt->lock);
    int timeout = -1;
    if (wt->n > 0) {
      double d = wt->heap[0]->due_ms - sim__env_now_ms(&wt->env);
      timeout = d <= 0 ? 0 : (int)(d + 0.999);
    }
    int stopping = wt->stopping;
    pthread_mutex_unlock(&wt->lock);
    if (stopping) break;

    int k = epoll_wait(wt->epfd, evs, BATCH, timeout);
    if (k < 0 && errno != EINTR) break;

    size_t ndue = 0;
    pthread_mutex_lock(&wt->lock);
    for (int i = 0; i < k; i++) {
      if (evs[i].data.ptr == NULL) { /* the eventfd */
        uint64_t v;
        if (read(wt->evfd, &v, sizeof v) < 0) { /* nothing to drain */ }
        continue;
      }
      sim_wait *w = evs[i].data.ptr;
      if (w->active && ndue < BATCH) {
        detach(wt, w);
        due[ndue++] = w;
      }
    }
    pthread_mutex_unlock(&wt->lock);
    fire_all(due, ndue, SIM_WAKE_HANGUP);

    /* Timers, in batches so the lock is never held while waking. */
    for (;;) {
      ndue = 0;
      double now = sim__env_now_ms(&wt->env);
      pthread_mutex_lock(&wt->lock);
      while (wt->n > 0 && wt->heap[0]->due_ms <= now && ndue < BATCH) {
        sim_wait *w = wt->heap[0];
        detach(wt, w);
        due[ndue++] = w;
      }
      pthread_mutex_unlock(&wt->lock);
      if (ndue == 0) break;
      fire_all(due, ndue, SIM_WAKE_TIMER);
    }
  }

  /* Shutdown: wake everything still waiting, then say so. */
  for (;;) {
    size_t ndue = 0;
    pthread_mutex_lock(&wt->lock);
    while (wt->n > 0 && ndue < BATCH) {
      sim_wait *w = wt->heap[wt->n - 1];
      detach(wt, w);
      due[ndue++] = w;
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

/* Registers a wait; see sim_int.h. */
int sim__waiter_add(sim_waiter *wt, sim_wait *w, double due_ms, int fd,
                    sim_wake_fn fn, void *arg) {
  w->due_ms = due_ms;
  w->fd = fd;
  w->fn = fn;
  w->arg = arg;
  int rc = SIM_OK, nearer = 0;
  pthread_mutex_lock(&wt->lock);
  if (wt->stopping) {
    rc = SIM_EINVAL;
  } else if (due_ms >= 0) {
    if (grow(&wt->heap, &wt->cap, wt->n + 1) != 0) {
      rc = SIM_ENOMEM;
    } else {
      w->heap_idx = wt->n;
      wt->heap[wt->n++] = w;
      heap_up(wt, w->heap_idx);
      nearer = wt->heap[0] == w;
    }
  } else if (grow(&wt->untimed, &wt->capuntimed, wt->nuntimed + 1) != 0) {
    rc = SIM_ENOMEM;
  } else {
    w->heap_idx = wt->nuntimed;
    wt->untimed[wt->nuntimed++] = w;
  }
  if (rc == SIM_OK) {
    w->active = 1;
    if (fd >= 0) {
      struct epoll_event ev = {.events = EPOLLRDHUP | EPOLLHUP | EPOLLERR | EPOLLET,
                               .data.ptr = w};
      if (epoll_ctl(wt->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) w->fd = -1;
    }
  }
  pthread_mutex_unlock(&wt->lock);
  if (nearer) kick(wt);
  return rc;
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
  free(wt->heap);
  free(wt->untimed);
  pthread_mutex_destroy(&wt->lock);
  pthread_cond_destroy(&wt->drained);
  free(wt);
}
