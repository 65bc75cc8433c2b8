/*
 * eventstream.c - a decoder of AWS's binary event stream
 * (application/vnd.amazon.eventstream), what Bedrock's ConverseStream
 * answers in. One message is
 *
 *   total length (u32 BE) | headers length (u32 BE) | prelude CRC32 (u32 BE)
 *   headers | payload | message CRC32 (u32 BE)
 *
 * Both CRCs are checked: a frame whose bytes changed on the way is a broken
 * stream, not an answer. Input may be split at any byte; one message is
 * bounded. The CRC is zlib's crc32() (the IEEE CRC-32 AWS specifies).
 */
#include "guard/guard_int.h"

#include <string.h>
#include <zlib.h>

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Prepares a decoder calling cb(ud, message) for each whole message;
   max_message bounds one message. */
void guard__es_init(guard__es *e, size_t max_message, guard__es_cb cb, void *ud) {
  memset(e, 0, sizeof *e);
  guard__buf_init(&e->pending, max_message);
  e->cb = cb;
  e->ud = ud;
}

/* Releases the decoder's memory. */
void guard__es_free(guard__es *e) { guard__buf_free(&e->pending); }

/* The name of a broken state, for the attempt log. */
const char *guard__es_broken_name(guard__es_broken b) {
  switch (b) {
  case GUARD__ES_FINE: return "";
  case GUARD__ES_PRELUDE_CRC: return "prelude_crc";
  case GUARD__ES_MESSAGE_CRC: return "message_crc";
  case GUARD__ES_BAD_LENGTH: return "bad_length";
  case GUARD__ES_BAD_HEADER: return "bad_header";
  case GUARD__ES_CUT: return "cut_frame";
  }
  return "?";
}

/* Copies a string header's value into out[n] (truncated). */
static void take_str(char *out, size_t n, const unsigned char *v, size_t len) {
  size_t k = len < n - 1 ? len : n - 1;
  memcpy(out, v, k);
  out[k] = '\0';
}

/* Reads the headers of one message into *m; GUARD__ES_FINE or
   GUARD__ES_BAD_HEADER. Values of the types other than string are skipped. */
static guard__es_broken read_headers(const unsigned char *p, size_t n, guard__es_msg *m) {
  static const int fixed[] = {0, 0, 1, 2, 4, 8, -1, -1, 8, 16}; /* by type; -1: u16 length */
  size_t i = 0;
  while (i < n) {
    size_t nl = p[i++];
    if (nl == 0 || nl > n - i) return GUARD__ES_BAD_HEADER;
    const unsigned char *name = p + i;
    i += nl;
    if (i >= n) return GUARD__ES_BAD_HEADER;
    unsigned type = p[i++];
    if (type >= sizeof fixed / sizeof fixed[0]) return GUARD__ES_BAD_HEADER;
    size_t vl = (size_t)(fixed[type] >= 0 ? fixed[type] : 0);
    if (fixed[type] < 0) {
      if (n - i < 2) return GUARD__ES_BAD_HEADER;
      vl = (size_t)p[i] << 8 | p[i + 1];
      i += 2;
    }
    if (vl > n - i) return GUARD__ES_BAD_HEADER;
    if (type == 7) {
      static const struct { const char *name; size_t off, cap; } known[] = {
          {":message-type", offsetof(guard__es_msg, message_type), sizeof m->message_type},
          {":event-type", offsetof(guard__es_msg, event_type), sizeof m->event_type},
          {":exception-type", offsetof(guard__es_msg, exception_type), sizeof m->exception_type},
          {":error-code", offsetof(guard__es_msg, error_code), sizeof m->error_code},
      };
      for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (strlen(known[k].name) == nl && memcmp(known[k].name, name, nl) == 0)
          take_str((char *)m + known[k].off, known[k].cap, p + i, vl);
    }
    i += vl;
  }
  return GUARD__ES_FINE;
}

/* Decodes the whole message at p (its prelude already checked). */
static int one_message(guard__es *e, const unsigned char *p, uint32_t total, uint32_t hlen) {
  if ((uint32_t)crc32(0, p, total - 4) != get32(p + total - 4)) {
    e->broken = GUARD__ES_MESSAGE_CRC;
    return 1;
  }
  guard__es_msg m;
  memset(&m, 0, sizeof m);
  e->broken = read_headers(p + 12, hlen, &m);
  if (e->broken != GUARD__ES_FINE) return 1;
  m.payload = (const char *)p + 12 + hlen;
  m.payload_len = total - 16 - hlen;
  e->messages++;
  return e->cb(e->ud, &m);
}

/* Checks a prelude; the message's total length in *total, or broken. */
static int check_prelude(guard__es *e, const unsigned char *p, uint32_t *total, uint32_t *hlen) {
  *total = get32(p);
  *hlen = get32(p + 4);
  if ((uint32_t)crc32(0, p, 8) != get32(p + 8)) {
    e->broken = GUARD__ES_PRELUDE_CRC;
    return 1;
  }
  if (*total < 16 || *total > e->pending.max || *hlen > *total - 16) {
    e->broken = GUARD__ES_BAD_LENGTH;
    return 1;
  }
  return 0;
}

/* Feeds n bytes. Returns 0; 1 once the stream is broken (e->broken says
   how; later bytes are ignored); the callback's nonzero value; or
   GUARD_ENOMEM. */
int guard__es_feed(guard__es *e, const char *data, size_t n) {
  if (e->broken != GUARD__ES_FINE) return 1;
  while (n > 0) {
    /* Gather the prelude, then the rest of the message, in pending. */
    size_t have = e->pending.len;
    size_t want = 12;
    uint32_t total = 0, hlen = 0;
    if (have >= 12) {
      total = get32((const unsigned char *)e->pending.p);
      hlen = get32((const unsigned char *)e->pending.p + 4);
      want = total;
    }
    size_t k = want - have < n ? want - have : n;
    int rc = guard__buf_add(&e->pending, data, k);
    if (rc == GUARD_ENOMEM) return rc;
    if (rc != GUARD_OK) { /* cannot happen: the prelude bounded the message */
      e->broken = GUARD__ES_BAD_LENGTH;
      return 1;
    }
    data += k;
    n -= k;
    const unsigned char *p = (const unsigned char *)e->pending.p;
    if (e->pending.len == 12 && have < 12) {
      if (check_prelude(e, p, &total, &hlen)) return 1;
      continue; /* now gather the rest */
    }
    if (e->pending.len >= 12 && e->pending.len == total) {
      rc = one_message(e, p, total, hlen);
      guard__buf_reset(&e->pending);
      if (rc != 0) return rc;
    }
  }
  return 0;
}

/* Ends the input: a message begun and not finished is a cut frame.
   Returns 0, or 1 when the stream is (now) broken. */
int guard__es_finish(guard__es *e) {
  if (e->broken == GUARD__ES_FINE && e->pending.len > 0) e->broken = GUARD__ES_CUT;
  return e->broken != GUARD__ES_FINE;
}
