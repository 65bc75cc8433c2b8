/*
 * fuzz_record.c - the recorder's request handling (import/record_note.c,
 * sim/redact.c): which request targets are forwarded and where
 * (imp__record_target), and the exchange noted for the log
 * (imp__record_note) through the one redaction rule.
 *
 * Input layout, '\n'-separated: one byte picking the upstream and the
 * status, the method, the request target, the query (empty line = none),
 * the Idempotency-Key (empty = none), then "name: value" response header
 * lines up to an empty line, then the response body (the rest).
 *
 * Checks beyond "no crash, no leak, no UB":
 *  - a target is forwarded only when it starts with '/', and then the URL
 *    has the upstream's own scheme, host and port (curl's parser agrees);
 *  - the note is one JSON object without a newline, and a key planted
 *    between blanks in every header value, the body and the query never
 *    appears in it; redacting the redacted text changes nothing;
 *  - sim_term_safe leaves no C0 control but '\n' and '\t'.
 */
#define _GNU_SOURCE /* memmem */
#include <curl/curl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "import/record_int.h"
#include "sim/sim.h"

#define PLANT "sk-FUZZPLANTED0123456789"
#define MAXH 32

static const char *const BASES[] = {"http://127.0.0.1:8080", "https://api.openai.com",
                                    "https://api.example/prefix", "http://[::1]:9"};

/* Takes the next '\n'-terminated piece of [*p, end) as a new string. */
static char *take_line(const uint8_t **p, const uint8_t *end) {
  const uint8_t *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
  size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
  *p = nl ? nl + 1 : end;
  char *out = malloc(n + 1);
  if (out == NULL) abort();
  memcpy(out, s, n);
  out[n] = '\0';
  return out;
}

/* "a" PLANT "b": the input text with a key planted between blanks. */
static char *planted(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + sizeof PLANT + 3;
  char *s = malloc(n);
  if (s == NULL) abort();
  snprintf(s, n, "%s %s %s", a, PLANT, b);
  return s;
}

static void check_url(const char *base, const char *url) {
  CURLU *u = curl_url(), *b = curl_url();
  if (u == NULL || b == NULL) abort();
  if (curl_url_set(b, CURLUPART_URL, base, 0) != CURLUE_OK) abort();
  if (strncmp(url, base, strlen(base)) != 0 || url[strlen(base)] != '/') {
    fprintf(stderr, "URL %s does not start with %s/\n", url, base);
    abort();
  }
  if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
    static const CURLUPart parts[] = {CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT,
                                      CURLUPART_USER};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
      char *x = NULL, *y = NULL;
      curl_url_get(u, parts[i], &x, 0);
      curl_url_get(b, parts[i], &y, 0);
      if ((x == NULL) != (y == NULL) || (x && strcmp(x, y) != 0)) {
        fprintf(stderr, "URL %s leaves %s: part %zu is %s, not %s\n", url, base, i,
                x ? x : "(none)", y ? y : "(none)");
        abort();
      }
      curl_free(x);
      curl_free(y);
    }
  }
  curl_url_cleanup(u);
  curl_url_cleanup(b);
}

static int fresh; /* the input itself does not hold the planted marker */

static void check_redacted(const char *text) {
  size_t n = strlen(text);
  char *r = sim_redact_text(text, n);
  if (r == NULL) return;
  if (fresh && strstr(r, "FUZZPLANTED") != NULL) {
    fprintf(stderr, "a planted key survived: %.300s\n", r);
    abort();
  }
  char *again = sim_redact_text(r, strlen(r));
  if (again != NULL && strcmp(again, r) != 0) {
    fprintf(stderr, "redaction is not stable:\n%.300s\n%.300s\n", r, again);
    abort();
  }
  free(again);
  free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fresh = memmem(data, size, "FUZZPLANTED", 11) == NULL;
  const uint8_t *p = data + 1, *end = data + size;
  const char *base = BASES[data[0] % 4];
  long status = 100 + (long)(data[0] >> 2) * 5; /* 100..735: outside 200-599 too */
  char *method = take_line(&p, end);
  char *target = take_line(&p, end);
  char *query = take_line(&p, end);
  char *idem = take_line(&p, end);
  char *hname[MAXH], *hvalue[MAXH];
  int nh = 0;
  while (p < end && nh < MAXH) {
    char *line = take_line(&p, end);
    if (line[0] == '\0') {
      free(line);
      break;
    }
    char *colon = strchr(line, ':');
    hname[nh] = strdup(line);
    if (hname[nh] == NULL) abort();
    if (colon != NULL) hname[nh][colon - line] = '\0';
    hvalue[nh] = planted(colon ? colon + 1 : "", line);
    nh++;
    free(line);
  }
  size_t blen = (size_t)(end - p);
  char *rawbody = malloc(blen + 1);
  if (rawbody == NULL) abort();
  memcpy(rawbody, p, blen);
  rawbody[blen] = '\0';
  char *body = planted(rawbody, "x");
  char *q = query[0] ? planted(query, "&") : NULL;

  /* Where a target may go. */
  char *url = NULL;
  int rc = imp__record_target(base, target, q, &url);
  if (rc == SIM_OK) {
    if (target[0] != '/') abort();
    check_url(base, url);
  } else if (url != NULL) {
    abort();
  }
  free(url);

  /* What is noted. */
  imp_rec_exchange e = {.method = method, .path = target[0] == '/' ? target : "/",
                        .query = q, .idem = idem[0] ? idem : NULL, .body = rawbody,
                        .body_len = blen, .t_ms = 1, .latency_ms = 2, .duration_ms = 3,
                        .status = status, .headers_done = data[0] & 1, .stream = (data[0] >> 1) & 1,
                        .hname = hname, .hvalue = hvalue, .nh = nh, .kept = body,
                        .received = blen, .error = (data[0] & 3) == 2 ? "closed" : NULL};
  char *line = imp__record_note(&e);
  if (line != NULL) {
    if (strchr(line, '\n') != NULL) abort();
    cJSON *o = cJSON_Parse(line);
    if (!cJSON_IsObject(o)) {
      fprintf(stderr, "not a JSON object: %.300s\n", line);
      abort();
    }
    cJSON_Delete(o);
    if (fresh && strstr(line, "FUZZPLANTED") != NULL) {
      fprintf(stderr, "a planted key was noted: %.300s\n", line);
      abort();
    }
    free(line);
  }
  check_redacted(body);
  if (q != NULL) check_redacted(q);
  for (int i = 0; i < nh; i++) check_redacted(hvalue[i]);

  /* The terminal sanitiser. */
  sim_term_safe(rawbody);
  for (const unsigned char *c = (const unsigned char *)rawbody; *c; c++)
    if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f) abort();

  for (int i = 0; i < nh; i++) {
    free(hname[i]);
    free(hvalue[i]);
  }
  free(method);
  free(target);
  free(query);
  free(idem);
  free(rawbody);
  free(body);
  free(q);
  return 0;
}
