/*
 * term_safe.c - text from scenarios, logs and traces made harmless for a
 * terminal before the program prints it.
 */
#include "sim/sim.h"

/* Replaces C0 controls (except '\n' and '\t') and DEL by '?', in place.
   Returns text; NULL is returned as NULL. */
char *sim_term_safe(char *text) {
  if (text == NULL) return NULL;
  for (unsigned char *p = (unsigned char *)text; *p; p++)
    if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) *p = '?';
  return text;
}
