/*
 * fuzz_control.c - the control API of `fusebox serve --control`
 * (docs/control.md) without a socket: a server is started with the control
 * hook (cli_control_handle, what sim/control_http.c's sim__direct_answer
 * calls with the request libmicrohttpd framed) and each request of the
 * input is handed straight to that hook: method, path, query, headers (the
 * token), body. So PUT /scenario (a scenario checked and loaded, a session
 * started), POST /reset, GET /health, /requests, /report and /trace run for
 * real against the server's session table, one fresh server per input.
 *
 * Input layout: byte 0: bit 0 the server wants the token "fuzz-token",
 * bit 1 every request carries the body bound's too_big flag instead of its
 * body. Then up to 8 requests, separated by a line "%%%"; each is
 * '\n'-separated: method, path with an optional ?query (name=value pairs
 * split at '&' and the first '=', not decoded), "Name: value" header lines
 * up to an empty line, then the body (to the separator or the end).
 *
 * Checks beyond no crash: every answer has a status of 200..599 and a
 * body; a JSON answer is one JSON object, an error answer (status >= 400)
 * {"error":{"type","message"}} with strings; /trace is JSON Lines; with a
 * token a request without "Authorization: Bearer fuzz-token" gets 401 and
 * nothing else; the server stops cleanly and frees everything (LSan).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/control.h"
#include "sim/sim.h"

#define MAX_REQS 8
#define MAX_KV 32
#define TOKEN "fuzz-token"

static char *take_line(const char **p, const char *end) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
  char *s = strndup(*p, n); /* stops at a NUL byte, as MHD's strings would */
  if (s == NULL) abort();
  *p = nl ? nl + 1 : end;
  return s;
}

/* What cli/control.c must decide about the token, from docs/control.md:
   the first Authorization header, "Bearer " in any case, blanks, the token. */
static int carries_token(const sim_kv *h, int n) {
  for (int i = 0; i < n; i++)
    if (strcasecmp(h[i].name, "Authorization") == 0) {
      const char *v = h[i].value;
      if (strncasecmp(v, "Bearer ", 7) != 0) return 0;
      v += 7;
      while (*v == ' ') v++;
      return strcmp(v, TOKEN) == 0;
    }
  return 0;
}

static const char *str_at(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void check_answer(const sim_control_resp *r, int want_401) {
  if (r->status < 200 || r->status > 599 || r->body == NULL) {
    fprintf(stderr, "control answered status %d, body %p\n", r->status, (void *)r->body);
    abort();
  }
  if (want_401 && r->status != 401) {
    fprintf(stderr, "a request without the token got %d\n", r->status);
    abort();
  }
  const char *type = r->content_type ? r->content_type : "application/json";
  if (strcmp(type, "application/json") == 0) {
    cJSON *doc = cJSON_ParseWithLength(r->body, r->body_len);
    if (!cJSON_IsObject(doc)) {
      fprintf(stderr, "control answer is not a JSON object: %.200s\n", r->body);
      abort();
    }
    if (r->status >= 400) {
      const cJSON *e = cJSON_GetObjectItemCaseSensitive(doc, "error");
      if (str_at(e, "type") == NULL || str_at(e, "message") == NULL) {
        fprintf(stderr, "an error answer without type and message: %.200s\n", r->body);
        abort();
      }
    }
    cJSON_Delete(doc);
  } else if (strcmp(type, "application/x-ndjson") == 0) {
    const char *p = r->body, *end = r->body + r->body_len;
    while (p < end) {
      const char *nl = memchr(p, '\n', (size_t)(end - p));
      if (nl == NULL) abort(); /* every line ends */
      cJSON *ev = cJSON_ParseWithLength(p, (size_t)(nl - p));
      if (!cJSON_IsObject(ev)) {
        fprintf(stderr, "a /trace line is not a JSON object: %.200s\n", p);
        abort();
      }
      cJSON_Delete(ev);
      p = nl + 1;
    }
  } else {
    abort(); /* no other type is documented */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 256 * 1024) return 0;
  int opt = data[0];
  const char *p = (const char *)data + 1, *end = (const char *)data + size;

  cli_control cc = {.token = (opt & 1) ? TOKEN : NULL, .seed = 7};
  sim_server_opts o;
  memset(&o, 0, sizeof o);
  o.bind = "127.0.0.1";
  o.loops = 1;
  o.max_connections = 4;
  o.seed = 7;
  o.control = cli_control_handle;
  o.control_arg = &cc;
  sim_server *srv = NULL;
  char err[SIM_ERRLEN];
  if (sim_server_start(&o, &srv, err) != SIM_OK) {
    fprintf(stderr, "fuzz_control: %s\n", err);
    abort();
  }

  for (int k = 0; k < MAX_REQS && p < end; k++) {
    const char *sep = NULL;
    for (const char *q = p; q + 4 <= end; q++)
      if (memcmp(q, "\n%%%", 4) == 0 && (q + 4 == end || q[4] == '\n')) {
        sep = q;
        break;
      }
    const char *rend = sep ? sep : end;
    char *method = take_line(&p, rend);
    char *target = take_line(&p, rend);
    sim_kv query[MAX_KV], headers[MAX_KV];
    char *owned[2 * MAX_KV];
    int nq = 0, nh = 0, nowned = 0;
    char *qs = strchr(target, '?');
    if (qs != NULL) {
      *qs++ = '\0';
      for (char *tok = qs; tok != NULL && nq < MAX_KV;) {
        char *amp = strchr(tok, '&');
        if (amp) *amp = '\0';
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        query[nq].name = tok;
        query[nq].value = eq ? eq + 1 : "";
        nq++;
        tok = amp ? amp + 1 : NULL;
      }
    }
    while (p < rend && *p != '\n' && nh < MAX_KV) {
      char *line = take_line(&p, rend);
      owned[nowned++] = line;
      char *colon = strchr(line, ':');
      if (colon == NULL) continue;
      *colon = '\0';
      const char *v = colon + 1;
      while (*v == ' ') v++;
      headers[nh].name = line;
      headers[nh].value = v;
      nh++;
    }
    if (p < rend && *p == '\n') p++;
    size_t blen = (size_t)(rend - p);
    char *body = blen ? malloc(blen + 1) : NULL;
    if (blen && body == NULL) abort();
    if (body) {
      memcpy(body, p, blen);
      body[blen] = '\0';
    }
    sim_control_req req = {.method = method, .path = target, .query = query, .nquery = nq,
                           .headers = headers, .nheaders = nh,
                           .body = (opt & 2) ? NULL : body,
                           .body_len = (opt & 2) ? 0 : blen, .too_big = (opt & 2) != 0};
    sim_control_resp resp = {.status = 500};
    cli_control_handle(&cc, srv, &req, &resp);
    if (getenv("FUZZ_VERBOSE")) /* replaying one input: what each request got */
      fprintf(stderr, "%s %s -> %d %.160s\n", method, target, resp.status,
              resp.body ? resp.body : "");
    check_answer(&resp, cc.token != NULL && !carries_token(headers, nh));
    free(resp.body);
    free(body);
    for (int i = 0; i < nowned; i++) free(owned[i]);
    free(method);
    free(target);
    p = sep ? sep + 4 : end;
    if (p < end && *p == '\n') p++;
  }

  if (sim_server_stop(srv, err) != SIM_OK) {
    /* a trace error: no trace file here, so none may happen */
    fprintf(stderr, "fuzz_control: stop: %s\n", err);
    abort();
  }
  return 0;
}
