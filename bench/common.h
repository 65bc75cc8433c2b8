/*
 * common.h - small helpers shared by the bench clients: monotonic time,
 * non-blocking loopback sockets, /proc readings and trace line counting.
 * Header-only so each client builds from one gcc line.
 */
#ifndef FUSEBOX_BENCH_COMMON_H
#define FUSEBOX_BENCH_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static inline void sleep_ms(double ms) {
  struct timespec ts = {.tv_sec = (time_t)(ms / 1000.0),
                        .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000.0) * 1000.0) * 1e6)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Raises the soft open-file limit to the hard one; returns the new soft. */
static inline long raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return -1;
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  getrlimit(RLIMIT_NOFILE, &rl);
  return (long)rl.rlim_cur;
}

/* Starts a non-blocking connect to 127.0.0.1:port; returns the fd or -1. */
static inline int connect_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

/* A "Key:   123 kB" field of /proc/PID/status, in kB; -1 if absent. */
static inline long proc_status_kb(int pid, const char *key) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  long v = -1;
  size_t klen = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
      v = strtol(line + klen + 1, NULL, 10);
      break;
    }
  }
  fclose(f);
  return v;
}

/* Counts complete trace lines with "ev":"<ev>", reading on from where the
   last call stopped (a partial last line is kept for the next call). */
typedef struct trace_counter {
  FILE *f;
  char *pending;
  size_t plen, pcap;
  long arrive, end;
} trace_counter;

static inline int trace_counter_open(trace_counter *tc, const char *path) {
  memset(tc, 0, sizeof *tc);
  tc->f = fopen(path, "r");
  return tc->f ? 0 : -1;
}

static inline void trace_counter_line(trace_counter *tc, const char *line) {
  if (strstr(line, "\"ev\":\"arrive\"")) tc->arrive++;
  else if (strstr(line, "\"ev\":\"end\"")) tc->end++;
}

static inline void trace_counter_poll(trace_counter *tc) {
  char buf[65536];
  size_t n;
  clearerr(tc->f);
  while ((n = fread(buf, 1, sizeof buf, tc->f)) > 0) {
    for (size_t i = 0; i < n; i++) {
      if (tc->plen + 1 >= tc->pcap) {
        tc->pcap = tc->pcap ? tc->pcap * 2 : 4096;
        tc->pending = realloc(tc->pending, tc->pcap);
        if (tc->pending == NULL) abort();
      }
      if (buf[i] == '\n') {
        tc->pending[tc->plen] = '\0';
        trace_counter_line(tc, tc->pending);
        tc->plen = 0;
      } else {
        tc->pending[tc->plen++] = buf[i];
      }
    }
  }
}

static inline void trace_counter_close(trace_counter *tc) {
  if (tc->f) fclose(tc->f);
  free(tc->pending);
}

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n). */
static inline double pct(const double *v, size_t n, double q) {
  if (n == 0) return 0;
  size_t k = (size_t)(q * (double)n + 0.999999);
  if (k < 1) k = 1;
  if (k > n) k = n;
  return v[k - 1];
}

#endif
