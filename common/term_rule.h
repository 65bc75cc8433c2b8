/*
 * term_rule.h - the one rule for what a terminal must never be sent from
 * text fusebox did not write (scenarios, logs, traces, reports): header-only
 * and pure, so that sim/ (sim_term_safe) and reports/ (rpt__put_term) apply
 * the same rule without either depending on the other.
 *
 * The rule: text is read as UTF-8, unit by unit (a well-formed code point,
 * or one byte that is not part of one). A unit is a terminal control, to be
 * shown as '?', when it is a C0 control (U+0000..U+001F), DEL (U+007F), a C1
 * control (U+0080..U+009F: CSI, OSC, ... to a terminal), or a byte that is
 * not well-formed UTF-8 (a lone 0x80..0x9F is a C1 control to a terminal in
 * 8-bit mode; overlong forms, surrogates and code points past U+10FFFF are
 * refused alike). '\n' and '\t' are C0: a caller that keeps line breaks and
 * tabs tests for them before asking.
 */
#ifndef FUSEBOX_TERM_RULE_H
#define FUSEBOX_TERM_RULE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Decodes the well-formed UTF-8 sequence at s (n >= 1 bytes available):
 * returns its length (1..4) with the code point in *cp, or 0 when s does not
 * start one (a stray continuation byte, a cut, overlong or surrogate form, a
 * code point past U+10FFFF).
 */
static inline size_t term_rule_utf8(const unsigned char *s, size_t n, uint32_t *cp) {
  unsigned char c = s[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  size_t len;
  uint32_t v, min;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    v = c & 0x1F;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    v = c & 0x0F;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    v = c & 0x07;
    min = 0x10000;
  } else {
    return 0;
  }
  if (n < len) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    v = (v << 6) | (s[i] & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

/*
 * The next unit of s (n >= 1 bytes): returns its length (>= 1) and sets
 * *control to 1 when the rule above makes it a terminal control, else 0;
 * *cp is its code point (the byte itself for one that is not UTF-8).
 */
static inline size_t term_rule_next(const unsigned char *s, size_t n, uint32_t *cp,
                                    int *control) {
  size_t len = term_rule_utf8(s, n, cp);
  if (len == 0) {
    *cp = s[0];
    *control = 1;
    return 1;
  }
  *control = *cp < 0x20 || *cp == 0x7F || (*cp >= 0x80 && *cp < 0xA0);
  return len;
}

#endif
