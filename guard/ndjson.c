/*
 * ndjson.c - an incremental reader of newline-delimited JSON (Ollama's
 * streams): input split anywhere, LF or CRLF line ends, blank lines
 * skipped, one line bounded. It only cuts lines; what a line says is the
 * dialect's (wire_ollama.c).
 */
#include "guard/guard_int.h"

#include <string.h>

/* Prepares a reader calling cb(ud, line, len) per line; max_line bounds one. */
void guard__ndjson_init(guard__ndjson *r, size_t max_line, guard__ndjson_cb cb, void *ud) {
  guard__buf_init(&r->line, max_line);
  r->cb = cb;
  r->ud = ud;
  r->lines = 0;
}

/* Releases the reader's memory. */
void guard__ndjson_free(guard__ndjson *r) { guard__buf_free(&r->line); }

/* Hands the line held (without its CR) to the callback, unless blank. */
static int dispatch(guard__ndjson *r) {
  size_t len = r->line.len;
  const char *p = r->line.p ? r->line.p : "";
  if (len > 0 && p[len - 1] == '\r') len--;
  int rc = 0;
  size_t i = 0;
  while (i < len && (p[i] == ' ' || p[i] == '\t')) i++;
  if (i < len) {
    r->lines++;
    rc = r->cb(r->ud, p, len);
  }
  guard__buf_reset(&r->line);
  return rc;
}

/* Feeds n bytes. Returns 0, the callback's nonzero value, GUARD_ETOOBIG (a
   line over the maximum) or GUARD_ENOMEM. */
int guard__ndjson_feed(guard__ndjson *r, const char *p, size_t n) {
  while (n > 0) {
    const char *nl = memchr(p, '\n', n);
    size_t k = nl ? (size_t)(nl - p) : n;
    int rc = guard__buf_add(&r->line, p, k);
    if (rc != GUARD_OK) return rc;
    if (nl == NULL) return 0;
    rc = dispatch(r);
    if (rc != 0) return rc;
    p += k + 1;
    n -= k + 1;
  }
  return 0;
}

/* Ends the input: a last line without its newline still counts (it may be
   whole JSON; the dialect decides). Returns as guard__ndjson_feed. */
int guard__ndjson_finish(guard__ndjson *r) { return r->line.len > 0 ? dispatch(r) : 0; }
