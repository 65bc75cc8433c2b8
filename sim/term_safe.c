/*
 * term_safe.c - text from scenarios, logs and traces made harmless for a
 * terminal before the program prints it, by the rule of common/term_rule.h
 * (the one reports/ applies too).
 */
#include <string.h>

#include "common/term_rule.h"
#include "sim/sim.h"

/* Replaces every terminal control but '\n' and '\t' (term_rule.h: C0, DEL,
   C1, bytes that are not UTF-8) by one '?', in place (the text can only
   shrink). Returns text; NULL is returned as NULL. */
char *sim_term_safe(char *text) {
  if (text == NULL) return NULL;
  const unsigned char *r = (const unsigned char *)text;
  unsigned char *w = (unsigned char *)text;
  size_t n = strlen(text);
  while (n > 0) {
    uint32_t cp;
    int control;
    size_t len = term_rule_next(r, n, &cp, &control);
    if (control && cp != '\n' && cp != '\t') {
      *w++ = '?';
    } else {
      memmove(w, r, len);
      w += len;
    }
    r += len;
    n -= len;
  }
  *w = '\0';
  return text;
}
