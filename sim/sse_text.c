/*
 * sse_text.c - the text of a stream, read in place: its word-sized pieces
 * cut from the step's own text, and each piece written as JSON string text
 * a little at a time. With these the player makes one frame at a time from
 * a template instead of holding every piece and every frame of a long
 * answer per connection (issue 11).
 */
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

/* The next piece; see sim_int.h. */
int sim__next_piece(const char *text, size_t len, size_t *pos, const char **piece,
                    size_t *n) {
  size_t i = *pos;
  if (i >= len) return 0;
  size_t j = i;
  while (j < len && text[j] == ' ') j++; /* leading spaces join the word */
  while (j < len && text[j] != ' ') j++;
  *piece = text + i;
  *n = j - i;
  *pos = j;
  return 1;
}

/* The escape of byte ch as cJSON writes it (print_string_ptr), or NULL when
   it is written as itself; short forms in buf. */
static const char *escape_of(unsigned char ch, char buf[8]) {
  switch (ch) {
  case '"': return "\\\"";
  case '\\': return "\\\\";
  case '\b': return "\\b";
  case '\f': return "\\f";
  case '\n': return "\\n";
  case '\r': return "\\r";
  case '\t': return "\\t";
  default:
    if (ch >= 0x20) return NULL;
    snprintf(buf, 8, "\\u%04x", ch);
    return buf;
  }
}

/* JSON string text, written a little at a time; see sim_int.h. */
size_t sim__json_escape_some(const char *src, size_t n, size_t *off, char *dst, size_t max) {
  size_t w = 0, i = *off;
  while (i < n && w < max) {
    /* A run of bytes written as themselves. */
    size_t run = i;
    while (run < n && run - i < max - w) {
      unsigned char ch = (unsigned char)src[run];
      if (ch < 0x20 || ch == '"' || ch == '\\') break;
      run++;
    }
    memcpy(dst + w, src + i, run - i);
    w += run - i;
    i = run;
    if (i >= n || w >= max) break;
    char buf[8];
    const char *e = escape_of((unsigned char)src[i], buf);
    size_t el = strlen(e);
    if (el > max - w) break; /* never split an escape */
    memcpy(dst + w, e, el);
    w += el;
    i++;
  }
  *off = i;
  return w;
}
