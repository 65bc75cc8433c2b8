/*
 * h2c.h - the HTTP/1.1 request that asks to upgrade its connection to
 * cleartext HTTP/2 (RFC 7540 3.2: Upgrade: h2c with HTTP2-Settings), read
 * from a connection's first bytes (h2c.c) before anyone else reads them.
 */
#ifndef FUSEBOX_H2C_H
#define FUSEBOX_H2C_H

#include <stddef.h>
#include <stdint.h>

#define SIM_H2C_MAX_HEAD 8192      /* a longer head is HTTP/1.1's to judge */
#define SIM_H2C_MAX_BODY 65536     /* a larger body is answered in HTTP/1.1 */
#define SIM_H2C_MAX_FIELDS 64
#define SIM_H2C_MAX_SETTINGS 96    /* 16 settings of 6 bytes */

typedef struct sim_h2c_str { const char *p; size_t n; } sim_h2c_str;

/* Points into the bytes it was read from. */
typedef struct sim_h2c_req {
  sim_h2c_str method, path, authority; /* authority: the Host header */
  sim_h2c_str name[SIM_H2C_MAX_FIELDS], value[SIM_H2C_MAX_FIELDS]; /* end-to-end fields */
  int nfields;
  uint8_t settings[SIM_H2C_MAX_SETTINGS]; /* HTTP2-Settings, decoded */
  size_t settings_len;
  size_t head_len;   /* through the blank line */
  size_t body_len;   /* Content-Length, 0 without one */
  const char *body;  /* the bytes after the head */
} sim_h2c_req;

enum { SIM_H2C_NO = 0, SIM_H2C_YES = 1, SIM_H2C_MORE = 2 };

/* Reads the first len bytes of a connection. SIM_H2C_YES when they begin
   with a whole HTTP/1.1 request that asks for h2c well formed (one Host,
   one valid HTTP2-Settings named in Connection beside Upgrade, no
   Transfer-Encoding or Expect, a Content-Length of at most
   SIM_H2C_MAX_BODY) and its whole body: req is filled. SIM_H2C_MORE when
   such a head is whole and its body not yet (req->head_len +
   req->body_len bytes are needed). SIM_H2C_NO for anything else,
   including a head not whole in len bytes: HTTP/1.1 serves it. */
int sim__h2c_parse(const char *buf, size_t len, sim_h2c_req *req);

#endif
