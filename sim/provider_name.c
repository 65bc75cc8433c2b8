/*
 * provider_name.c - what a provider may be called: the name is a path
 * segment of its base URL (http://127.0.0.1:P/<name>/v1), so scenarios,
 * the importer and the router all ask this one function.
 */
#include <string.h>

#include "sim/sim_int.h"

/* 1 when s (len bytes) is 1 to SIM_PROVIDER_NAME_MAX of a-z 0-9 _ - and not
   "v1" (which would shadow the unnamed /v1 base URL). */
int sim_provider_name_ok(const char *s, size_t len) {
  if (s == NULL || len == 0 || len > SIM_PROVIDER_NAME_MAX) return 0;
  if (len == 2 && memcmp(s, "v1", 2) == 0) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}
