/*
 * eventstream.c - AWS's binary event stream framing
 * (application/vnd.amazon.eventstream), what Bedrock's streaming answers
 * are made of. One message is
 *
 *   total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE)
 *   headers | payload | message CRC32 (u32 BE)
 *
 * with both CRCs the IEEE CRC-32 (zlib's crc32()), the prelude's over its
 * first 8 bytes and the message's over everything before it; a header is
 * name length (u8) | name | type (u8; 7 = string) | value length (u16 BE) |
 * value. Only string headers are written: all Bedrock sends.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim/sim_int.h"

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* Largest message this writer makes: far below the framing's own limit
   (16 MiB), and what one stream frame can hold. */
#define ES_MAX ((size_t)16 << 20)

/*
 * One event stream message: nh string headers (names[i] = values[i]) and
 * plen bytes of payload. Returns the message (malloc'd, owned by the
 * caller; one NUL byte after it for safety, not counted) and its length in
 * *len, or NULL when out of memory, a name is over 255 bytes, a value over
 * 65535 or the whole over ES_MAX.
 */
char *sim__es_message(const char *const *names, const char *const *values, int nh,
                      const char *payload, size_t plen, size_t *len) {
  size_t hlen = 0;
  for (int i = 0; i < nh; i++) {
    size_t nl = strlen(names[i]), vl = strlen(values[i]);
    if (nl == 0 || nl > 255 || vl > 65535) return NULL;
    hlen += 1 + nl + 1 + 2 + vl;
  }
  size_t total = 12 + hlen + plen + 4;
  if (total > ES_MAX) return NULL;
  unsigned char *m = malloc(total + 1);
  if (m == NULL) return NULL;
  put32(m, (uint32_t)total);
  put32(m + 4, (uint32_t)hlen);
  put32(m + 8, (uint32_t)crc32(0, m, 8));
  unsigned char *p = m + 12;
  for (int i = 0; i < nh; i++) {
    size_t nl = strlen(names[i]), vl = strlen(values[i]);
    *p++ = (unsigned char)nl;
    memcpy(p, names[i], nl);
    p += nl;
    *p++ = 7; /* string */
    *p++ = (unsigned char)(vl >> 8);
    *p++ = (unsigned char)vl;
    memcpy(p, values[i], vl);
    p += vl;
  }
  if (plen) memcpy(p, payload, plen);
  p += plen;
  put32(p, (uint32_t)crc32(0, m, (uInt)(total - 4)));
  m[total] = '\0';
  *len = total;
  return (char *)m;
}

/* An event message: :event-type type, :content-type application/json,
   :message-type event, and the JSON payload. See sim__es_message. */
char *sim__es_event(const char *type, const char *json, size_t *len) {
  const char *names[] = {":event-type", ":content-type", ":message-type"};
  const char *values[] = {type, "application/json", "event"};
  return json ? sim__es_message(names, values, 3, json, strlen(json), len) : NULL;
}

/* An exception message: :exception-type type, :content-type
   application/json, :message-type exception, and the JSON payload. */
char *sim__es_exception(const char *type, const char *json, size_t *len) {
  const char *names[] = {":exception-type", ":content-type", ":message-type"};
  const char *values[] = {type, "application/json", "exception"};
  return json ? sim__es_message(names, values, 3, json, strlen(json), len) : NULL;
}
