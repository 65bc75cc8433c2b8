/*
 * curl_cost.c - the reference for guard_cost.c: the same N chat POSTs
 * (same URL, headers and JSON body shape, a distinct message per call)
 * with plain libcurl, one easy handle per request as the guard's default
 * transport uses, the response body collected in memory and not parsed.
 *
 *   curl_cost --url http://127.0.0.1:P/v1 --n N [--tag T] [--reuse]
 *
 * --reuse: one easy handle for all N (libcurl keeps the connection alive
 * between them), the way the guard's transport keeps its handle since
 * issue 13 - the tighter reference.
 *
 * Prints "calls= ok="; exit 1 unless every response is 200.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct buf { char *p; size_t n, cap; } buf;

static size_t on_data(char *d, size_t sz, size_t nm, void *ud) {
  buf *b = ud;
  size_t len = sz * nm;
  if (b->n + len + 1 > b->cap) {
    while (b->n + len + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 4096;
    b->p = realloc(b->p, b->cap);
    if (b->p == NULL) return 0;
  }
  memcpy(b->p + b->n, d, len);
  b->n += len;
  b->p[b->n] = '\0';
  return len;
}

int main(int argc, char **argv) {
  const char *url = NULL;
  int n = 0;
  const char *tag = "";
  int reuse = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--url") == 0 && i + 1 < argc) url = argv[++i];
    else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) n = atoi(argv[++i]);
    else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) tag = argv[++i];
    else if (strcmp(argv[i], "--reuse") == 0) reuse = 1;
  }
  if (url == NULL || n <= 0) {
    fprintf(stderr, "usage: curl_cost --url BASE_URL --n N [--tag T]\n");
    return 2;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 2;
  char full[512];
  snprintf(full, sizeof full, "%s/chat/completions", url);
  int ok = 0;
  CURL *kept = reuse ? curl_easy_init() : NULL;
  for (int i = 0; i < n; i++) {
    char body[320];
    snprintf(body, sizeof body,
             "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":"
             "\"cost %s call %d\"}],\"max_tokens\":16}", tag, i);
    CURL *h = kept ? kept : curl_easy_init();
    struct curl_slist *hd = NULL;
    hd = curl_slist_append(hd, "Content-Type: application/json");
    hd = curl_slist_append(hd, "Authorization: Bearer sk-bench");
    buf b = {0};
    curl_easy_setopt(h, CURLOPT_URL, full);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    long status = 0;
    if (curl_easy_perform(h) == CURLE_OK) {
      curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
      if (status == 200 && b.n > 0) ok++;
    }
    free(b.p);
    curl_slist_free_all(hd);
    if (!kept) curl_easy_cleanup(h);
  }
  if (kept) curl_easy_cleanup(kept);
  printf("calls=%d ok=%d\n", n, ok);
  curl_global_cleanup();
  return ok == n ? 0 : 1;
}
