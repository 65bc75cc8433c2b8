/*
 * h2c.c - tells, from a connection's first bytes, whether they are an
 * HTTP/1.1 request asking for the h2c Upgrade that fusebox takes (RFC 7540
 * 3.2). Strict on purpose: anything unusual (a folded line, a stray
 * control byte, a second Content-Length, a chunked body) is left to
 * libmicrohttpd, which answers it in HTTP/1.1 as it always did; RFC 7540
 * lets a server ignore an Upgrade.
 */
#include <string.h>
#include <strings.h>

#include "sim/h2c.h"

static int is_tchar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int name_is(sim_h2c_str s, const char *name) {
  return s.n == strlen(name) && strncasecmp(s.p, name, s.n) == 0;
}

/* 1 when the comma-separated list v holds token (any case). */
static int has_token(sim_h2c_str v, const char *token) {
  size_t i = 0, tl = strlen(token);
  while (i < v.n) {
    while (i < v.n && (v.p[i] == ' ' || v.p[i] == '\t' || v.p[i] == ',')) i++;
    size_t s = i;
    while (i < v.n && v.p[i] != ',' && v.p[i] != ' ' && v.p[i] != '\t') i++;
    if (i - s == tl && strncasecmp(v.p + s, token, tl) == 0) return 1;
  }
  return 0;
}

static int b64url(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* Decodes an HTTP2-Settings value (base64url, '=' padding tolerated) and
   checks it is a SETTINGS payload with legal values (RFC 7540 6.5.2;
   ENABLE_CONNECT_PROTOCOL and NO_RFC7540_PRIORITIES 0 or 1, RFC 8441 3
   and RFC 9218 2.1): what nghttp2_session_upgrade2 takes. 0, or -1. */
static int settings(sim_h2c_str v, sim_h2c_req *r) {
  while (v.n > 0 && v.p[v.n - 1] == '=') v.n--;
  if (v.n % 4 == 1) return -1;
  unsigned acc = 0;
  int bits = 0;
  r->settings_len = 0;
  for (size_t i = 0; i < v.n; i++) {
    int d = b64url(v.p[i]);
    if (d < 0) return -1;
    acc = (acc << 6) | (unsigned)d;
    if ((bits += 6) >= 8) {
      if (r->settings_len == SIM_H2C_MAX_SETTINGS) return -1;
      bits -= 8;
      r->settings[r->settings_len++] = (uint8_t)(acc >> bits);
      acc &= (1u << bits) - 1;
    }
  }
  if (r->settings_len % 6 != 0) return -1;
  for (size_t i = 0; i < r->settings_len; i += 6) {
    const uint8_t *s = r->settings + i;
    unsigned id = (unsigned)s[0] << 8 | s[1];
    uint32_t val = (uint32_t)s[2] << 24 | (uint32_t)s[3] << 16 | (uint32_t)s[4] << 8 | s[5];
    if (((id == 2 || id == 8 || id == 9) && val > 1) || (id == 4 && val > 0x7fffffffu) ||
        (id == 5 && (val < 16384 || val > 0xffffffu)))
      return -1;
  }
  return 0;
}

/* The request line: METHOD SP /path SP HTTP/1.1. Its length, or 0. */
static size_t request_line(const char *b, size_t n, sim_h2c_req *r) {
  size_t i = 0;
  while (i < n && is_tchar(b[i])) i++;
  if (i == 0 || i >= 16 || i >= n || b[i] != ' ') return 0;
  r->method = (sim_h2c_str){b, i};
  size_t p = ++i;
  while (i < n && (unsigned char)b[i] > ' ' && b[i] != 0x7f) i++;
  if (i == p || b[p] != '/' || i - p >= 4096) return 0;
  r->path = (sim_h2c_str){b + p, i - p};
  if (n - i < 11 || memcmp(b + i, " HTTP/1.1\r\n", 11) != 0) return 0;
  return i + 11;
}

/* One field line at b (n bytes up to and with its CRLF): name, value with
   its blanks trimmed. 0, or -1 for a line HTTP/1.1 must judge. */
static int field_line(const char *b, size_t n, sim_h2c_str *name, sim_h2c_str *value) {
  size_t i = 0;
  while (i < n && is_tchar(b[i])) i++;
  if (i == 0 || i >= n || b[i] != ':') return -1;
  *name = (sim_h2c_str){b, i};
  size_t s = i + 1, e = n - 2;
  for (size_t k = s; k < e; k++)
    if (((unsigned char)b[k] < ' ' && b[k] != '\t') || b[k] == 0x7f) return -1;
  while (s < e && (b[s] == ' ' || b[s] == '\t')) s++;
  while (e > s && (b[e - 1] == ' ' || b[e - 1] == '\t')) e--;
  *value = (sim_h2c_str){b + s, e - s};
  return 0;
}

/* Content-Length: digits only, at most SIM_H2C_MAX_BODY. 0, or -1. */
static int content_length(sim_h2c_str v, size_t *out) {
  size_t n = 0;
  if (v.n == 0 || v.n > 6) return -1;
  for (size_t i = 0; i < v.n; i++) {
    if (v.p[i] < '0' || v.p[i] > '9') return -1;
    n = n * 10 + (size_t)(v.p[i] - '0');
  }
  if (n > SIM_H2C_MAX_BODY) return -1;
  *out = n;
  return 0;
}

/* Drops the fields the Connection header names: they were this hop's. */
static void drop_nominated(sim_h2c_req *r, sim_h2c_str conn) {
  int k = 0;
  for (int i = 0; i < r->nfields; i++) {
    char name[64];
    if (r->name[i].n < sizeof name) {
      memcpy(name, r->name[i].p, r->name[i].n);
      name[r->name[i].n] = '\0';
      if (has_token(conn, name)) continue;
    }
    r->name[k] = r->name[i];
    r->value[k++] = r->value[i];
  }
  r->nfields = k;
}

int sim__h2c_parse(const char *buf, size_t len, sim_h2c_req *r) {
  memset(r, 0, sizeof *r);
  size_t lim = len < SIM_H2C_MAX_HEAD ? len : SIM_H2C_MAX_HEAD;
  size_t at = request_line(buf, lim, r);
  int hosts = 0, upgrade = 0, nsettings = 0, ncl = 0, bad = at == 0;
  sim_h2c_str conn = {"", 0};
  while (!bad) {
    const char *e = at < lim ? memchr(buf + at, '\n', lim - at) : NULL;
    if (e == NULL || e == buf + at || e[-1] != '\r') return SIM_H2C_NO; /* not whole */
    size_t n = (size_t)(e - buf - at) + 1;
    if (n == 2) {
      at += 2;
      break;
    }
    sim_h2c_str name, v;
    if (field_line(buf + at, n, &name, &v) != 0) return SIM_H2C_NO;
    at += n;
    if (name_is(name, "host")) hosts++, r->authority = v;
    else if (name_is(name, "upgrade")) upgrade |= has_token(v, "h2c");
    else if (name_is(name, "http2-settings")) bad |= nsettings++ > 0 || settings(v, r) != 0;
    else if (name_is(name, "connection")) conn = v;
    else if (name_is(name, "content-length")) bad |= ncl++ > 0 || content_length(v, &r->body_len) != 0;
    else if (name_is(name, "transfer-encoding") || name_is(name, "expect")) bad = 1;
    else if (name_is(name, "keep-alive") || name_is(name, "proxy-connection") || name_is(name, "te")) continue;
    else if (r->nfields == SIM_H2C_MAX_FIELDS) bad = 1;
    else r->name[r->nfields] = name, r->value[r->nfields++] = v;
  }
  if (bad || hosts != 1 || !upgrade || nsettings != 1 || !has_token(conn, "upgrade") ||
      !has_token(conn, "http2-settings"))
    return SIM_H2C_NO;
  drop_nominated(r, conn);
  r->head_len = at;
  r->body = buf + at;
  return len - at >= r->body_len ? SIM_H2C_YES : SIM_H2C_MORE;
}
