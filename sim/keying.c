/*
 * keying.c - which logical request an arrival belongs to. Which headers are
 * secrets is sim/redact.c's rule.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim/sim_int.h"

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

/* FNV-1a, eight bytes a turn: the same value, a third fewer instructions
   (every request's key hashes its whole body; issue 30). */
static uint64_t fnv1a(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data, *end = p + len;
  for (; end - p >= 8; p += 8) {
    h = (h ^ p[0]) * FNV_PRIME;
    h = (h ^ p[1]) * FNV_PRIME;
    h = (h ^ p[2]) * FNV_PRIME;
    h = (h ^ p[3]) * FNV_PRIME;
    h = (h ^ p[4]) * FNV_PRIME;
    h = (h ^ p[5]) * FNV_PRIME;
    h = (h ^ p[6]) * FNV_PRIME;
    h = (h ^ p[7]) * FNV_PRIME;
  }
  for (; p < end; p++) h = (h ^ *p) * FNV_PRIME;
  return h;
}

/* SHA-256 hex of bytes; see sim_int.h. */
void sim__key_digest(const void *data, size_t len, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  if (EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
    /* libcrypto failed (out of memory): FNV of the bytes and of their
       length, never an empty name */
    uint64_t a = fnv1a(FNV_OFFSET, data, len), b = fnv1a(a, &len, sizeof len);
    snprintf(out, 65, "%016llx%016llx%032d", (unsigned long long)a, (unsigned long long)b, 0);
    return;
  }
  for (int i = 0; i < 32; i++) {
    out[2 * i] = "0123456789abcdef"[md[i] >> 4];
    out[2 * i + 1] = "0123456789abcdef"[md[i] & 15];
  }
  out[64] = '\0';
}

/* Bytes of s to show before a digest: at most max, not cutting a UTF-8
   character. */
static size_t shown_prefix(const char *s, size_t max) {
  size_t n = strlen(s);
  if (n <= max) return n;
  n = max;
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  return n;
}

/*
 * Writes the logical request key of an arrival into out (cap bytes):
 * "idem:<key>" when an Idempotency-Key was sent, else "hash:<16 hex>" of
 * method, path and body. A key longer than SIM_KEY_RAW_MAX is
 * "idem:<its first 64 bytes>...#<SHA-256 of the whole key>": two long keys
 * that share a prefix stay two logical requests. A key the secret rule
 * (sim_redact_text) redacts is "idem:<its redacted text>#<SHA-256>": the
 * trace, Redis and req.key never hold it. Returns 0, or SIM_EINVAL if out
 * is too small.
 */
int sim_request_key(const char *idem_key, const char *method, const char *path,
                    const char *body, size_t body_len, char *out, size_t cap) {
  int n;
  char *shown = NULL;
  if (idem_key != NULL && idem_key[0] != '\0') shown = sim_redact_text(idem_key, strlen(idem_key));
  /* a key the secret rule redacts (an sk-... used as Idempotency-Key) is
     shown redacted, and told apart by its digest */
  int secret = shown == NULL || strcmp(shown, idem_key != NULL ? idem_key : "") != 0;
  if (idem_key != NULL && idem_key[0] != '\0' && (secret || strlen(idem_key) > SIM_KEY_RAW_MAX)) {
    char d[65];
    sim__key_digest(idem_key, strlen(idem_key), d);
    const char *v = shown ? shown : "[redacted]";
    size_t k = shown_prefix(v, 64);
    n = snprintf(out, cap, "idem:%.*s%s#%s", (int)k, v, v[k] ? "..." : "", d);
  } else if (idem_key != NULL && idem_key[0] != '\0') {
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
  free(shown);
  return (n < 0 || (size_t)n >= cap) ? SIM_EINVAL : SIM_OK;
}

/* Hex digits of v; see sim_int.h. */
char *sim__put_hex(char *o, uint64_t v, int min) {
  /* two digits a byte: every request writes its id and key in hex */
  static const char pairs[513] =
      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
      "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
      "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
      "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
      "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
      "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
      "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
      "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
  int n = 1; /* the digits v needs */
  for (uint64_t r = v >> 4; r != 0; r >>= 4) n++;
  if (n < min) n = min;
  int i = n;
  for (; i >= 2; i -= 2, v >>= 8) memcpy(o + i - 2, pairs + 2 * (v & 255), 2);
  if (i == 1) o[0] = pairs[2 * (v & 15) + 1];
  return o + n;
}

/* A 64-bit FNV-1a fingerprint of bytes, as 16 hex digits in out[17]. */
void sim__fingerprint(const void *data, size_t len, char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)fnv1a(FNV_OFFSET, data, len));
}
