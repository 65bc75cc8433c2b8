/*
 * hdr_memo.c - the "headers" object of a traced arrive line, remembered per
 * keep-alive connection (issue 30).
 *
 * A client sends the same headers on every request of a connection. Making
 * the object means collecting them (names lower-cased, repeats joined),
 * putting each through the redaction rule and escaping it: ~4.5k of the
 * ~40k instructions of a traced request. The memo keeps the request's raw
 * headers (names and values as received, in order) and the JSON written for
 * them; the next arrival whose raw headers are byte for byte the same
 * writes that JSON again. The JSON is a function of the raw headers alone
 * (the redaction rule and the writer keep no state), so it is what the
 * full path would write.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/json_write_int.h"
#include "sim/server_int.h"

/* One connection's memo, its socket context (conn.c makes and frees it). */
struct sim_hdr_memo {
  char *buf;       /* raw_len bytes of raw headers, then json_len of JSON */
  size_t raw_len, json_len;
};

/* JSON longer than this is not kept (the raw side is bounded by
   SIM_HDR_RAW_MAX): a connection holds at most ~12 KiB for its memo. */
#define MEMO_JSON_MAX (8u << 10)

sim_hdr_memo *sim__hdr_memo_new(void) { return calloc(1, sizeof(sim_hdr_memo)); }

void sim__hdr_memo_free(sim_hdr_memo *m) {
  if (m == NULL) return;
  free(m->buf);
  free(m);
}

/* Appends one header to the raw bytes: name, NUL, value, NUL (a value
   libmicrohttpd gives as NULL is "", as the trace writes it). */
static enum MHD_Result raw_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value) {
  (void)kind;
  sim_hdr_raw *r = cls;
  if (key == NULL) return MHD_YES; /* as collect_header: not written */
  size_t kn = strlen(key), vn = value != NULL ? strlen(value) : 0;
  if (kn + vn + 2 > sizeof r->bytes - r->n) {
    r->over = 1; /* too many to remember: the full path, every time */
    return MHD_NO;
  }
  memcpy(r->bytes + r->n, key, kn + 1);
  r->n += kn + 1;
  if (vn > 0) memcpy(r->bytes + r->n, value, vn);
  r->bytes[r->n + vn] = '\0';
  r->n += vn + 1;
  return MHD_YES;
}

/* Reads the request's raw headers; see server_int.h. */
int sim__hdr_memo_hit(const sim_hdr_memo *m, struct MHD_Connection *mc, sim_hdr_raw *r,
                      sim_jw *w) {
  r->n = 0;
  r->over = 0;
  if (m == NULL) return 0;
  MHD_get_connection_values(mc, MHD_HEADER_KIND, raw_header, r);
  if (r->over || m->buf == NULL || m->raw_len != r->n || memcmp(m->buf, r->bytes, r->n) != 0)
    return 0;
  sim__jw_raw(w, m->buf + m->raw_len, m->json_len);
  return 1;
}

/* Remembers the JSON written since `at`; see server_int.h. */
void sim__hdr_memo_keep(sim_hdr_memo *m, const sim_hdr_raw *r, const sim_jw *w, size_t at) {
  if (m == NULL || r->over || w->oom || w->n < at) return;
  size_t jn = w->n - at;
  if (jn > MEMO_JSON_MAX) return;
  char *b = malloc(r->n + jn > 0 ? r->n + jn : 1);
  if (b == NULL) return; /* not remembered: the next one takes the full path */
  memcpy(b, r->bytes, r->n);
  memcpy(b + r->n, w->p + at, jn);
  free(m->buf);
  m->buf = b;
  m->raw_len = r->n;
  m->json_len = jn;
}
