/*
 * front.c - the server's listening socket, owned by fusebox so HTTP/1.1
 * and cleartext HTTP/2 share one port (libmicrohttpd speaks only the
 * first). Its thread accepts, peeks at the first bytes (MSG_PEEK: nothing
 * is taken, so libmicrohttpd reads the very bytes the client sent) and
 * hands the connection to a loop (HTTP/1.1) or to a thread of its own
 * running h2_bridge.c (the client preface, HTTP/2 with prior knowledge).
 * A byte that differs from the preface decides at once: "POST", "GET" and
 * every HTTP/1.1 method differ from "PRI " by their second byte at most.
 * An HTTP/1.1 connection whose first bytes are a whole request asking for
 * the h2c Upgrade (sim/h2c.c says which) is read here and goes to the
 * bridge too (sim__h2c_serve); one whose head is whole but not its body
 * waits for it (SO_RCVLOWAT: poll wakes when it is all in) at most until
 * the silent limit, then goes to libmicrohttpd untouched, as every other.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sim/h2_bridge.h"
#include "sim/h2c.h"
#include "sim/server_int.h"

#define FRONT_PENDING 256 /* accepted, first bytes not yet in */
/* A connection silent this long goes to libmicrohttpd as HTTP/1.1 (an
   HTTP/2 client sends its preface at once): its timeouts apply, and 256
   silent connections cannot stop the accepting (issue 29's lesson). */
#define FRONT_SILENT_MS 1000
#define FRONT_H2_MAX 256  /* HTTP/2 connections at once */

struct sim_front {
  int lfd;
  int port;
  int wake[2];              /* a pipe: stop */
  sim_loops *loops;
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t done;
  int h2fd[FRONT_H2_MAX];   /* open HTTP/2 connections (-1 free), shut at stop */
  int nh2;
  int stopping;
  int started;              /* the thread runs */
  char peek[SIM_H2C_MAX_HEAD + SIM_H2C_MAX_BODY]; /* a connection's first bytes (front thread) */
};

typedef struct {
  sim_front *f;
  int slot;
  char *up;     /* an h2c Upgrade request read from the socket, or NULL */
  size_t uplen;
} h2_job;

static int add_to_loops(void *arg, int fd) { return sim__loops_add(arg, fd); }

static void *h2_main(void *arg) {
  h2_job j = *(h2_job *)arg;
  free(arg);
  sim_front *f = j.f;
  int fd = f->h2fd[j.slot];
  if (j.up != NULL) (void)sim__h2c_serve(fd, j.up, j.uplen, add_to_loops, f->loops);
  else (void)sim__h2_serve(fd, add_to_loops, f->loops); /* either closes fd */
  free(j.up);
  pthread_mutex_lock(&f->lock);
  f->h2fd[j.slot] = -1;
  f->nh2--;
  pthread_cond_broadcast(&f->done);
  pthread_mutex_unlock(&f->lock);
  return NULL;
}

/* Starts a thread for an HTTP/2 connection (up: the h2c Upgrade request
   read from it, taken; NULL for prior knowledge); refused (closed) beyond
   FRONT_H2_MAX or at stop. */
static void start_h2(sim_front *f, int fd, char *up, size_t uplen) {
  pthread_mutex_lock(&f->lock);
  int slot = -1;
  for (int i = 0; !f->stopping && i < FRONT_H2_MAX && slot < 0; i++)
    if (f->h2fd[i] < 0) slot = i;
  h2_job *j = slot >= 0 ? malloc(sizeof *j) : NULL;
  pthread_t t;
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  if (j != NULL) {
    *j = (h2_job){f, slot, up, uplen};
    f->h2fd[slot] = fd;
    f->nh2++;
    if (pthread_create(&t, &at, h2_main, j) != 0) {
      f->h2fd[slot] = -1;
      f->nh2--;
      free(j);
      j = NULL;
    }
  }
  pthread_attr_destroy(&at);
  pthread_mutex_unlock(&f->lock);
  if (j == NULL) {
    free(up);
    close(fd);
  }
}

/* 1 HTTP/2, 0 HTTP/1.1, -1 not known yet, -2 closed before a byte. */
static int sniff(int fd) {
  char b[sizeof SIM_H2_PREFACE - 1];
  ssize_t n = recv(fd, b, sizeof b, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0) return -2;
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
  if (memcmp(b, SIM_H2_PREFACE, (size_t)n) != 0) return 0;
  return (size_t)n == sizeof b ? 1 : -1;
}

/* Peeks at an HTTP/1.1 connection's first bytes: SIM_H2C_YES (a whole
   h2c Upgrade request, *need bytes), SIM_H2C_MORE (its body is not all in
   yet: *need bytes will be), or SIM_H2C_NO. */
static int h2c_look(sim_front *f, int fd, size_t *need) {
  ssize_t n = recv(fd, f->peek, sizeof f->peek, MSG_PEEK | MSG_DONTWAIT);
  if (n <= 0) return SIM_H2C_NO;
  sim_h2c_req r;
  int k = sim__h2c_parse(f->peek, (size_t)n, &r);
  *need = r.head_len + r.body_len;
  return k;
}

/* Reads the h2c Upgrade request (its need bytes are in) off fd and hands
   the connection to the bridge. */
static void take_h2c(sim_front *f, int fd, size_t need) {
  char *up = malloc(need);
  if (up == NULL || recv(fd, up, need, MSG_WAITALL) != (ssize_t)need) {
    free(up);
    close(fd);
    return;
  }
  start_h2(f, fd, up, need);
}

/* poll() says readable once n bytes are in (1: as usual). */
static void set_lowat(int fd, size_t n) {
  int v = (int)n;
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v);
}

static long long mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *front_main(void *arg) {
  sim_front *f = arg;
  struct pollfd p[2 + FRONT_PENDING];
  int pend[FRONT_PENDING], np = 0;
  long long since[FRONT_PENDING];
  char lowat[FRONT_PENDING]; /* 1: waits for an h2c request's body */
  for (;;) {
    p[0] = (struct pollfd){.fd = f->wake[0], .events = POLLIN};
    /* the listener is not watched while the pending list is full */
    p[1] = (struct pollfd){.fd = np < FRONT_PENDING ? f->lfd : -1, .events = POLLIN};
    for (int i = 0; i < np; i++)
      p[2 + i] = (struct pollfd){.fd = pend[i], .events = POLLIN | POLLRDHUP};
    if (poll(p, (nfds_t)(2 + np), np > 0 ? 100 : -1) < 0 && errno != EINTR) break;
    if (p[0].revents) break;
    long long now = mono_ms();
    for (int i = np - 1; i >= 0; i--) {
      int silent = now - since[i] >= FRONT_SILENT_MS;
      short ev = p[2 + i].revents;
      if (!ev && !silent) continue;
      int fd = pend[i], kind = ev ? sniff(fd) : 0;
      if (kind == -1 && !silent) continue;
      size_t need = 0;
      if (kind == 0 && !silent && !(ev & (POLLRDHUP | POLLHUP | POLLERR))) {
        int h = h2c_look(f, fd, &need);
        if (h == SIM_H2C_MORE) {
          set_lowat(fd, need);
          lowat[i] = 1;
          continue;
        }
        if (h == SIM_H2C_YES) kind = 2;
      }
      if (lowat[i]) set_lowat(fd, 1);
      pend[i] = pend[np - 1];
      since[i] = since[np - 1];
      lowat[i] = lowat[np - 1];
      np--;
      if (kind == 1) start_h2(f, fd, NULL, 0);
      else if (kind == 2) take_h2c(f, fd, need);
      else if (kind >= -1) (void)sim__loops_add(f->loops, fd);
      else close(fd);
    }
    if (p[1].revents & POLLIN) {
      for (int k = 0; k < 64 && np < FRONT_PENDING; k++) {
        int fd = accept4(f->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) break;
        since[np] = now;
        lowat[np] = 0;
        pend[np++] = fd;
      }
    }
  }
  for (int i = 0; i < np; i++) close(pend[i]);
  return NULL;
}

int sim__front_start(const struct sockaddr *addr, socklen_t len, sim_loops *loops,
                     sim_front **out) {
  sim_front *f = calloc(1, sizeof *f);
  if (f == NULL) return SIM_ENOMEM;
  f->loops = loops;
  for (int i = 0; i < FRONT_H2_MAX; i++) f->h2fd[i] = -1;
  pthread_mutex_init(&f->lock, NULL);
  pthread_cond_init(&f->done, NULL);
  int one = 1;
  f->lfd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  f->wake[0] = f->wake[1] = -1;
  if (f->lfd < 0 || setsockopt(f->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(f->lfd, addr, len) != 0 || listen(f->lfd, 4096) != 0 || pipe(f->wake) != 0) {
    sim__front_stop(f);
    return SIM_ELISTEN;
  }
  struct sockaddr_storage got;
  socklen_t glen = sizeof got;
  if (getsockname(f->lfd, (struct sockaddr *)&got, &glen) == 0)
    f->port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                              : ((struct sockaddr_in *)&got)->sin_port);
  if (pthread_create(&f->thread, NULL, front_main, f) != 0) {
    sim__front_stop(f);
    return SIM_EIO;
  }
  f->started = 1;
  *out = f;
  return SIM_OK;
}

int sim__front_port(const sim_front *f) { return f->port; }

int sim__conn_is_h2(struct MHD_Connection *mc) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  return ci && ci->client_addr && ci->client_addr->sa_family == AF_UNIX;
}

void sim__front_stop(sim_front *f) {
  if (f == NULL) return;
  if (f->started) {
    if (write(f->wake[1], "x", 1) < 0) { /* the pipe is broken: nothing to wake */ }
    pthread_join(f->thread, NULL);
  }
  pthread_mutex_lock(&f->lock);
  f->stopping = 1;
  for (int i = 0; i < FRONT_H2_MAX; i++)
    if (f->h2fd[i] >= 0) shutdown(f->h2fd[i], SHUT_RDWR);
  while (f->nh2 > 0) pthread_cond_wait(&f->done, &f->lock);
  pthread_mutex_unlock(&f->lock);
  if (f->lfd >= 0) close(f->lfd);
  if (f->wake[0] >= 0) close(f->wake[0]);
  if (f->wake[1] >= 0) close(f->wake[1]);
  pthread_mutex_destroy(&f->lock);
  pthread_cond_destroy(&f->done);
  free(f);
}
