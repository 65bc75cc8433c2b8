/*
 * fuzz_h2.c - the HTTP/2 bridge (sim/h2_bridge.c) as the server drives it,
 * with no network: the client's bytes go into sim__h2_recv (what
 * sim__h2_serve does with each recv), its frames into a sink, and each
 * stream's HTTP/1.1 request to a socket pair whose far end plays fusebox's
 * HTTP/1.1 side with a response from the input; sim__h2_pump turns that
 * response into frames, as the serve loop does when poll() says so.
 *
 * Input layout: byte 0 is the mode, the rest the client's bytes up to the
 * marker "\n--fbx-h1--\n", then the HTTP/1.1 response every stream gets
 * (none: each stream is refused, as when the HTTP/1.1 side is full).
 *   bit 0    the client preface is sent first (else the bytes are raw)
 *   bits 1-3 the client's bytes in pieces of 2^(k-1) bytes (k = 0: whole)
 *   bit 4    the sink takes at most 7 bytes a call, bit 5 it says
 *            "would block" every other call
 *   bit 6    the client's bytes begin with an HTTP/1.1 request: when
 *            sim__h2c_parse takes it as an h2c Upgrade, it becomes stream
 *            1 (sim__h2_upgrade, as sim__h2c_serve does) and the bytes
 *            after it are the HTTP/2 ones
 *
 * Checks beyond no crash, leak or UB: an h2c request sim__h2c_parse
 * takes is one nghttp2 takes (its settings checks are nghttp2's); the
 * session's first frame is its
 * SETTINGS; each request the HTTP/1.1 side gets is one request line and
 * header lines each ending in CRLF (no bare CR or LF: no smuggling), with
 * a Content-Length equal to the body bytes that follow it.
 */
#define _GNU_SOURCE /* memmem */
#include "sim/h2_bridge.h"
#include "sim/h2c.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MARK "\n--fbx-h1--\n"
#define MAX_PEERS 64

typedef struct fz {
  int mode;
  const uint8_t *resp; /* NULL: refuse every stream */
  size_t resp_len;
  int peer[MAX_PEERS]; /* the HTTP/1.1 ends, read at the end */
  int npeers;
  uint8_t head[9];     /* the session's first frame header */
  size_t out, calls;
} fz;

static ssize_t sink(void *arg, const uint8_t *data, size_t len) {
  fz *f = arg;
  f->calls++;
  if ((f->mode & 32) && f->calls % 2 == 0) return SIM_H2_WOULDBLOCK;
  if ((f->mode & 16) && len > 7) len = 7;
  for (size_t i = 0; i < len && f->out + i < sizeof f->head; i++) f->head[f->out + i] = data[i];
  f->out += len;
  return (ssize_t)len;
}

/* The HTTP/1.1 side: the response from the input, then end of data. */
static int add(void *arg, int fd) {
  fz *f = arg;
  if (f->resp == NULL || f->npeers == MAX_PEERS) {
    close(fd);
    return -1;
  }
  if (f->resp_len > 0 && send(fd, f->resp, f->resp_len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
      errno != EAGAIN)
    abort();
  shutdown(fd, SHUT_WR);
  f->peer[f->npeers++] = fd;
  return 0;
}

/* One request as the bridge wrote it for the HTTP/1.1 side. */
static void check_request(const char *r, size_t n) {
  if (n == 0) return; /* refused before it was sent */
  const char *end = NULL;
  for (size_t i = 0; i + 3 < n; i++)
    if (memcmp(r + i, "\r\n\r\n", 4) == 0) {
      end = r + i;
      break;
    }
  if (end == NULL) abort(); /* the head is always whole */
  long clen = -1;
  int lines = 0;
  for (const char *p = r; p < end + 2;) {
    const char *e = p;
    while (*e != '\r' && *e != '\n') e++;
    if (e[0] != '\r' || e[1] != '\n') abort(); /* a bare CR or LF */
    if (lines == 0 && (memchr(p, ' ', (size_t)(e - p)) == NULL || e - p < 10 ||
                       memcmp(e - 9, " HTTP/1.1", 9) != 0))
      abort();
    if (e - p > 16 && strncmp(p, "Content-Length: ", 16) == 0) {
      if (clen >= 0) abort(); /* one only: the bridge's own */
      clen = strtol(p + 16, NULL, 10);
    }
    lines++;
    p = e + 2;
  }
  if (clen < 0 || (size_t)clen != n - (size_t)(end + 4 - r)) abort();
}

static void read_peer(int fd) {
  static char buf[1 << 20];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf && (r = recv(fd, buf + n, sizeof buf - n, MSG_DONTWAIT)) > 0) n += (size_t)r;
  close(fd);
  check_request(buf, n);
}

static void pump(sim_h2 *h) {
  for (int i = 0; i < 64 && sim__h2_pump(h, 0) > 0; i++)
    if (sim__h2_send(h) != 0) return;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fz f = {.mode = data[0]};
  const uint8_t *in = data + 1;
  size_t n = size - 1;
  const uint8_t *m = memmem(in, n, MARK, sizeof MARK - 1);
  if (m != NULL) {
    f.resp = m + sizeof MARK - 1;
    f.resp_len = (size_t)(in + n - f.resp);
    n = (size_t)(m - in);
  }
  sim_h2 *h = sim__h2_new(sink, &f, add, &f);
  if (h == NULL) return 0;
  sim_h2c_req up;
  if ((f.mode & 64) && sim__h2c_parse((const char *)in, n, &up) == SIM_H2C_YES) {
    if (sim__h2_upgrade(h, &up) != 0) abort();
    in += up.head_len + up.body_len;
    n -= up.head_len + up.body_len;
  }
  int rc = sim__h2_send(h);
  if (rc == 0 && (f.mode & 1))
    rc = sim__h2_recv(h, (const uint8_t *)SIM_H2_PREFACE, sizeof SIM_H2_PREFACE - 1);
  size_t piece = (f.mode >> 1) & 7 ? (size_t)1 << (((f.mode >> 1) & 7) - 1) : n;
  for (size_t off = 0; rc == 0 && off < n; off += piece) {
    rc = sim__h2_recv(h, in + off, n - off < piece ? n - off : piece);
    if (rc == 0) pump(h);
  }
  if (rc == 0) pump(h);
  sim__h2_free(h);
  /* nghttp2 writes its SETTINGS first: the bridge's own (stream 0) */
  if (f.out >= 9 && !(f.mode & 32) && (f.head[3] != 4 || f.head[5] | f.head[6] | f.head[7] | f.head[8]))
    abort();
  for (int i = 0; i < f.npeers; i++) read_peer(f.peer[i]);
  return 0;
}
