/*
 * response.c - the response a transport fills: status, bounded headers, and
 * the body, kept raw (bounded) or fed to the stream parser of the dialect
 * (SSE, Ollama's NDJSON, AWS's event stream) as it arrives when the
 * request asked for a stream and a 2xx stream came back.
 */
#include "guard/guard_int.h"

#include <stdlib.h>
#include <string.h>

static int on_event(void *ud, const char *event, const char *data, size_t len) {
  guard_http_response *r = ud;
  if (r->answer != NULL) guard__wire_stream_event(r->answer, event, data, len);
  return 0;
}

static int on_line(void *ud, const char *line, size_t len) {
  guard_http_response *r = ud;
  if (r->answer != NULL) guard__ollama_line(r->answer, line, len);
  return 0;
}

static int on_message(void *ud, const guard__es_msg *m) {
  guard_http_response *r = ud;
  if (r->answer != NULL) guard__bedrock_message(r->answer, m);
  return 0;
}

/* Prepares a response for one attempt. */
void guard__resp_init(guard_http_response *r, size_t max_body, int want_stream,
                      guard__answer *answer) {
  memset(r, 0, sizeof *r);
  guard__buf_init(&r->body, max_body);
  r->want_stream = want_stream;
  r->sse = -1;
  r->answer = answer;
  r->framing = answer ? guard__wire_framing(answer->dialect) : GUARD__FRAME_SSE;
  size_t max_event = GUARD__MAX_SSE_EVENT < max_body ? GUARD__MAX_SSE_EVENT : max_body;
  guard__sse_init(&r->parser, max_event, on_event, r);
  guard__ndjson_init(&r->nd, max_event, on_line, r);
  guard__es_init(&r->es, max_event, on_message, r);
}

static void clear_headers(guard_http_response *r) {
  for (int i = 0; i < r->nheaders; i++) {
    free(r->hname[i]);
    free(r->hvalue[i]);
  }
  r->nheaders = 0;
  r->hbytes = 0;
}

/* Releases a response's memory. */
void guard__resp_free(guard_http_response *r) {
  clear_headers(r);
  guard__buf_free(&r->body);
  guard__sse_free(&r->parser);
  guard__ndjson_free(&r->nd);
  guard__es_free(&r->es);
}

/* Ends a stream the transport finished; see guard_int.h. */
void guard__resp_stream_finish(guard_http_response *r) {
  if (r->framing == GUARD__FRAME_NDJSON) {
    guard__ndjson_finish(&r->nd);
  } else if (r->framing == GUARD__FRAME_ES) {
    if (guard__es_finish(&r->es) && r->answer != NULL)
      guard__stream_bad(r->answer, r->es.broken == GUARD__ES_CUT ? GUARD__BODY_TRUNCATED
                                                                  : GUARD__BODY_BAD_CHUNK);
  } else {
    guard__sse_finish(&r->parser);
  }
}

/* Sets the status; a later status forgets the headers so far. */
int guard_resp_status(guard_http_response *r, int status) {
  clear_headers(r);
  r->status = status;
  return GUARD_OK;
}

/* Adds one response header, bounded in count and bytes. */
int guard_resp_header(guard_http_response *r, const char *name, size_t name_len,
                      const char *value, size_t value_len) {
  while (value_len > 0 && (value[0] == ' ' || value[0] == '\t')) {
    value++;
    value_len--;
  }
  while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t' ||
                           value[value_len - 1] == '\r' || value[value_len - 1] == '\n'))
    value_len--;
  if (r->nheaders >= GUARD__MAX_HEADERS ||
      name_len + value_len > GUARD__MAX_HEADER_BYTES - r->hbytes) {
    r->overflow = 1;
    return GUARD_ETOOBIG;
  }
  char *n = malloc(name_len + 1);
  char *v = malloc(value_len + 1);
  if (n == NULL || v == NULL) {
    free(n);
    free(v);
    r->oom = 1;
    return GUARD_ENOMEM;
  }
  for (size_t i = 0; i < name_len; i++) {
    char c = name[i];
    n[i] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  n[name_len] = '\0';
  memcpy(v, value, value_len);
  v[value_len] = '\0';
  r->hname[r->nheaders] = n;
  r->hvalue[r->nheaders] = v;
  r->nheaders++;
  r->hbytes += name_len + value_len;
  return GUARD_OK;
}

/* The value of a response header (lower-case name), or NULL. */
const char *guard__resp_get(const guard_http_response *r, const char *lname) {
  for (int i = r->nheaders - 1; i >= 0; i--)
    if (strcmp(r->hname[i], lname) == 0) return r->hvalue[i];
  return NULL;
}

/* A 2xx answer to a stream request is read as a stream unless it says it
   is JSON (NDJSON is a stream). */
static int decide_sse(const guard_http_response *r) {
  if (!r->want_stream || r->status < 200 || r->status > 299) return 0;
  const char *ct = guard__resp_get(r, "content-type");
  if (ct != NULL && strstr(ct, "json") != NULL && strstr(ct, "ndjson") == NULL) return 0;
  return 1;
}

/* Feeds stream bytes to the framing's parser: GUARD_OK, GUARD_ETOOBIG or
   GUARD_ENOMEM. A broken AWS stream marks the answer and reads no more. */
static int feed_stream(guard_http_response *r, const void *data, size_t len) {
  if (r->framing == GUARD__FRAME_NDJSON) return guard__ndjson_feed(&r->nd, data, len);
  if (r->framing == GUARD__FRAME_SSE) return guard__sse_feed(&r->parser, data, len);
  int rc = guard__es_feed(&r->es, data, len);
  if (rc == 1 && r->answer != NULL) guard__stream_bad(r->answer, GUARD__BODY_BAD_CHUNK);
  return rc == GUARD_ENOMEM ? rc : GUARD_OK;
}

/* Delivers body bytes; GUARD_ETOOBIG when the body passed its maximum. */
int guard_resp_body(guard_http_response *r, const void *data, size_t len) {
  if (r->sse < 0) r->sse = decide_sse(r);
  if (r->sse) {
    /* The stream is bounded as a whole like a raw body would be. */
    if (len > r->body.max - r->stream_bytes) {
      r->overflow = 1;
      return GUARD_ETOOBIG;
    }
    r->stream_bytes += len; /* counted, not kept */
    int rc = feed_stream(r, data, len);
    if (rc == GUARD_ETOOBIG || rc == GUARD_ENOMEM) {
      r->overflow = 1;
      if (rc == GUARD_ENOMEM) r->oom = 1;
      return GUARD_ETOOBIG;
    }
    return GUARD_OK;
  }
  int rc = guard__buf_add(&r->body, data, len);
  if (rc != GUARD_OK) {
    r->overflow = 1;
    if (rc == GUARD_ENOMEM) r->oom = 1;
    return GUARD_ETOOBIG;
  }
  return GUARD_OK;
}

/* Keeps a short transport error description. */
void guard_resp_detail(guard_http_response *r, const char *detail) {
  guard__strlcpy(r->detail, detail, sizeof r->detail);
}
