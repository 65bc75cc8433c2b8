/*
 * keying.c - which logical request an arrival belongs to. Which headers are
 * secrets is sim/redact.c's rule.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim/sim_int.h"

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

static uint64_t fnv1a(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= FNV_PRIME;
  }
  return h;
}

/*
 * Writes the logical request key of an arrival into out (cap bytes):
 * "idem:<key>" when an Idempotency-Key was sent, else "hash:<16 hex>" of
 * method, path and body. Returns 0, or SIM_EINVAL if out is too small.
 */
int sim_request_key(const char *idem_key, const char *method, const char *path,
                    const char *body, size_t body_len, char *out, size_t cap) {
  int n;
  if (idem_key != NULL && idem_key[0] != '\0') {
    n = snprintf(out, cap, "idem:%s", idem_key);
  } else {
    uint64_t h = FNV_OFFSET;
    h = fnv1a(h, method, strlen(method));
    h = fnv1a(h, "\n", 1);
    h = fnv1a(h, path, strlen(path));
    h = fnv1a(h, "\n", 1);
    if (body_len > 0) h = fnv1a(h, body, body_len);
    char full[22]; /* "hash:" and 16 digits, without snprintf (every request) */
    memcpy(full, "hash:", 5);
    *sim__put_hex(full + 5, h, 16) = '\0';
    n = 21;
    if (cap > 0) { /* as snprintf: cut to fit, always terminated */
      size_t k = cap - 1 < 21 ? cap - 1 : 21;
      memcpy(out, full, k);
      out[k] = '\0';
    }
  }
  return (n < 0 || (size_t)n >= cap) ? SIM_EINVAL : SIM_OK;
}

/* Hex digits of v; see sim_int.h. */
char *sim__put_hex(char *o, uint64_t v, int min) {
  char tmp[16];
  int n = 0;
  do tmp[n++] = "0123456789abcdef"[v & 15]; while ((v >>= 4) != 0);
  while (n < min) tmp[n++] = '0';
  while (n > 0) *o++ = tmp[--n];
  return o;
}

/* A 64-bit FNV-1a fingerprint of bytes, as 16 hex digits in out[17]. */
void sim__fingerprint(const void *data, size_t len, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)fnv1a(FNV_OFFSET, data, len));
}
