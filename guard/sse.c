/*
 * sse.c - an incremental Server-Sent Events parser, the same for both
 * dialects. Input may be split at any byte; lines end in CR, LF or CRLF; a
 * blank line dispatches the event; ':' starts a comment; several data lines
 * join with '\n'. One line and one event's data are bounded.
 */
#include "guard/guard_int.h"

#include <string.h>

/* Prepares a parser calling cb(ud, ...) for each event. */
void guard__sse_init(guard__sse *s, size_t max_event, guard__sse_cb cb,
                     void *ud) {
  guard__buf_init(&s->line, max_event);
  guard__buf_init(&s->data, max_event);
  s->event[0] = '\0';
  s->has_data = 0;
  s->after_cr = 0;
  s->cb = cb;
  s->ud = ud;
}

/* Releases the parser's memory. */
void guard__sse_free(guard__sse *s) {
  guard__buf_free(&s->line);
  guard__buf_free(&s->data);
}

static int dispatch(guard__sse *s) {
  int rc = 0;
  if (s->has_data) {
    const char *data = s->data.p ? s->data.p : "";
    size_t len = s->data.len;
    if (len > 0 && data[len - 1] == '\n') len--; /* the last line's '\n' */
    rc = s->cb(s->ud, s->event[0] ? s->event : "message", data, len);
  }
  guard__buf_reset(&s->data);
  s->event[0] = '\0';
  s->has_data = 0;
  return rc;
}

/* One complete line (without its end). */
static int on_line(guard__sse *s, const char *p, size_t n) {
  if (n == 0) return dispatch(s);
  if (p[0] == ':') return 0; /* comment */
  const char *colon = memchr(p, ':', n);
  size_t flen = colon ? (size_t)(colon - p) : n;
  const char *v = colon ? colon + 1 : p + n;
  size_t vlen = colon ? n - flen - 1 : 0;
  if (vlen > 0 && v[0] == ' ') {
    v++;
    vlen--;
  }
  if (flen == 4 && memcmp(p, "data", 4) == 0) {
    int rc = guard__buf_add(&s->data, v, vlen);
    if (rc == GUARD_OK) rc = guard__buf_add(&s->data, "\n", 1);
    s->has_data = 1;
    return rc;
  }
  if (flen == 5 && memcmp(p, "event", 5) == 0) {
    if (vlen >= sizeof s->event) vlen = sizeof s->event - 1;
    memcpy(s->event, v, vlen);
    s->event[vlen] = '\0';
  }
  return 0; /* id, retry and unknown fields are ignored */
}

/* Feeds n bytes; returns 0, the callback's nonzero value, or an error. */
int guard__sse_feed(guard__sse *s, const char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (s->after_cr) {
      s->after_cr = 0;
      if (p[i] == '\n') {
        i++;
        continue;
      }
    }
    /* The longest run without a line end goes to the line buffer at once. */
    size_t j = i;
    while (j < n && p[j] != '\n' && p[j] != '\r') j++;
    if (j > i) {
      int rc = guard__buf_add(&s->line, p + i, j - i);
      if (rc != GUARD_OK) return rc;
    }
    if (j == n) break;
    if (p[j] == '\r') s->after_cr = 1;
    int rc = on_line(s, s->line.p ? s->line.p : "", s->line.len);
    guard__buf_reset(&s->line);
    if (rc != 0) return rc;
    i = j + 1;
  }
  return 0;
}

/* Ends the input: an event whose lines were all complete is dispatched; one
 * cut inside a line is dropped whole. */
int guard__sse_finish(guard__sse *s) {
  if (s->line.len > 0) {
    guard__buf_reset(&s->line);
    guard__buf_reset(&s->data);
    s->has_data = 0;
    s->event[0] = '\0';
    return 0;
  }
  return dispatch(s);
}
