/*
 * h2_bridge.h - cleartext HTTP/2 (prior knowledge) served by turning each
 * stream into an HTTP/1.1 request to fusebox's own listener (h2_bridge.c).
 */
#ifndef FUSEBOX_H2_BRIDGE_H
#define FUSEBOX_H2_BRIDGE_H

/* The 24 bytes every HTTP/2 client with prior knowledge sends first. */
#define SIM_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

/* Takes one end of a socket pair that carries one HTTP/1.1 request (the
   HTTP/1.1 server's side); 0, or -1 having closed it. */
typedef int (*sim_h2_add_fn)(void *arg, int fd);

/* Serves the HTTP/2 connection on fd (blocking; its preface not yet read)
   until either side closes it; each stream becomes an HTTP/1.1 request on
   a socket pair whose other end goes to add (an AF_UNIX peer is how the
   HTTP/1.1 side knows it came over HTTP/2). Closes fd. 0, or -1 when no
   session could be made. */
int sim__h2_serve(int fd, sim_h2_add_fn add, void *add_arg);

/* The line play.c writes on a stream's socket pair instead of a response
   to have the bridge send RST_STREAM (fault SIM_H2_RST) or GOAWAY
   (SIM_H2_GOAWAY) with code: "\0h2 R 7\n". Its length, or -1. */
int sim__h2_fault_line(char *out, size_t cap, int fault, unsigned code);

#endif
