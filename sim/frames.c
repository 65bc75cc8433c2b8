/*
 * frames.c - SSE frames (events) in a byte stream that arrives in pieces
 * of any size: where each frame ends, so the upstream{} step can cut a
 * real answer after N frames (sim/play_upstream.c), and what a frame says
 * (the end marker, an error event, a piece of a tool call's arguments).
 *
 * A frame is a run of lines ended by a blank line (WHATWG HTML, "event
 * stream interpretation"); a line ends with CRLF, LF or CR. A frame of
 * comment lines only (": keep-alive") is not counted: it carries no event.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* Keeps a byte of the frame under way, up to SIM_FRAME_KEEP. */
static void keep(sim_frames *f, char c) {
  if (f->len >= SIM_FRAME_KEEP) return;
  if (f->len + 1 > f->cap) {
    size_t cap = f->cap ? f->cap * 2 : 512;
    if (cap > SIM_FRAME_KEEP + 1) cap = SIM_FRAME_KEEP + 1;
    char *p = realloc(f->buf, cap);
    if (p == NULL) return; /* the frame is still counted, its text cut short */
    f->buf = p;
    f->cap = cap;
  }
  f->buf[f->len++] = c;
}

/* Feeds bytes; see sim_int.h. */
size_t sim__frames_feed(sim_frames *f, const char *p, size_t n, int *ended) {
  *ended = 0;
  if (f->ended) { /* the last call ended a frame: start the next one */
    f->ended = 0;
    f->len = 0;
    f->has_field = 0;
  }
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    if (c == '\n' && f->cr) { /* the LF of a CRLF: the line end was counted */
      f->cr = 0;
      if (f->len > 0 || f->has_field) keep(f, c);
      continue;
    }
    f->cr = c == '\r';
    if (c == '\r' || c == '\n') {
      int blank = f->line_len == 0;
      f->line_len = 0;
      if (!blank) {
        keep(f, c);
        continue;
      }
      if (f->has_field) { /* a blank line ends a frame that carries a field */
        keep(f, c);
        if (f->len < f->cap) f->buf[f->len] = '\0';
        f->count++;
        f->ended = 1;
        *ended = 1;
        return i + 1;
      }
      f->len = 0; /* blank lines between frames, or a frame of comments only */
      continue;
    }
    if (f->line_len == 0 && c != ':') f->has_field = 1;
    f->line_len++;
    keep(f, c);
  }
  return n;
}

/* Releases a splitter's buffer; the splitter may be used again. */
void sim__frames_clear(sim_frames *f) {
  free(f->buf);
  memset(f, 0, sizeof *f);
}

/* 1 when the n bytes at s hold needle. */
static int holds(const char *s, size_t n, const char *needle) {
  size_t m = strlen(needle);
  for (size_t i = 0; m <= n && i <= n - m; i++)
    if (memcmp(s + i, needle, m) == 0) return 1;
  return 0;
}

/* The frame's end-marker: see sim_int.h. */
int sim__frame_is_end(const char *f, size_t n) {
  return holds(f, n, "data: [DONE]") || holds(f, n, "data:[DONE]") ||
         holds(f, n, "event: message_stop") || holds(f, n, "\"type\":\"message_stop\"") ||
         holds(f, n, "event: response.completed") ||
         holds(f, n, "\"type\":\"response.completed\"") ||
         holds(f, n, "event: response.incomplete") ||
         holds(f, n, "\"type\":\"message-end\"");
}

/* An in-stream error event: see sim_int.h. */
int sim__frame_is_error(const char *f, size_t n) {
  return holds(f, n, "event: error") || holds(f, n, "data: {\"error\"") ||
         holds(f, n, "data:{\"error\"") || holds(f, n, "\"type\":\"error\"") ||
         holds(f, n, "event: response.failed");
}

/* 1 when, at s[i], a JSON string value starts that is not empty. */
static int nonempty_after(const char *s, size_t n, const char *key) {
  size_t m = strlen(key);
  for (size_t i = 0; m <= n && i + m < n; i++)
    if (memcmp(s + i, key, m) == 0 && s[i + m] != '"') return 1;
  return 0;
}

/* A piece of a tool call's arguments: see sim_int.h. */
int sim__frame_has_arguments(const char *f, size_t n) {
  return nonempty_after(f, n, "\"arguments\":\"") || nonempty_after(f, n, "\"arguments\": \"") ||
         nonempty_after(f, n, "\"partial_json\":\"") ||
         nonempty_after(f, n, "\"partial_json\": \"") ||
         holds(f, n, "response.function_call_arguments.delta");
}
