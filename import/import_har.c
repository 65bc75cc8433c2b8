/*
 * import_har.c - the HAR reader of `fusebox import`: an HTTP Archive
 * exported by a browser or a proxy. Only LLM API calls are kept
 * (/chat/completions, /responses, /messages, Gemini's :generateContent and
 * :streamGenerateContent, /completions; POST /effects/); logical requests are told
 * apart as the fake server tells them apart (Idempotency-Key, else method,
 * path and body), so retries of one call replay as one request.
 */
#define _GNU_SOURCE /* strcasestr, timegm */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/import_int.h"

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k) {
  const cJSON *it = get(o, k);
  return cJSON_IsString(it) ? it->valuestring : NULL;
}

static double get_num(const cJSON *o, const char *k, double dflt) {
  const cJSON *it = get(o, k);
  return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : dflt;
}

/* Decodes base64 text (padding and white space tolerated). *out is owned
   by the caller. Returns 0 or -1. */
static int base64_decode(const char *s, char **out, size_t *outlen) {
  size_t n = strlen(s);
  char *o = malloc(n / 4 * 3 + 4);
  if (o == NULL) return -1;
  unsigned v = 0;
  int bits = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    int d;
    if (c >= 'A' && c <= 'Z') d = c - 'A';
    else if (c >= 'a' && c <= 'z') d = c - 'a' + 26;
    else if (c >= '0' && c <= '9') d = c - '0' + 52;
    else if (c == '+' || c == '-') d = 62;
    else if (c == '/' || c == '_') d = 63;
    else if (c == '=' || isspace(c)) continue;
    else {
      free(o);
      return -1;
    }
    v = (v << 6) | (unsigned)d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      o[k++] = (char)((v >> bits) & 0xFF);
    }
  }
  o[k] = '\0';
  *out = o;
  *outlen = k;
  return 0;
}

/* The path of a URL ("https://host/v1/x?q" -> "/v1/x"), into out. */
static void url_path(const char *url, char *out, size_t cap) {
  const char *p = strstr(url, "://");
  p = p ? strchr(p + 3, '/') : url;
  if (p == NULL) p = "/";
  size_t n = strcspn(p, "?#");
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
}

/* How a browser or proxy names a failed request, as an outcome. */
static imp_outcome outcome_of(const char *error) {
  if (error == NULL) return IMP_DROP;
  if (strcasestr(error, "RESET") != NULL) return IMP_RESET;
  if (strcasestr(error, "TIMED_OUT") != NULL || strcasestr(error, "TIMEOUT") != NULL ||
      strcasestr(error, "ABORTED") != NULL)
    return IMP_HANG;
  return IMP_DROP;
}

/* Reads one entry (index i, from 0). */
static int read_entry(imp_log *lg, int i, const cJSON *e) {
  const cJSON *req = get(e, "request"), *resp = get(e, "response");
  const char *url = get_str(req, "url");
  const char *method = get_str(req, "method");
  if (!cJSON_IsObject(req) || url == NULL || method == NULL)
    return imp__fail(lg, 0, "log.entries[%d]: request.url and request.method are required", i);
  char path[2048];
  url_path(url, path, sizeof path);
  int effect = strstr(path, "/effects/") != NULL;
  const char *api = imp__api_of_path(path);
  if (!effect && (api == NULL || strcmp(api, "embeddings") == 0)) {
    lg->skipped++;
    return SIM_OK;
  }
  if (effect && strcasecmp(method, "POST") != 0) {
    lg->skipped++; /* a ledger lookup: the server answers it itself */
    return SIM_OK;
  }
  if (!cJSON_IsObject(resp))
    return imp__fail(lg, 0, "log.entries[%d]: response is required (an object)", i);

  imp_resp r;
  imp_attempt a = {0};
  int rc = SIM_OK;
  char *body_dec = NULL;
  imp__resp_init(&r);
  a.line = i + 1;
  a.root = 1;
  a.effect = r.effect = effect;
  r.api = api;
  const char *started = get_str(e, "startedDateTime");
  if (started != NULL && imp__parse_iso8601(started, &a.t_ms) == 0) a.has_t = 1;

  /* the logical request */
  const char *idem = NULL, *post = "";
  const cJSON *h;
  cJSON_ArrayForEach(h, get(req, "headers")) {
    const char *n = get_str(h, "name"), *v = get_str(h, "value");
    if (n && v && strcasecmp(n, "idempotency-key") == 0) idem = v;
  }
  const char *pt = get_str(get(req, "postData"), "text");
  if (pt != NULL) post = pt;
  char key[600];
  if (sim_request_key(idem, method, path, post, strlen(post), key, sizeof key) != SIM_OK)
    sim_request_key(NULL, method, path, post, strlen(post), key, sizeof key);
  a.key = key;
  int stream_req = 0;
  cJSON *pj = cJSON_Parse(post);
  stream_req = cJSON_IsTrue(get(pj, "stream"));
  cJSON_Delete(pj);

  /* the response */
  double status = get_num(resp, "status", 0);
  if (status != 0 && (status != floor(status) || status < 200 || status > 599)) {
    rc = imp__fail(lg, 0, "log.entries[%d]: response.status %g is not an HTTP status from 200 "
                          "to 599 (0: no response)", i, status);
    goto done;
  }
  r.status = (int)status;
  cJSON_ArrayForEach(h, get(resp, "headers")) {
    const char *n = get_str(h, "name"), *v = get_str(h, "value");
    if (n && v && (rc = imp__resp_header(&r, n, v)) != SIM_OK) goto done;
  }
  const cJSON *timings = get(e, "timings");
  double wait = get_num(timings, "wait", -1), receive = get_num(timings, "receive", -1);
  double total = get_num(e, "time", -1);
  double latency = wait >= 0 ? wait : total >= 0 ? total : 0;
  if (r.status == 0) {
    r.outcome = outcome_of(get_str(resp, "_error"));
  } else {
    const cJSON *content = get(resp, "content");
    const char *text = get_str(content, "text");
    const char *enc = get_str(content, "encoding");
    const char *mime = get_str(content, "mimeType");
    const char *ct = imp__resp_get_header(&r, "content-type");
    int sse = (mime && strcasestr(mime, "event-stream")) || (ct && strcasestr(ct, "event-stream")) ||
              strstr(url, "alt=sse") != NULL;
    size_t tlen = text ? strlen(text) : 0;
    if (text && enc && strcasecmp(enc, "base64") == 0) {
      if (base64_decode(text, &body_dec, &tlen) != 0) {
        rc = imp__fail(lg, 0, "log.entries[%d]: response.content.text is not valid base64", i);
        goto done;
      }
      text = body_dec;
    }
    if (sse && r.status >= 200 && r.status < 300) r.stream = 1;
    if (text != NULL && (rc = imp__resp_body(&r, text, tlen, NULL, sse)) != SIM_OK) goto done;
    if (r.stream && imp__resp_frames(&r) > 1 && receive > 0)
      r.interval_s = receive / 1000.0 / (imp__resp_frames(&r) - 1);
    if (!r.stream && stream_req && text == NULL && r.status < 300) r.stream = 1;
    if (r.status >= 300) imp__resp_ra_date(&r, a.has_t ? a.t_ms + latency : 0);
  }
  if (r.outcome != IMP_HANG && latency >= IMP_MIN_DELAY_MS) r.delay_ms = latency;

  char note[200];
  const char *rid = imp__resp_get_header(&r, "x-request-id");
  if (rid == NULL) rid = imp__resp_get_header(&r, "request-id");
  if (r.status)
    snprintf(note, sizeof note, "%s %.60s: %d%s%.80s", method, path, r.status,
             rid ? ", request " : "", rid ? rid : "");
  else
    snprintf(note, sizeof note, "%s %.60s: no response (%.40s)", method, path,
             get_str(resp, "_error") ? get_str(resp, "_error") : "closed");
  a.note = note;
  rc = imp__add(lg, &a, &r);

done:
  free(body_dec);
  imp__resp_clear(&r);
  return rc;
}

/* Reads a HAR document: log.entries[] in the order they started. */
int imp__read_har(imp_log *lg, const char *text, size_t len) {
  cJSON *doc = cJSON_ParseWithLength(text, len);
  if (doc == NULL) {
    const char *ep = cJSON_GetErrorPtr();
    int line = 1;
    if (ep >= text && ep <= text + len)
      for (const char *p = text; p < ep; p++) line += *p == '\n';
    return imp__fail(lg, line, "not valid JSON: a HAR file is one JSON document");
  }
  const cJSON *entries = get(get(doc, "log"), "entries");
  int rc = SIM_OK;
  if (!cJSON_IsArray(entries)) {
    rc = imp__fail(lg, 0, "not a HAR file: log.entries (a list) is missing");
  } else {
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, entries) {
      if (!cJSON_IsObject(e)) rc = imp__fail(lg, 0, "log.entries[%d] is not an object", i);
      else rc = read_entry(lg, i, e);
      if (rc != SIM_OK) break;
      i++;
    }
  }
  cJSON_Delete(doc);
  return rc;
}
