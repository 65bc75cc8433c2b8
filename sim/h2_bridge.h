/*
 * h2_bridge.h - cleartext HTTP/2 (prior knowledge) served by turning each
 * stream into an HTTP/1.1 request to fusebox's own listener (h2_bridge.c).
 */
#ifndef FUSEBOX_H2_BRIDGE_H
#define FUSEBOX_H2_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The 24 bytes every HTTP/2 client with prior knowledge sends first. */
#define SIM_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* Takes one end of a socket pair that carries one HTTP/1.1 request (the
   HTTP/1.1 server's side); 0, or -1 having closed it. */
typedef int (*sim_h2_add_fn)(void *arg, int fd);

/* Writes bytes of the session to the client: the count taken, or
   SIM_H2_WOULDBLOCK (try again later), or another negative value (the
   connection is gone). */
#define SIM_H2_WOULDBLOCK (-2)
typedef ssize_t (*sim_h2_send_fn)(void *arg, const uint8_t *data, size_t len);

/* One HTTP/2 connection's session, with no socket of its own: the client's
   bytes come in through sim__h2_recv and its frames go out through out.
   sim__h2_serve drives one over a socket; fuzz/fuzz_h2.c over memory. */
typedef struct sim_h2 sim_h2;

/* A session that has queued its SETTINGS; NULL when out of memory. Owned
   by the caller (release with sim__h2_free). */
sim_h2 *sim__h2_new(sim_h2_send_fn out, void *out_arg, sim_h2_add_fn add, void *add_arg);
/* Takes len bytes from the client (preface first), then sends what the
   session has: 0, 1 when the connection is over (a GOAWAY sent, or
   neither side has more to say), -1 on an error that ends it. */
int sim__h2_recv(sim_h2 *h, const uint8_t *data, size_t len);
/* Sends what the session has queued; 0, 1 or -1 as sim__h2_recv. */
int sim__h2_send(sim_h2 *h);
/* 1 when the session has frames it could not send yet. */
int sim__h2_wants_write(const sim_h2 *h);
/* Waits at most timeout_ms for the streams' HTTP/1.1 sockets and turns
   what they have into frames (queued; sim__h2_send sends them). The
   sockets that had something, 0 for none, -1 on a poll error. */
int sim__h2_pump(sim_h2 *h, int timeout_ms);
/* Closes the streams' sockets (an answered one once it is read to its end,
   or at most 2 s) and releases the session; NULL is a no-op. */
void sim__h2_free(sim_h2 *h);

/* Serves the HTTP/2 connection on fd (blocking; its preface not yet read)
   until either side closes it; each stream becomes an HTTP/1.1 request on
   a socket pair whose other end goes to add (an AF_UNIX peer is how the
   HTTP/1.1 side knows it came over HTTP/2). Closes fd. 0, or -1 when no
   session could be made. */
int sim__h2_serve(int fd, sim_h2_add_fn add, void *add_arg);

struct sim_h2c_req;
/* Makes the request of an h2c Upgrade (sim/h2c.h: read from the HTTP/1.1
   head and body; copied) stream 1 of a new session h, half-closed by the
   client, and sends it to the HTTP/1.1 side; its answer comes as stream
   1's frames once the client's preface is in. Call before the first
   sim__h2_recv. 0, or -1 (bad settings, out of memory: end the session). */
int sim__h2_upgrade(sim_h2 *h, const struct sim_h2c_req *req);

/* Serves a connection whose first len bytes, req (already read from fd,
   still the caller's), are a whole h2c Upgrade request (sim__h2c_parse
   says SIM_H2C_YES): sends 101 Switching Protocols, then serves HTTP/2 on
   fd as sim__h2_serve, the request being stream 1. Closes fd. 0, or -1
   when no session could be made (fd closed, nothing sent). */
int sim__h2c_serve(int fd, const char *req, size_t len, sim_h2_add_fn add, void *add_arg);

/* The line play.c writes on a stream's socket pair instead of a response
   to have the bridge send RST_STREAM (fault SIM_H2_RST) or GOAWAY
   (SIM_H2_GOAWAY) with code: "\0h2 R 7\n". Its length, or -1. */
int sim__h2_fault_line(char *out, size_t cap, int fault, unsigned code);

#endif
