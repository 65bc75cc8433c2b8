/*
 * blob.c - one immutable, reference-counted copy of a large step body
 * (`content`, `body`), shared by every step converted from the same Lua
 * string and every connection that plays it, with its JSON-escaped form
 * made once on first use. Without it each slow client reading a 30 MB
 * answer held two or three private copies of it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/sim_int.h"

struct sim_blob {
  atomic_int refs;
  pthread_mutex_t mu;  /* guards the lazy escaped form */
  char *json;          /* the text as a JSON string body (no quotes); lazy */
  size_t json_len;
  size_t len;
  char data[];         /* len bytes and a NUL */
};

/* A blob holding a copy of len bytes at p, with one reference. Owned by
   the caller (release with sim__blob_unref); NULL when out of memory. */
sim_blob *sim__blob_new(const char *p, size_t len) {
  sim_blob *b = malloc(sizeof *b + len + 1);
  if (b == NULL) return NULL;
  atomic_init(&b->refs, 1);
  pthread_mutex_init(&b->mu, NULL);
  b->json = NULL;
  b->json_len = 0;
  b->len = len;
  memcpy(b->data, p, len);
  b->data[len] = '\0';
  return b;
}

/* Adds a reference; returns b. */
sim_blob *sim__blob_ref(sim_blob *b) {
  if (b != NULL) atomic_fetch_add(&b->refs, 1);
  return b;
}

/* Drops a reference; the last one frees the blob. NULL is a no-op. */
void sim__blob_unref(sim_blob *b) {
  if (b == NULL || atomic_fetch_sub(&b->refs, 1) != 1) return;
  pthread_mutex_destroy(&b->mu);
  free(b->json);
  free(b);
}

/* The bytes (NUL-terminated) and their length. Borrowed from the blob. */
const char *sim__blob_data(const sim_blob *b) { return b->data; }
size_t sim__blob_len(const sim_blob *b) { return b->len; }

/* The text escaped as the inside of a JSON string (as cJSON writes it),
   made once; NULL when out of memory. Borrowed from the blob. */
const char *sim__blob_json(sim_blob *b, size_t *len) {
  /* Text with nothing to escape (cJSON escapes '"', '\\' and bytes below
     0x20) is its own JSON form: no second copy. */
  size_t i = 0;
  while (i < b->len && b->data[i] != '"' && b->data[i] != '\\' &&
         (unsigned char)b->data[i] >= 0x20)
    i++;
  if (i == b->len) {
    *len = b->len;
    return b->data;
  }
  pthread_mutex_lock(&b->mu);
  if (b->json == NULL) {
    cJSON *s = cJSON_CreateString(b->data);
    char *q = s ? cJSON_PrintUnformatted(s) : NULL;
    cJSON_Delete(s);
    if (q != NULL) {
      size_t n = strlen(q); /* "..." */
      memmove(q, q + 1, n - 2);
      q[n - 2] = '\0';
      b->json = q;
      b->json_len = n - 2;
    }
  }
  const char *j = b->json;
  *len = b->json_len;
  pthread_mutex_unlock(&b->mu);
  return j;
}
