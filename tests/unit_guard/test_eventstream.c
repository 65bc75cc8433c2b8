/* test_eventstream.c - the guard's AWS event stream decoder: a hand-made
   frame whose CRCs were computed elsewhere (Python's zlib), a
   bad prelude CRC, a bad message CRC, bad lengths, frames cut at every
   byte, and frames from sim/eventstream.c's encoder (a round trip). */
#include "guard/guard_int.h"
#include "sim/sim_int.h"

#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* What the callback saw. */
typedef struct seen {
  int n;
  guard__es_msg last;
  char payload[256];
  char types[256]; /* "event:TYPE exception:TYPE ..." */
} seen;

static int record(void *ud, const guard__es_msg *m) {
  seen *s = ud;
  s->n++;
  s->last = *m;
  size_t k = m->payload_len < sizeof s->payload - 1 ? m->payload_len : sizeof s->payload - 1;
  memcpy(s->payload, m->payload, k);
  s->payload[k] = '\0';
  size_t off = strlen(s->types);
  snprintf(s->types + off, sizeof s->types - off, "%s%s:%s", off ? " " : "", m->message_type,
           m->event_type[0] ? m->event_type : m->exception_type);
  return 0;
}

/* The frame test vectors: :message-type event, :event-type
   contentBlockDelta, payload PAYLOAD; total 115, headers 54; prelude CRC
   0x14ead0ef and message CRC 0x21321b90, from Python's zlib.crc32. */
#define PAYLOAD "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"hi\"}}"
static const char FRAME[] =
    "\x00\x00\x00\x73\x00\x00\x00\x36\x14\xea\xd0\xef"
    "\x0d:message-type\x07\x00\x05" "event"
    "\x0b:event-type\x07\x00\x11" "contentBlockDelta"
    PAYLOAD
    "\x21\x32\x1b\x90";
#define FRAME_LEN (sizeof FRAME - 1)
/* AWS's "empty message" vector: no headers, no payload. */
static const char EMPTY[] = "\x00\x00\x00\x10\x00\x00\x00\x00\x05\xc2\x48\xeb\x7d\x98\xc8\xff";

static int decode(const char *p, size_t n, size_t step, seen *s, guard__es_broken *broken) {
  memset(s, 0, sizeof *s);
  guard__es e;
  guard__es_init(&e, 1 << 16, record, s);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i += step)
    rc = guard__es_feed(&e, p + i, n - i < step ? n - i : step);
  if (rc == 0) rc = guard__es_finish(&e);
  *broken = e.broken;
  guard__es_free(&e);
  return rc;
}

/* The vectors' CRCs are what the library computes (zlib's crc32()), so a
   wrong vector fails here rather than as a puzzling decode. */
static void test_crc32(void) {
  CU_ASSERT_EQUAL(crc32(0, (const Bytef *)FRAME, 8), 0x14ead0efu);
  CU_ASSERT_EQUAL(crc32(0, (const Bytef *)FRAME, FRAME_LEN - 4), 0x21321b90u);
}

static void test_known_frame(void) {
  seen s;
  guard__es_broken b;
  for (size_t step = 1; step <= FRAME_LEN; step++) { /* split anywhere */
    CU_ASSERT_EQUAL(decode(FRAME, FRAME_LEN, step, &s, &b), 0);
    CU_ASSERT_EQUAL(b, GUARD__ES_FINE);
    CU_ASSERT_EQUAL(s.n, 1);
  }
  CU_ASSERT_STRING_EQUAL(s.last.message_type, "event");
  CU_ASSERT_STRING_EQUAL(s.last.event_type, "contentBlockDelta");
  CU_ASSERT_STRING_EQUAL(s.last.exception_type, "");
  CU_ASSERT_EQUAL(s.last.payload_len, strlen(PAYLOAD));
  CU_ASSERT_STRING_EQUAL(s.payload, PAYLOAD);
  CU_ASSERT_EQUAL(decode(EMPTY, 16, 16, &s, &b), 0);
  CU_ASSERT_EQUAL(s.n, 1);
  CU_ASSERT_EQUAL(s.last.payload_len, 0);
  CU_ASSERT_STRING_EQUAL(s.last.message_type, "");
  /* two frames back to back, split across the boundary */
  char two[2 * FRAME_LEN];
  memcpy(two, FRAME, FRAME_LEN);
  memcpy(two + FRAME_LEN, FRAME, FRAME_LEN);
  CU_ASSERT_EQUAL(decode(two, sizeof two, 7, &s, &b), 0);
  CU_ASSERT_EQUAL(s.n, 2);
}

static void test_bad_crcs(void) {
  char f[FRAME_LEN];
  seen s;
  guard__es_broken b;
  /* Each row: the byte flipped and what the decoder must call it. */
  static const struct { size_t at; guard__es_broken want; } rows[] = {
      {8, GUARD__ES_PRELUDE_CRC},             /* the prelude CRC itself */
      {3, GUARD__ES_PRELUDE_CRC},             /* the total length */
      {7, GUARD__ES_PRELUDE_CRC},             /* the headers length */
      {12 + 54 + 5, GUARD__ES_MESSAGE_CRC},   /* a payload byte */
      {20, GUARD__ES_MESSAGE_CRC},            /* a header byte */
      {FRAME_LEN - 1, GUARD__ES_MESSAGE_CRC}, /* the message CRC itself */
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    memcpy(f, FRAME, FRAME_LEN);
    f[rows[i].at] ^= 0x01;
    CU_ASSERT_EQUAL(decode(f, FRAME_LEN, FRAME_LEN, &s, &b), 1);
    CU_ASSERT_EQUAL(b, rows[i].want);
    CU_ASSERT_EQUAL(s.n, 0); /* nothing of a bad frame is handed on */
  }
  /* Broken is sticky: a good frame after a bad one is not read. */
  char two[2 * FRAME_LEN];
  memcpy(two, FRAME, FRAME_LEN);
  memcpy(two + FRAME_LEN, FRAME, FRAME_LEN);
  two[FRAME_LEN - 2] ^= 0x10;
  CU_ASSERT_EQUAL(decode(two, sizeof two, 1, &s, &b), 1);
  CU_ASSERT_EQUAL(b, GUARD__ES_MESSAGE_CRC);
  CU_ASSERT_EQUAL(s.n, 0);
}

/* A prelude with good CRC and impossible lengths. */
static void test_bad_lengths(void) {
  seen s;
  guard__es_broken b;
  unsigned char p[16] = {0};
  /* total 15 (< 16), and headers longer than the message */
  static const uint32_t rows[][2] = {{15, 0}, {20, 5}, {1u << 30, 0}};
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    for (int k = 0; k < 4; k++) {
      p[k] = (unsigned char)(rows[i][0] >> (24 - 8 * k));
      p[4 + k] = (unsigned char)(rows[i][1] >> (24 - 8 * k));
    }
    uint32_t c = (uint32_t)crc32(0, p, 8);
    for (int k = 0; k < 4; k++) p[8 + k] = (unsigned char)(c >> (24 - 8 * k));
    CU_ASSERT_EQUAL(decode((const char *)p, 16, 16, &s, &b), 1);
    CU_ASSERT_EQUAL(b, GUARD__ES_BAD_LENGTH);
  }
}

static void test_cut(void) {
  seen s;
  guard__es_broken b;
  /* cut at every byte: in the prelude (1..11), the headers, the payload and
     the message CRC; each is a cut frame, never a message */
  for (size_t k = 1; k < FRAME_LEN; k++) {
    CU_ASSERT_EQUAL(decode(FRAME, k, 3, &s, &b), 1);
    CU_ASSERT_EQUAL(b, GUARD__ES_CUT);
    CU_ASSERT_EQUAL(s.n, 0);
  }
  CU_ASSERT_EQUAL(decode(FRAME, 0, 1, &s, &b), 0); /* no bytes: not broken */
  CU_ASSERT_STRING_EQUAL(guard__es_broken_name(GUARD__ES_CUT), "cut_frame");
}

/* A header block that runs past itself, with both CRCs right. */
static void test_bad_header(void) {
  const char *names[] = {":event-type"};
  const char *values[] = {"messageStart"};
  size_t n = 0;
  char *m = sim__es_message(names, values, 1, "{}", 2, &n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  m[12] = 100; /* the name length */
  uint32_t c = (uint32_t)crc32(0, (const Bytef *)m, (uInt)(n - 4));
  for (int k = 0; k < 4; k++) m[n - 4 + k] = (char)(c >> (24 - 8 * k));
  seen s;
  guard__es_broken b;
  CU_ASSERT_EQUAL(decode(m, n, n, &s, &b), 1);
  CU_ASSERT_EQUAL(b, GUARD__ES_BAD_HEADER);
  free(m);
}

/* sim's encoder writes, the guard's decoder reads the same. */
static void test_round_trip(void) {
  size_t n1 = 0, n2 = 0;
  char *a = sim__es_event("contentBlockDelta", PAYLOAD, &n1);
  char *x = sim__es_exception("throttlingException", "{\"message\":\"slow down\"}", &n2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(x);
  char *both = malloc(n1 + n2);
  memcpy(both, a, n1);
  memcpy(both + n1, x, n2);
  seen s;
  guard__es_broken b;
  for (size_t step = 1; step < n1 + n2; step += 13) {
    CU_ASSERT_EQUAL(decode(both, n1 + n2, step, &s, &b), 0);
    CU_ASSERT_EQUAL(s.n, 2);
    CU_ASSERT_STRING_EQUAL(s.types, "event:contentBlockDelta exception:throttlingException");
  }
  CU_ASSERT_STRING_EQUAL(s.payload, "{\"message\":\"slow down\"}");
  /* the same bytes as the hand-made frame, but for the header order */
  CU_ASSERT_EQUAL(n1, FRAME_LEN + 1 + strlen(":content-type") + 3 + strlen("application/json"));
  free(both);
  free(a);
  free(x);
}

int suite_eventstream(void) {
  CU_pSuite s = CU_add_suite("eventstream", NULL, NULL);
  if (s == NULL) return CU_get_error();
  if (!CU_add_test(s, "the vectors' CRC-32s", test_crc32) ||
      !CU_add_test(s, "a hand-made frame with known CRCs, split anywhere", test_known_frame) ||
      !CU_add_test(s, "a bad prelude CRC and a bad message CRC", test_bad_crcs) ||
      !CU_add_test(s, "impossible lengths", test_bad_lengths) ||
      !CU_add_test(s, "a frame cut at every byte", test_cut) ||
      !CU_add_test(s, "a header past its block", test_bad_header) ||
      !CU_add_test(s, "sim's encoder round trip", test_round_trip))
    return CU_get_error();
  return 0;
}
