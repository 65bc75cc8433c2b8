/*
 * server.c - one scenario session on one port: its event loops (loops.c),
 * routing, arrivals (logical request keys, attempt numbers, the Lua
 * decision) and the trace events that begin and end every attempt.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "sim/json_write_int.h"
#include "sim/play_int.h"
#include "sim/server_int.h"

/* ------------------------------------------------------------- routing */

/* When p starts with the segment "/seg", what follows it; else NULL. */
static const char *seg(const char *p, const char *name) {
  size_t n = strlen(name);
  if (p[0] != '/' || strncmp(p + 1, name, n) != 0) return NULL;
  return p[1 + n] == '/' || p[1 + n] == '\0' ? p + 1 + n : NULL;
}

/* What follows the next segment of p (which starts with '/'); copies the
   segment into out. NULL when there is no segment or it is too long. */
static const char *next_seg(const char *p, char *out, size_t cap) {
  if (p[0] != '/' || p[1] == '\0' || p[1] == '/') return NULL;
  const char *end = strchr(p + 1, '/');
  size_t len = end ? (size_t)(end - p - 1) : strlen(p + 1);
  if (len >= cap) return NULL;
  memcpy(out, p + 1, len);
  out[len] = '\0';
  return p + 1 + len;
}

/*
 * The API a path names once the provider is known: optional vendor
 * prefixes real SDKs put in their base URL (groq and Azure's "/openai",
 * "/api", "/inference", Azure's "/openai/deployments/{name}"), an optional
 * version ("/v1", "/v1beta"), then the endpoint. Returns 1 and sets the
 * dialect, or 0 when the path names no API.
 */
static int route_api(sim_conn *c, const char *method, const char *p) {
  const char *q;
  int versioned = 0;
  if (sim__route_own_path(p, &c->dialect, c->path_model, sizeof c->path_model, &c->path_stream))
    return 1; /* dialect.c: Ollama, Cohere */
  if ((q = seg(p, "openai")) != NULL) {
    p = q;
    if ((q = seg(p, "deployments")) != NULL) {
      p = next_seg(q, c->path_model, sizeof c->path_model); /* the deployment */
      if (p == NULL) return 0;
      versioned = 1;
    }
  } else if ((q = seg(p, "api")) != NULL || (q = seg(p, "inference")) != NULL) {
    p = q;
  }
  if ((q = seg(p, "v1")) != NULL || (q = seg(p, "v1beta")) != NULL) {
    p = q;
    versioned = 1;
  }
  static const struct { const char *path; sim_dialect d; } eps[] = {
      {"/chat/completions", SIM_DIALECT_OPENAI}, {"/responses", SIM_DIALECT_RESPONSES},
      {"/messages", SIM_DIALECT_ANTHROPIC},      {"/completions", SIM_DIALECT_COMPLETIONS},
      {"/embeddings", SIM_DIALECT_EMBEDDINGS},   {"/models", SIM_DIALECT_MODELS},
  };
  for (size_t i = 0; i < sizeof eps / sizeof eps[0]; i++)
    if (strcmp(p, eps[i].path) == 0) {
      c->dialect = eps[i].d;
      return 1;
    }
  /* Gemini: /models/{model}:generateContent | :streamGenerateContent */
  if (versioned && (q = seg(p, "models")) != NULL && q[0] == '/' && strchr(q + 1, '/') == NULL) {
    const char *colon = strrchr(q + 1, ':');
    size_t mlen = colon ? (size_t)(colon - q - 1) : 0;
    if (colon == NULL || mlen == 0 || mlen >= sizeof c->path_model) return 0;
    if (strcmp(colon, ":streamGenerateContent") == 0) c->path_stream = 1;
    else if (strcmp(colon, ":generateContent") != 0) return 0;
    memcpy(c->path_model, q + 1, mlen);
    c->path_model[mlen] = '\0';
    c->dialect = SIM_DIALECT_GEMINI;
    return 1;
  }
  (void)method;
  return 0;
}

/* Which provider and dialect a path selects; -2 when none. A first
   segment naming a provider selects it; otherwise the first provider
   answers (also under the vendor prefixes route_api knows). */
static void route(sim_conn *c, const char *method, const char *url) {
  sim_scenario *sc = c->srv->sc;
  c->provider = -2;
  const char *rest = url;
  int prov = 0;
  char name[128];
  const char *after = next_seg(url, name, sizeof name);
  for (int i = 0; after != NULL && i < sim__scenario_nproviders(sc); i++)
    if (strcmp(sim__scenario_provider_name(sc, i), name) == 0) {
      prov = i;
      rest = after;
    }
  /* a lookup's key may be as long as a POST's Idempotency-Key; a name is
     bounded by effect_name */
  if (strncmp(rest, "/v1/effects/", 12) == 0 && rest[12] != '\0' &&
      strchr(rest + 12, '/') == NULL &&
      (strcmp(method, "GET") == 0 || strlen(rest + 12) < sizeof c->effect_name)) {
    c->dialect = SIM_DIALECT_EFFECT;
    c->provider = -1;
    if (strcmp(method, "GET") == 0) c->lookup_key = strdup(rest + 12);
    else snprintf(c->effect_name, sizeof c->effect_name, "%s", rest + 12);
    return;
  }
  c->path_model[0] = '\0';
  c->path_stream = 0;
  if (route_api(c, method, rest)) c->provider = prov;
  if (c->provider >= 0 && sim__scenario_nproviders(sc) == 0) c->provider = -2;
}

/* ------------------------------------------------------------- headers */

/* Bytes of names and values one request's headers keep: libmicrohttpd
   holds a request's headers in its 16 KiB connection pool, and a redacted
   value is at most twice its length and 64 bytes more. */
#define HDR_TEXT_MAX (40u << 10)

/* The request's headers, collected (and redacted) on first need: for the
   trace, or when a provider function reads req.headers. Names (lower case)
   and values are copied into text, not malloc'd one by one (issue 30). */
typedef struct hdr_list {
  sim_header h[SIM_MAX_REQ_HEADERS];
  int n;
  int loaded;
  struct MHD_Connection *mc;
  size_t used;           /* bytes of text in use */
  char text[HDR_TEXT_MAX];
} hdr_list;

/* A copy of the n bytes at s, NUL-terminated, in l's text; NULL when full. */
static char *hdr_keep(hdr_list *l, const char *s, size_t n) {
  if (n >= HDR_TEXT_MAX - l->used) return NULL;
  char *d = l->text + l->used;
  memcpy(d, s, n);
  d[n] = '\0';
  l->used += n + 1;
  return d;
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind,
                                      const char *key, const char *value) {
  (void)kind;
  hdr_list *l = cls;
  if (key == NULL) return MHD_YES;
  if (value == NULL) value = "";
  size_t kn = strlen(key), vn = strlen(value);
  char *name = hdr_keep(l, key, kn);
  if (name == NULL) return MHD_YES;
  for (char *p = name; *p; p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  /* Most headers are their own redaction, and the quick test says so
     without a copy; the rest go through the rule itself. */
  const char *v = value;
  char *red = NULL;
  if (!sim__redact_header_clean(name, value, vn)) {
    red = sim_redact_header(name, value);
    if (red == NULL) {
      l->used -= kn + 1;
      return MHD_YES;
    }
    v = red;
    vn = strlen(red);
  }
  /* A name sent twice is one field whose values are joined with ", ", as
     HTTP reads it (RFC 9110 5.3): one JSON key in the trace, not two. */
  for (int i = 0; i < l->n; i++) {
    if (strcmp(l->h[i].name, name) != 0) continue;
    l->used -= kn + 1; /* the name is there already */
    size_t a = strlen(l->h[i].value);
    if (a + 2 + vn < HDR_TEXT_MAX - l->used) {
      char *j = l->text + l->used;
      memcpy(j, l->h[i].value, a);
      memcpy(j + a, ", ", 2);
      memcpy(j + a + 2, v, vn);
      j[a + 2 + vn] = '\0';
      l->used += a + 2 + vn + 1;
      l->h[i].value = j;
    }
    free(red);
    return MHD_YES;
  }
  char *kept = l->n < SIM_MAX_REQ_HEADERS ? hdr_keep(l, v, vn) : NULL;
  free(red);
  if (kept == NULL) {
    l->used -= kn + 1;
    return MHD_YES;
  }
  l->h[l->n].name = name;
  l->h[l->n].value = kept;
  l->n++;
  return MHD_YES;
}

static void hdr_list_load(hdr_list *l) {
  if (l->loaded) return;
  l->loaded = 1;
  MHD_get_connection_values(l->mc, MHD_HEADER_KIND, collect_header, l);
}

/* sim_req.load_headers */
static void load_req_headers(void *arg, const sim_header **h, int *n) {
  hdr_list *l = arg;
  hdr_list_load(l);
  *h = l->h;
  *n = l->n;
}

/* ------------------------------------------------------------- arrival */

/* Sets c->model to the n bytes at m: in the connection's own buffer when
   they fit (a malloc and a free a request fewer, issue 30). */
static void set_model(sim_conn *c, const char *m, size_t n) {
  if (n < sizeof c->model_small) {
    memcpy(c->model_small, m, n);
    c->model_small[n] = '\0';
    c->model = c->model_small;
  } else {
    c->model = strndup(m, n);
  }
}

/* Reads what the trace and the decision need from the request body. */
static void parse_body(sim_conn *c) {
  c->tokens_in_est = sim__estimate_tokens(c->body_len);
  const char *dflt = c->path_model[0] ? c->path_model : "fusebox-1";
  sim_body_fields f;
  if (c->body_len && sim__body_scan(c->body, c->body_len, &f)) {
    /* the common body: its fields read in place (body_scan.c) */
    if (f.model) set_model(c, f.model, f.model_len);
    else set_model(c, dflt, strlen(dflt));
    c->stream_req = f.stream || c->path_stream ||
                    (!f.has_stream && sim__dialect_streams_by_default(c->dialect));
    c->ninputs = f.input_n >= 0 ? f.input_n : 1;
  } else {
    cJSON *j = c->body_len ? cJSON_ParseWithLength(c->body, c->body_len) : NULL;
    cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model");
    const char *m = cJSON_IsString(model) ? model->valuestring : dflt;
    set_model(c, m, strlen(m));
    cJSON *stream = cJSON_GetObjectItemCaseSensitive(j, "stream");
    c->stream_req = cJSON_IsTrue(stream) || c->path_stream ||
                    (stream == NULL && sim__dialect_streams_by_default(c->dialect));
    sim__offered_tools(c, j);
    cJSON *input = cJSON_GetObjectItemCaseSensitive(j, "input");
    c->ninputs = cJSON_IsArray(input) ? cJSON_GetArraySize(input) : 1;
    cJSON_Delete(j);
  }
  if (c->ninputs > 2048) c->ninputs = 2048;
  if (c->ninputs < 1) c->ninputs = 1;
}

/* Reads a request as arrive() does, before keying it; see server_int.h. */
void sim__request_read(sim_conn *c, const char *method, const char *url) {
  route(c, method, url);
  if (c->dialect != SIM_DIALECT_EFFECT) parse_body(c);
}

/* 1 when the request reached no provider (route() found none). */
static int unserved(const sim_conn *c) { return c->provider == -2 && !c->too_big; }

/* The arrive line, written field by field (no tree: issue 13). */
static void trace_arrive(sim_conn *c, const char *method, const char *url,
                         hdr_list *hl) {
  sim_jw *w = sim__trace_begin(c->srv->trace, "arrive", c->t_arrive);
  if (w == NULL) return;
  c->traced = 1;
  SIM__JW_NEXT_INT(w, "id", c->id);
  SIM__JW_NEXT_STR(w, "key", c->key);
  SIM__JW_NEXT_INT(w, "attempt", c->attempt);
  if (c->provider >= 0)
    SIM__JW_NEXT_STR(w, "provider", sim__scenario_provider_name(c->srv->sc, c->provider));
  else
    SIM__JW_LIT(w, ",\"provider\":null");
  SIM__JW_NEXT_STR(w, "method", method);
  /* a key in the path (/v1/sk-proj-.../chat) is the secret rule's, as in
     a header: the trace and the control journal never hold it */
  size_t ulen = strlen(url);
  int clean = sim__redact_text_clean(url, ulen); /* most paths: no copy */
  char *path = clean ? NULL : sim_redact_text(url, ulen);
  SIM__JW_NEXT_STR(w, "path", clean ? url : path ? path : "[redacted]");
  free(path);
  if (unserved(c)) SIM__JW_LIT(w, ",\"unserved\":true");
  /* HTTP/1.1 is the default and not written (its traces stay as they
     were); a stream front.c bridged from HTTP/2 arrives on a socket pair */
  if (sim__conn_is_h2(c->mc))
    SIM__JW_LIT(w, ",\"proto\":\"h2\"");
  if (c->provider == -2) SIM__JW_LIT(w, ",\"dialect\":null");
  else SIM__JW_NEXT_STR(w, "dialect", sim__dialect_name(c->dialect));
  SIM__JW_NEXT_BOOL(w, "stream", c->stream_req);
  if (c->model) SIM__JW_NEXT_STR(w, "model", c->model);
  SIM__JW_NEXT_INT(w, "body_bytes", (long long)c->body_len);
  SIM__JW_NEXT_KEY(w, "headers");
  sim__jw_open(w, '{');
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  sim_hdr_memo *memo = ci != NULL ? ci->socket_context : NULL;
  sim_hdr_raw raw;
  if (!sim__hdr_memo_hit(memo, c->mc, &raw, w)) { /* the headers this connection sent last */
    hdr_list_load(hl);
    size_t at = w->n;
    for (int i = 0; i < hl->n; i++) sim__jw_kstr(w, hl->h[i].name, hl->h[i].value);
    sim__hdr_memo_keep(memo, &raw, w, at);
  }
  sim__jw_close(w, '}');
  sim__trace_commit(c->srv->trace, w);
}

static void trace_error(sim_conn *c, const char *msg) {
  cJSON *ev = sim__trace_event("error", sim__srv_t(c->srv));
  if (ev == NULL) return;
  cJSON_AddNumberToObject(ev, "id", (double)c->id);
  cJSON_AddStringToObject(ev, "message", msg);
  sim__trace_emit(c->srv->trace, ev);
}

/* A plain error response in the dialect's shape, played as a fail step. */
static enum MHD_Result play_error(sim_conn *c, int status, const char *msg) {
  sim__step_free(c->root);
  c->root = sim__step_new(SIM_STEP_FAIL);
  if (c->root == NULL) return MHD_NO;
  c->root->status = status;
  c->root->message = msg ? strdup(msg) : NULL;
  c->cur = c->root;
  return sim__play(c);
}

/*
 * The paths route() serves, for the 404 of a path it does not: keep in
 * step with route(). A named provider NAME is also served at /NAME/v1/...
 */
static const char *const SERVED[] = {"/v1/chat/completions", "/v1/messages",
                                     "/v1/effects/NAME", NULL};

/*
 * A request to a path nobody serves: a 404 that says it is fusebox's, the
 * path asked for, the paths served and the base-URL variables to set, so a
 * client pointed at the wrong place fails loudly (type and code
 * fusebox_unknown_endpoint), and the trace marks it `unserved`.
 */
static enum MHD_Result play_unserved(sim_conn *c, const char *method, const char *url) {
  const char *host = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Host");
  char hostbuf[80];
  if (host == NULL || strlen(host) > 64 || strpbrk(host, " \"\\/") != NULL) {
    snprintf(hostbuf, sizeof hostbuf, "127.0.0.1:%d", sim_server_port(c->srv));
    host = hostbuf;
  }
  char served[512] = "";
  size_t off = 0;
  for (int i = 0; SERVED[i] && off < sizeof served; i++)
    off += (size_t)snprintf(served + off, sizeof served - off, "%s%s", i ? ", " : "", SERVED[i]);
  sim_scenario *sc = c->srv->sc;
  for (int i = 0; i < sim__scenario_nproviders(sc) && off < sizeof served; i++)
    off += (size_t)snprintf(served + off, sizeof served - off, ", /%s/v1/...",
                            sim__scenario_provider_name(sc, i));
  char msg[1400];
  snprintf(msg, sizeof msg,
           "fusebox: no provider serves %s %.200s. This fake provider serves %s; "
           "point the client at it with OPENAI_BASE_URL=http://%s/v1 (OpenAI SDKs), "
           "ANTHROPIC_BASE_URL=http://%s (Anthropic SDKs) or the base URL your client "
           "reads (fusebox exec sets them all).",
           method, url, served, host, host);
  sim__step_free(c->root);
  c->root = sim__step_new(SIM_STEP_FAIL);
  if (c->root == NULL) return MHD_NO;
  c->root->status = 404;
  c->root->code = strdup("fusebox_unknown_endpoint");
  c->root->type = strdup("fusebox_unknown_endpoint");
  c->root->message = strdup(msg);
  c->cur = c->root;
  return sim__play(c);
}

/* The request id: what "req_fbx%08x%08lx" prints, without printf's cost
   (every request); 7 + 8 + 16 digits at most, within rid's 40. */
static void format_rid(char rid[40], unsigned salt, long id) {
  memcpy(rid, "req_fbx", 7);
  char *o = sim__put_hex(rid + 7, salt, 8);
  o = sim__put_hex(o, (unsigned long)id, 8);
  *o = '\0';
}

/* The target an upstream{} attempt forwards (sim/play_upstream.c): the
   path as it arrived, a session's prefix already off, and a named
   provider's /NAME prefix taken off too (the upstream serves /v1/...).
   NULL when out of memory. */
static char *forwarded_path(const sim_conn *c, const char *url) {
  if (c->provider >= 0) {
    const char *name = sim__scenario_provider_name(c->srv->sc, c->provider);
    size_t n = name ? strlen(name) : 0;
    if (n > 0 && url[0] == '/' && strncmp(url + 1, name, n) == 0 && url[n + 1] == '/')
      url += n + 1;
  }
  return strdup(url);
}

/* The whole request is in: key it, trace it, ask the scenario, play. */
static enum MHD_Result arrive(sim_conn *c, const char *method, const char *url) {
  sim_server *srv = c->srv;
  c->phase = 1;
  c->t_arrive = sim__srv_t(srv);
  sim__request_read(c, method, url);

  const char *idem = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Idempotency-Key");
  if (idem != NULL) c->idem_key = strdup(idem);
  if (sim_request_key(idem, method, url, c->body, c->body_len, c->key, sizeof c->key) != 0)
    sim_request_key(NULL, method, url, c->body, c->body_len, c->key, sizeof c->key);
  char serr[SIM_ERRLEN] = "";
  long n = 0;
  int st_rc = srv->state->ops->arrive(srv->state, c->key, &c->attempt, &n, serr);
  long local_n = __atomic_add_fetch(&srv->arrivals, 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&srv->root->all_arrivals, 1, __ATOMIC_RELAXED);
  c->id = st_rc == SIM_OK ? n : -local_n; /* the fleet's arrival number */
  format_rid(c->rid, srv->rid_salt, c->id);

  hdr_list hl; /* not zero-filled: only n entries and used bytes are ever read */
  hl.n = 0;
  hl.loaded = 0;
  hl.used = 0;
  hl.mc = c->mc;
  trace_arrive(c, method, url, &hl);

  enum MHD_Result r;
  int limited = 0;
  if (st_rc != SIM_OK) {
    r = sim__state_fail(c, serr);
  } else if (c->too_big) {
    r = play_error(c, 413, "Request body exceeds the 1 MiB limit of this fake provider.");
  } else if (c->provider == -2) {
    r = play_unserved(c, method, url);
  } else if (c->dialect == SIM_DIALECT_MODELS && strcmp(method, "GET") != 0) {
    r = play_error(c, 405, "Method not allowed: use GET.");
  } else if (c->dialect != SIM_DIALECT_EFFECT && c->dialect != SIM_DIALECT_MODELS &&
             strcmp(method, "POST") != 0) {
    r = play_error(c, 405, "Method not allowed: use POST.");
  } else if (c->dialect == SIM_DIALECT_EFFECT && strcmp(method, "POST") != 0 &&
             strcmp(method, "GET") != 0) {
    r = play_error(c, 405, "Method not allowed: use POST or GET.");
  } else if (c->provider >= 0 && srv->state->rl &&
             (limited = srv->state->ops->rl_take(srv->state, c->tokens_in_est, &c->rl, serr))) {
    c->has_rl = limited > 0; /* refused by the bucket, before the scenario is asked */
    r = limited > 0
            ? play_error(c, 429, "Rate limit reached for requests. Please try again later.")
            : sim__state_fail(c, serr);
  } else if (c->lookup_key != NULL) {
    c->root = sim__step_new(SIM_STEP_EFFECT); /* a ledger lookup */
    c->cur = c->root;
    r = c->root ? sim__play(c) : MHD_NO;
  } else if (c->provider == -1 && !sim__scenario_has_effects(srv->sc)) {
    c->root = sim__step_new(SIM_STEP_EFFECT); /* default: apply, answer */
    c->cur = c->root;
    r = c->root ? sim__play(c) : MHD_NO;
  } else {
    c->has_rl = srv->state->rl != NULL && c->provider >= 0;
    sim_req req = {.attempt = c->attempt, .n = (int)c->id, .method = method, .path = url,
                   .provider = c->provider >= 0
                                   ? sim__scenario_provider_name(srv->sc, c->provider)
                                   : "effects",
                   .dialect = c->dialect, .load_headers = load_req_headers, .headers_arg = &hl,
                   .body = c->body, .body_len = c->body_len, .stream = c->stream_req,
                   .t = c->t_arrive / 1000.0 / srv->scale, .key = c->key};
    char err[SIM_ERRLEN] = "";
    sim_step *step = NULL;
    if (sim__scenario_decide(srv->sc, c->provider, &req, &step, err) != SIM_OK) {
      trace_error(c, err);
      char msg[SIM_ERRLEN + 40];
      snprintf(msg, sizeof msg, "fusebox scenario error: %s", err);
      r = play_error(c, 500, msg);
      c->how = "error";
    } else {
      c->root = step;
      c->cur = step;
      for (const sim_step *t = step; t != NULL; t = t->next)
        if (t->kind == SIM_STEP_UPSTREAM) c->fwd_path = forwarded_path(c, url);
      r = sim__play(c);
    }
  }
  return r;
}

/* ----------------------------------------------------- MHD callbacks */

/* The request's Content-Length, or -1 when it has none (chunked, or none). */
static long long content_length(struct MHD_Connection *mc) {
  const char *cl = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Content-Length");
  if (cl == NULL) return -1;
  /* libmicrohttpd refused any other form: digits, maybe after blanks
     (strtoull's 140 instructions were the most of this, every request) */
  while (*cl == ' ' || *cl == '\t') cl++;
  long long v = 0;
  for (; *cl >= '0' && *cl <= '9'; cl++)
    v = v > (LLONG_MAX - 9) / 10 ? LLONG_MAX : v * 10 + (*cl - '0');
  return v;
}

/* 1 when the request announces a body (a length > 0, or chunks). */
static int has_body(const sim_conn *c) {
  return c->content_length > 0 ||
         (c->content_length < 0 &&
          MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Transfer-Encoding") != NULL);
}

/* The first body buffer: Content-Length when it is sane, else the chunk. */
static size_t body_hint(const sim_conn *c, size_t n) {
  unsigned long long want = c->content_length > 0 ? (unsigned long long)c->content_length : 0;
  return want >= n && want <= SIM_MAX_BODY ? (size_t)want : n;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size,
                                  void **con_cls) {
  (void)version;
  sim_server *srv = cls;
  sim_conn *c = *con_cls;
  if (c == NULL) {
    c = sim__conn_new();
    if (c == NULL) return MHD_NO;
    c->srv = srv;
    c->mc = mc;
    c->provider = -2;
    *con_cls = c;
    __atomic_add_fetch(&srv->root->in_flight, 1, __ATOMIC_RELAXED);
    if (srv->sessions != NULL) sim__session_route(c, url); /* may pick another view */
    /* an upload whose peer already left is closed now, not in 300 s */
    c->content_length = content_length(mc);
    if (has_body(c)) (void)sim__conn_peer_gone(c);
    return MHD_YES;
  }
  if (c->phase == 0 && *upload_size > 0) {
    size_t n = *upload_size;
    *upload_size = 0;
    long long want = c->content_length;
    if (want < 0 || (unsigned long long)want > c->body_seen + n) (void)sim__conn_peer_gone(c);
    c->body_seen += n;
    if (c->too_big || c->body_len + n > SIM_MAX_BODY) {
      c->too_big = 1; /* keep reading, answer 413 at the end */
      return MHD_YES;
    }
    if (c->body_len + n > c->body_cap) {
      /* Sized to need: thousands of held connections each keep their body
         (an effect's fingerprint is taken when it is played). */
      size_t cap = c->body_cap ? c->body_cap : body_hint(c, n);
      while (cap < c->body_len + n) cap *= 2;
      char *nb = realloc(c->body, cap);
      if (nb == NULL) return MHD_NO;
      c->body = nb;
      c->body_cap = cap;
    }
    memcpy(c->body + c->body_len, upload_data, n);
    c->body_len += n;
    return MHD_YES;
  }
  if (c->phase == 0 && c->direct) return sim__direct_answer(c, method, url);
  if (c->phase == 0) return arrive(c, method, url + c->url_off);
  if (c->phase == 1 && c->waiting) { /* resumed after a wait */
    c->waiting = 0;
    SIM_STAGE(c, handler);
    enum MHD_Result r = sim__play(c);
    SIM_STAGE(c, queued);
    return r;
  }
  return MHD_YES;
}

static const char *how_from_toe(enum MHD_RequestTerminationCode toe) {
  switch (toe) {
  case MHD_REQUEST_TERMINATED_COMPLETED_OK: return "complete";
  case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return "shutdown";
  case MHD_REQUEST_TERMINATED_TIMEOUT_REACHED: return "timeout";
  case MHD_REQUEST_TERMINATED_CLIENT_ABORT:
  case MHD_REQUEST_TERMINATED_READ_ERROR: return "client_abort";
  default: return "client_abort"; /* a write failed: the peer went away */
  }
}

/* How the connection ended when the player did not end it itself: as
   libmicrohttpd's termination code says. */
static sim_end_how ended_from_toe(enum MHD_RequestTerminationCode toe) {
  switch (toe) {
  case MHD_REQUEST_TERMINATED_COMPLETED_OK: return SIM_END_CLEAN;
  case MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN: return SIM_END_SHUTDOWN;
  default: return SIM_END_PEER_LEFT; /* an abort, a read or write error, a timeout */
  }
}

/* The attempt's terminal state (sim__end_state): what the player sent,
   and how it or the connection ended. */
static const char *state_of(const sim_conn *c, enum MHD_RequestTerminationCode toe) {
  sim_sent sent = c->sent;
  sent.status = c->status;
  sim_end_how e = c->ended != SIM_END_OPEN ? c->ended : ended_from_toe(toe);
  return sim__end_state_name(sim__end_state(&sent, e));
}

/* 1 when the step played was a garbage body that parses as JSON: an answer
   with its fields missing, which clients treat apart from one that is not
   JSON at all (reports: "missing_fields" vs "not_json"). A large shared
   body is not looked at. */
static int garbage_is_json(const sim_conn *c) {
  const sim_step *s = c->cur;
  if (s == NULL || s->kind != SIM_STEP_GARBAGE || s->body == NULL || s->body_blob != NULL) return 0;
  cJSON *j = cJSON_Parse(s->body);
  cJSON_Delete(j);
  return j != NULL;
}

/* The end line: what was played and sent, field by field (no tree). */
static void trace_end(sim_conn *c, enum MHD_RequestTerminationCode toe) {
  sim_jw *w = sim__trace_begin(c->srv->trace, "end", sim__srv_t(c->srv));
  if (w == NULL) return;
  const char *how = c->how;
  /* A deliberate end wins, unless the peer left before it was reached. */
  if (how == NULL) how = how_from_toe(toe);
  SIM__JW_NEXT_INT(w, "id", c->id);
  SIM__JW_NEXT_STR(w, "step", c->step_name ? c->step_name : "none");
  SIM__JW_NEXT_INT(w, "status", c->status);
  SIM__JW_NEXT_STR(w, "how", how);
  SIM__JW_NEXT_STR(w, "state", state_of(c, toe));
  if (unserved(c)) SIM__JW_LIT(w, ",\"unserved\":true");
  SIM__JW_NEXT_INT(w, "bytes", (long long)c->bytes);
  if (c->resp_hdrs_len > 0) {
    SIM__JW_NEXT_KEY(w, "headers");
    sim__jw_open(w, '{');
    sim__conn_write_headers(c, w);
    sim__jw_close(w, '}');
  }
  if (c->has_ra) SIM__JW_NEXT_NUM(w, "retry_after_ms", c->retry_after_ms);
  if (c->sent.error_event) SIM__JW_LIT(w, ",\"error_event\":true");
  if (garbage_is_json(c)) SIM__JW_LIT(w, ",\"body_json\":true");
  /* a fail step's error, or the one a stream carried in band (error_after) */
  if (c->cur && (c->cur->kind == SIM_STEP_FAIL || c->sent.error_event)) {
    if (c->cur->code) SIM__JW_NEXT_STR(w, "code", c->cur->code);
    if (c->cur->type) SIM__JW_NEXT_STR(w, "type", c->cur->type);
  }
  SIM__JW_NEXT_INT(w, "tokens_in", c->tokens_in);
  SIM__JW_NEXT_INT(w, "tokens_out", c->tokens_out);
  SIM__JW_NEXT_INT(w, "chunks", c->chunks);
  if (c->stalled) SIM__JW_LIT(w, ",\"stalled\":true");
  if (c->no_end_marker) SIM__JW_LIT(w, ",\"end_marker\":false");
  if (c->no_finish) SIM__JW_LIT(w, ",\"finish\":false");
  if (c->delay_ms > 0) SIM__JW_NEXT_NUM(w, "delay_ms", c->delay_ms);
  if (c->text) SIM__JW_NEXT_STR(w, "text", c->text);
  cJSON *tools = sim__trace_tools(c);
  if (tools != NULL) {
    SIM__JW_NEXT_KEY(w, "tool_calls");
    sim__jw_cjson(w, tools);
    cJSON_Delete(tools);
  }
  sim__trace_commit(c->srv->trace, w);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
  (void)cls;
  (void)mc;
  sim_conn *c = *con_cls;
  if (c == NULL) return;
  if (c->phase >= 1 && !c->direct) trace_end(c, toe);
  SIM_STAGES_DONE(c);
  __atomic_sub_fetch(&c->srv->root->in_flight, 1, __ATOMIC_RELAXED);
  if (c->srv != c->srv->root) sim__session_unref(c->srv);
  free(c->refuse_msg);
  sim__player_free(c->player);
  sim__upplay_free(c->up);
  free(c->fwd_path);
  sim__step_free(c->root);
  free(c->resp_hdrs);
  /* c->body goes with c: sim__conn_release frees it or keeps it for the next */
  if (c->model != c->model_small) free(c->model);
  free(c->lookup_key);
  free(c->offered);
  free(c->idem_key);
  free(c->text);
  sim__conn_release(c);
  *con_cls = NULL;
}

/* Percent-decodes a path or query in place, except %00: a decoded NUL would
   cut the text short (an effect key "a%00b" looked up as "a"), so it stays
   the three characters it was. Returns the new length. */
static size_t unescape(void *cls, struct MHD_Connection *mc, char *s) {
  (void)cls;
  (void)mc;
  char *w = s;
  for (const char *r = s; *r != '\0';) {
    if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2]) &&
        !(r[1] == '0' && r[2] == '0')) {
      char hex[3] = {r[1], r[2], '\0'};
      *w++ = (char)strtol(hex, NULL, 16);
      r += 3;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
  return (size_t)(w - s);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
  (void)cls;
  (void)fmt;
  (void)ap; /* a library never prints; the trace tells what happened */
}

/* ---------------------------------------------------------- life cycle */

/* What every loop's daemon is made with (start_daemon). */
typedef struct daemon_args {
  sim_server *srv;
  unsigned flags;
  const struct sockaddr *addr;
  unsigned limit;
} daemon_args;

/* sim_daemon_fn: loop i's daemon; the first opens the socket. */
static struct MHD_Daemon *make_daemon(void *arg, int i, int n, int listen_fd) {
  const daemon_args *a = arg;
  /* the connection limit is the server's, shared out as libmicrohttpd's
     own thread pool did */
  unsigned limit = (a->limit + (unsigned)n - 1) / (unsigned)n;
  (void)i;
  (void)listen_fd; /* front.c owns the listening socket */
  return MHD_start_daemon(
      a->flags | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, a->srv,
      MHD_OPTION_NOTIFY_COMPLETED, on_completed, a->srv,
      MHD_OPTION_NOTIFY_CONNECTION, sim__conn_notify, a->srv,
      MHD_OPTION_CONNECTION_LIMIT, limit,
      MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)300,
      /* libmicrohttpd zeroes a connection's whole pool after every
         request: 16 KB (headers up to ~8 KB, as nginx's default) costs
         half the 32 KB default's memset (issue 13 profile). */
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SIM_CONN_POOL,
      MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)4096,
      MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
      MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
      MHD_OPTION_END);
}

static int start_daemon(sim_server *srv, const sim_server_opts *o, char err[SIM_ERRLEN]) {
  const char *bind = o->bind ? o->bind : "127.0.0.1";
  struct sockaddr_in a4;
  struct sockaddr_in6 a6;
  daemon_args a = {.srv = srv, .flags = MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG};
  memset(&a4, 0, sizeof a4);
  memset(&a6, 0, sizeof a6);
  if (inet_pton(AF_INET, bind, &a4.sin_addr) == 1) {
    a4.sin_family = AF_INET;
    a4.sin_port = htons((uint16_t)o->port);
    a.addr = (const struct sockaddr *)&a4;
  } else if (inet_pton(AF_INET6, bind, &a6.sin6_addr) == 1) {
    a6.sin6_family = AF_INET6;
    a6.sin6_port = htons((uint16_t)o->port);
    a.addr = (const struct sockaddr *)&a6;
    a.flags |= MHD_USE_IPv6;
  } else {
    snprintf(err, SIM_ERRLEN, "bad bind address '%s': give an IPv4 or IPv6 address", bind);
    return SIM_EINVAL;
  }
  a.limit = o->max_connections > 0 ? (unsigned)o->max_connections : 20000;
  /* One event loop per core: each has its own Lua state of the scenario
     and fires its own connections' timers; every structure they share is
     locked (the trace, the key map, the ledger, the rate limiter, the
     waiter); a connection stays on its loop. */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cores > 1 ? (int)(cores > SIM_LOOPS_MAX ? SIM_LOOPS_MAX : cores) : 1;
  if (o->loops > 0) threads = o->loops > SIM_LOOPS_MAX ? SIM_LOOPS_MAX : o->loops;
  int rc = sim__loops_start(threads, srv->waiter, &srv->env, make_daemon, &a, &srv->loops);
  if (rc == SIM_ELISTEN) {
    snprintf(err, SIM_ERRLEN, "cannot listen on %s:%d (port in use, or no permission)",
             bind, o->port);
    return rc;
  }
  if (rc == SIM_OK)
    rc = sim__front_start(a.addr, a.addr->sa_family == AF_INET6 ? sizeof a6 : sizeof a4,
                          srv->loops, &srv->front);
  if (rc == SIM_ELISTEN) {
    snprintf(err, SIM_ERRLEN, "cannot listen on %s:%d (port in use, or no permission)",
             bind, o->port);
    return rc;
  }
  if (rc != SIM_OK) return rc;
  srv->port = sim__front_port(srv->front);
  return SIM_OK;
}

/* Loads the scenario, opens the trace and starts listening; see sim.h. */
int sim_server_start(const sim_server_opts *o, sim_server **out, char err[SIM_ERRLEN]) {
  int rc;
  err[0] = '\0';
  if (o == NULL || (o->scenario_path == NULL && o->scenario == NULL && o->control == NULL) ||
      o->port < 0 ||
      o->port > 65535 ||
      o->time_scale < 0) {
    snprintf(err, SIM_ERRLEN, "bad server options");
    return SIM_EINVAL;
  }
  sim_server *srv = calloc(1, sizeof *srv);
  if (srv == NULL) return SIM_ENOMEM;
  srv->root = srv;
  srv->control = o->control;
  srv->control_arg = o->control_arg;
  if (o->control != NULL && o->state_url != NULL) {
    snprintf(err, SIM_ERRLEN, "the control API keeps sessions in process: not with --state");
    rc = SIM_EINVAL;
    goto fail;
  }
  if (o->upstream != NULL) {
    rc = sim_upstream_base(o->upstream, &srv->upstream, err);
    if (rc != SIM_OK) goto fail;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) { /* paired in sim_server_stop */
      free(srv->upstream);
      srv->upstream = NULL;
      snprintf(err, SIM_ERRLEN, "libcurl did not initialise");
      rc = SIM_ENOMEM;
      goto fail;
    }
  }
  srv->scale = o->time_scale > 0 ? o->time_scale : 1.0;
  srv->wire = o->scale_wire ? srv->scale : 1.0;
  srv->env = o->env;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  srv->rid_salt = (unsigned)(ts.tv_nsec ^ (ts.tv_sec << 8));

  if (o->scenario != NULL) {
    rc = sim__scenario_claim(o->scenario);
    if (rc != SIM_OK) {
      snprintf(err, SIM_ERRLEN, "%s: already served by a session: load it again",
               sim__scenario_path(o->scenario));
      goto fail;
    }
    srv->sc = o->scenario;
  } else if (o->scenario_path != NULL) {
    rc = sim__scenario_load(o->scenario_path, o->seed, &srv->sc, err);
    if (rc != SIM_OK) goto fail;
    srv->own_sc = 1;
  }
  rc = sim__trace_open(o->trace_path, o->trace_stream, &srv->trace, err);
  if (rc == SIM_OK) sim__trace_on_error(srv->trace, o->on_trace_error, o->on_trace_error_arg);
  if (rc != SIM_OK) goto fail;
  if (o->control != NULL) { /* the default session's lines are kept too */
    srv->trace_file = srv->trace;
    srv->trace = NULL;
    rc = sim__trace_tap_new(srv->trace_file, NULL, SIM_SESSION_TRACE_MAX, &srv->trace);
    if (rc == SIM_OK) rc = sim__sessions_new(srv);
    if (rc != SIM_OK) goto fail;
  }
  if (srv->sc != NULL) rc = sim__state_open(o, srv->sc, srv->scale, &srv->env, &srv->state, err);
  if (rc != SIM_OK) goto fail;
  sim__state_instance(o, srv->instance, sizeof srv->instance);
  rc = sim__waiter_new(&srv->env, &srv->waiter);
  if (rc != SIM_OK) goto fail;
  rc = start_daemon(srv, o, err);
  if (rc != SIM_OK) goto fail;
  /* a fleet shares one session clock */
  srv->t0 = sim__srv_now(srv) - (srv->state ? srv->state->age_ms : 0);
  sim__trace_session(srv, o->seed);
  *out = srv;
  return SIM_OK;
fail:
  if (err[0] == '\0') snprintf(err, SIM_ERRLEN, "%s", sim_strerror(rc));
  sim_server_free(srv);
  return rc;
}

/* The port the server listens on. */
int sim_server_port(const sim_server *srv) { return srv->port; }

/* Number of arrivals so far. */
long sim_server_arrivals(const sim_server *srv) {
  return __atomic_load_n(&srv->all_arrivals, __ATOMIC_RELAXED);
}

int sim_server_nproviders(const sim_server *srv) {
  return srv->sc ? sim__scenario_nproviders(srv->sc) : 0;
}

const char *sim_server_provider_name(const sim_server *srv, int i) {
  return sim__scenario_provider_name(srv->sc, i);
}

double sim_server_elapsed_ms(const sim_server *srv) { return sim__srv_t(srv); }

/* Writes a caller's event to the trace with the trace clock; see sim.h. */
int sim_server_note(sim_server *srv, const char *json) {
  cJSON *ev = json ? cJSON_Parse(json) : NULL;
  if (!cJSON_IsObject(ev)) {
    cJSON_Delete(ev);
    return SIM_EINVAL;
  }
  double t = sim__srv_t(srv);
  cJSON_DeleteItemFromObject(ev, "t");
  cJSON_AddNumberToObject(ev, "t", (double)(long long)(t * 1000.0) / 1000.0);
  sim__trace_emit(srv->trace, ev);
  return SIM_OK;
}

/* Stops serving with the trace complete; see sim.h. */
void sim_server_free(sim_server *srv) { (void)sim_server_stop(srv, NULL); }

/*
 * Waits, at most SIM_DRAIN_MS of real time, until no request is in flight.
 * A resumed connection's answer is written a loop turn after it is made and
 * completed after that: under load a client can read its whole answer (and
 * exit, and `exec` stop the server) before libmicrohttpd reports the request
 * complete, and stopping at once traced a delivered answer as `shutdown`.
 * Requests the waiter just woke end here too, each with its own `how`.
 */
static void drain(sim_server *srv) {
  struct timespec step = {0, 1000000}; /* 1 ms */
  for (int i = 0; i < SIM_DRAIN_MS; i++) {
    if (__atomic_load_n(&srv->in_flight, __ATOMIC_RELAXED) <= 0) return;
    nanosleep(&step, NULL);
  }
}

/* Stops and releases the server; see sim.h. */
int sim_server_stop(sim_server *srv, char err[SIM_ERRLEN]) {
  if (srv == NULL) return SIM_OK;
  /* Wake every hung, delayed or stalled connection, let what is in flight
     finish (bounded), then stop the daemon, which ends the rest and writes
     their `end` lines. */
  int served = srv->loops != NULL;
  if (srv->waiter) sim__waiter_shutdown(srv->waiter);
  if (served) drain(srv);
  /* no new connection; the HTTP/2 ones end (their streams in flight
     were given the drain too) */
  sim__front_stop(srv->front);
  srv->front = NULL;
  sim__loops_stop(srv->loops);
  srv->loops = NULL;
  if (srv->trace && served) {
    cJSON *ev = sim__trace_event("done", sim__srv_t(srv));
    if (ev) {
      cJSON_AddNumberToObject(ev, "arrivals", (double)srv->arrivals);
      sim__trace_emit(srv->trace, ev);
    }
  }
  if (srv->sessions) sim__sessions_free(srv);
  sim__waiter_free(srv->waiter);
  int rc;
  if (srv->trace_file != NULL) {
    sim__trace_close(srv->trace); /* the default session's tap */
    rc = sim__trace_finish(srv->trace_file, err);
  } else {
    rc = sim__trace_finish(srv->trace, err);
  }
  sim__state_free(srv->state);
  if (srv->own_sc) sim__scenario_free(srv->sc);
  /* released upstream{} workers end on their own once aborted; libcurl
     must outlive them */
  if (srv->upstream != NULL && sim_upx_drain(3000) == 0) curl_global_cleanup();
  free(srv->upstream);
  free(srv);
  return rc;
}
