/*
 * play_upstream.c - the upstream{} step: the attempt is forwarded to the
 * real provider given by `serve --upstream URL` (sim/upstream.c: the
 * recorder's forwarding rules, a libcurl worker per attempt), and its
 * answer passed on to the client with the step's faults: a delay before
 * forwarding, the body cut after N bytes, and on an SSE stream a close, an
 * in-stream error event or a stall after N frames (sim/frames.c), or a
 * close inside a tool call's arguments (docs/upstream.md).
 *
 * The event loop never blocks on the upstream: the connection is
 * suspended on a short timer (POLL_MS) while the worker has nothing new,
 * as any delay is. The attempt is traced like any other: its status, the
 * upstream's headers (through the redaction rule), the frames passed on,
 * the answer text, and the terminal state by the one rule (end_state.c)
 * from what was actually sent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "sim/play_int.h"
#include "sim/server_int.h"

#define POLL_MS 5               /* how often a suspended attempt looks at its worker */
#define READ_MAX ((size_t)16 << 10) /* bytes taken from the worker at a time */
#define BODY_KEEP ((size_t)256 << 10) /* bytes of a whole body kept to find its text */
#define MAX_TOOLS 16            /* tool calls of one answer traced */
#define TOOL_ARGS_MAX ((size_t)64 << 10) /* argument bytes of one tool call kept */

/* A tool call of the real answer, as the client received it. */
typedef struct up_tool {
  long index;             /* the stream's index of the call (OpenAI, Anthropic) */
  char *id, *name;
  char *args;             /* argument text received so far */
  size_t args_len;
} up_tool;

struct sim_upplay {
  sim_upx *x;
  sim_upx_info info;
  int delay_armed, delayed;
  int waiting;            /* suspended inside the content reader */
  int stream;             /* the answer is an SSE stream */
  sim_frames fr;
  int in_frame;           /* bytes of the frame under way were passed on */
  long frames;            /* frames passed on whole */
  long passed;            /* body bytes passed on */
  int stall_done;
  int cut_now;            /* cut_arguments: the frame just passed carried arguments */
  char buf[READ_MAX];     /* taken from the worker, not yet passed on */
  size_t buf_len, buf_off;
  char *err;              /* error_after: the dialect's error event */
  size_t err_len, err_off;
  int err_sent;
  char *body;             /* a whole body's first BODY_KEEP bytes (its text) */
  size_t body_len;
  up_tool tools[MAX_TOOLS];
  int ntools;
};

/* Releases the attempt's state; the worker is let go, never waited for. */
void sim__upplay_free(struct sim_upplay *u) {
  if (u == NULL) return;
  sim_upx_free(u->x, 0);
  sim__frames_clear(&u->fr);
  free(u->err);
  free(u->body);
  for (int i = 0; i < u->ntools; i++) {
    free(u->tools[i].id);
    free(u->tools[i].name);
    free(u->tools[i].args);
  }
  free(u);
}

/* ------------------------------------------------------------ tool calls */

/* The call at stream index i, made when new (NULL past MAX_TOOLS). */
static up_tool *tool_at(struct sim_upplay *u, long i) {
  for (int k = 0; k < u->ntools; k++)
    if (u->tools[k].index == i) return &u->tools[k];
  if (u->ntools == MAX_TOOLS) return NULL;
  up_tool *t = &u->tools[u->ntools++];
  t->index = i;
  return t;
}

static void set_str(char **slot, const cJSON *v) {
  if (*slot == NULL && cJSON_IsString(v)) *slot = strdup(v->valuestring);
}

static void add_args(up_tool *t, const char *p, size_t n) {
  if (t == NULL || n == 0 || t->args_len + n > TOOL_ARGS_MAX) return;
  char *a = realloc(t->args, t->args_len + n + 1);
  if (a == NULL) return;
  memcpy(a + t->args_len, p, n);
  t->args = a;
  t->args_len += n;
  a[t->args_len] = '\0';
}

/* The tool calls a parsed stream event or answer body carries: OpenAI
   chat (delta.tool_calls / message.tool_calls) and Anthropic (tool_use
   blocks and their input_json_delta pieces). */
static void note_tools(struct sim_upplay *u, const cJSON *j) {
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
  if (cJSON_IsArray(ch) && cJSON_GetArraySize(ch) > 0) {
    const cJSON *c0 = cJSON_GetArrayItem(ch, 0);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(c0, "delta");
    if (m == NULL) m = cJSON_GetObjectItemCaseSensitive(c0, "message");
    const cJSON *tc, *calls = cJSON_GetObjectItemCaseSensitive(m, "tool_calls");
    long pos = 0;
    cJSON_ArrayForEach(tc, calls) {
      const cJSON *ix = cJSON_GetObjectItemCaseSensitive(tc, "index");
      up_tool *t = tool_at(u, cJSON_IsNumber(ix) ? (long)ix->valuedouble : pos);
      pos++;
      if (t == NULL) continue;
      const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
      set_str(&t->id, cJSON_GetObjectItemCaseSensitive(tc, "id"));
      set_str(&t->name, cJSON_GetObjectItemCaseSensitive(fn, "name"));
      const cJSON *a = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
      if (cJSON_IsString(a)) add_args(t, a->valuestring, strlen(a->valuestring));
    }
    return;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(j, "type");
  const char *ty = cJSON_IsString(type) ? type->valuestring : "";
  const cJSON *ix = cJSON_GetObjectItemCaseSensitive(j, "index");
  long i = cJSON_IsNumber(ix) ? (long)ix->valuedouble : 0;
  if (strcmp(ty, "content_block_start") == 0) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "content_block");
    const cJSON *bt = cJSON_GetObjectItemCaseSensitive(b, "type");
    if (!cJSON_IsString(bt) || strcmp(bt->valuestring, "tool_use") != 0) return;
    up_tool *t = tool_at(u, i);
    if (t == NULL) return;
    set_str(&t->id, cJSON_GetObjectItemCaseSensitive(b, "id"));
    set_str(&t->name, cJSON_GetObjectItemCaseSensitive(b, "name"));
  } else if (strcmp(ty, "content_block_delta") == 0) {
    const cJSON *pj = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "delta"),
                                                       "partial_json");
    if (!cJSON_IsString(pj)) return;
    for (int k = 0; k < u->ntools; k++)
      if (u->tools[k].index == i) add_args(&u->tools[k], pj->valuestring, strlen(pj->valuestring));
  } else if (strcmp(ty, "message") == 0) { /* a whole Anthropic answer */
    const cJSON *b, *content = cJSON_GetObjectItemCaseSensitive(j, "content");
    long k = 0;
    cJSON_ArrayForEach(b, content) {
      const cJSON *bt = cJSON_GetObjectItemCaseSensitive(b, "type");
      long at = k++;
      if (!cJSON_IsString(bt) || strcmp(bt->valuestring, "tool_use") != 0) continue;
      up_tool *t = tool_at(u, at);
      if (t == NULL) continue;
      set_str(&t->id, cJSON_GetObjectItemCaseSensitive(b, "id"));
      set_str(&t->name, cJSON_GetObjectItemCaseSensitive(b, "name"));
      char *in = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(b, "input"));
      if (in != NULL) add_args(t, in, strlen(in));
      free(in);
    }
  }
}

/* The tool calls of the real answer for the trace; see server_int.h. A
   streamed call whose arguments are not JSON in a stream that never
   reached its end marker was cut inside them. */
cJSON *sim__upplay_tools(const sim_conn *c) {
  const struct sim_upplay *u = c->up;
  if (u == NULL || u->ntools == 0) return NULL;
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr != NULL && i < u->ntools; i++) {
    const up_tool *t = &u->tools[i];
    const char *text = t->args ? t->args : "";
    cJSON *j = cJSON_Parse(text);
    const char *verdict = j != NULL ? "valid" : u->stream && !c->sent.end_marker ? "cut" : "invalid";
    cJSON_Delete(j);
    cJSON *o = sim__trace_tool_entry(c, t->id, t->name, verdict, text, t->args_len);
    if (o != NULL) cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

/* An `error` event of kind "upstream" in the trace (why the attempt got a
   502 from fusebox instead of the provider's answer). */
static void trace_upstream_error(sim_conn *c, const char *msg) {
  cJSON *ev = sim__trace_event("error", sim__srv_t(c->srv));
  if (ev == NULL) return;
  cJSON_AddNumberToObject(ev, "id", (double)c->id);
  cJSON_AddStringToObject(ev, "kind", "upstream");
  cJSON_AddStringToObject(ev, "message", msg);
  sim__trace_emit(c->srv->trace, ev);
}

/* fusebox's own 502, in the dialect's error shape. */
static enum MHD_Result answer_502(sim_conn *c, const char *msg) {
  trace_upstream_error(c, msg);
  char *body = sim__error_body(c->dialect, 502, "upstream_unreachable", "fusebox_upstream", msg);
  if (body == NULL) return MHD_NO;
  enum MHD_Result r = sim__play_body(c, 502, body, strlen(body));
  free(body);
  return r;
}

/* Suspends the attempt for POLL_MS: the worker may have news then. */
static void poll_later(sim_conn *c) {
  c->waiting = 1;
  sim__conn_wait(c, sim__srv_now(c->srv) + POLL_MS);
}

/* ------------------------------------------------------------ forwarding */

typedef struct fwd {
  char **lines;
  int n;
  char *query;
  size_t qlen, qcap;
} fwd;

/* A request header, forwarded unless hop-by-hop (the recorder's rule). */
static enum MHD_Result add_header_line(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value) {
  (void)kind;
  fwd *f = cls;
  if (key == NULL || sim_upstream_hop_by_hop(key) || f->n >= SIM_UPX_MAX_HEADERS) return MHD_YES;
  if (strcasecmp(key, "idempotency-key") != 0 && strncasecmp(key, "x-fusebox-", 10) == 0)
    return MHD_YES; /* fusebox's own (the session header) is not the provider's */
  size_t n = strlen(key) + (value ? strlen(value) : 0) + 4;
  char *line = malloc(n);
  if (line == NULL) return MHD_YES;
  if (value && value[0]) snprintf(line, n, "%s: %s", key, value);
  else snprintf(line, n, "%s;", key); /* curl's way to send an empty header */
  char **v = realloc(f->lines, (size_t)(f->n + 1) * sizeof *v);
  if (v == NULL) {
    free(line);
    return MHD_YES;
  }
  f->lines = v;
  f->lines[f->n++] = line;
  return MHD_YES;
}

/* A query argument, re-escaped as record does. */
static enum MHD_Result add_query(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value) {
  (void)kind;
  fwd *f = cls;
  char *k = curl_easy_escape(NULL, key, 0);
  char *v = value ? curl_easy_escape(NULL, value, 0) : NULL;
  if (k != NULL) {
    size_t need = f->qlen + strlen(k) + (v ? strlen(v) : 0) + 3;
    if (need > f->qcap) {
      char *p = realloc(f->query, need * 2);
      if (p != NULL) f->query = p, f->qcap = need * 2;
    }
    if (need <= f->qcap)
      f->qlen += (size_t)snprintf(f->query + f->qlen, f->qcap - f->qlen, "%c%s%s%s",
                                  f->qlen ? '&' : '?', k, v ? "=" : "", v ? v : "");
  }
  curl_free(k);
  curl_free(v);
  return MHD_YES;
}

/* Starts the worker for this attempt. SIM_OK, or a code with msg set. */
static int start_forward(sim_conn *c, struct sim_upplay *u, char *msg, size_t cap) {
  const char *base = c->srv->root->upstream;
  if (base == NULL) {
    snprintf(msg, cap, "fusebox: upstream{} forwards to the provider given by "
                       "--upstream URL (serve, exec), and none was given");
    return SIM_EINVAL;
  }
  fwd f = {0};
  MHD_get_connection_values(c->mc, MHD_GET_ARGUMENT_KIND, add_query, &f);
  char *url = NULL;
  int rc = sim_upstream_target(base, c->fwd_path ? c->fwd_path : "", f.query, &url);
  if (rc != SIM_OK) {
    snprintf(msg, cap, "fusebox: the request target is not a path, never forwarded");
  } else {
    MHD_get_connection_values(c->mc, MHD_HEADER_KIND, add_header_line, &f);
    /* The server takes POST only, but GET for the models list and an
       effect lookup (server.c refuses any other method first). */
    int get = c->dialect == SIM_DIALECT_MODELS || c->lookup_key != NULL;
    sim_upx_req req = {.method = get ? "GET" : "POST", .url = url,
                       .headers = (const char *const *)f.lines, .nheaders = f.n,
                       .body = c->body, .body_len = c->body_len};
    rc = sim_upx_start(&req, &u->x);
    if (rc != SIM_OK) snprintf(msg, cap, "fusebox: out of memory forwarding the request");
  }
  for (int i = 0; i < f.n; i++) free(f.lines[i]);
  free(f.lines);
  free(f.query);
  free(url);
  return rc;
}

/* ---------------------------------------------------------- the answer */

/* Notes the answer text a stream frame carries (OpenAI chat
   choices[0].delta.content, Anthropic delta.text) for the trace. */
static void note_frame_text(sim_conn *c, const char *f, size_t n) {
  const char *d = NULL;
  for (size_t i = 0; i + 5 <= n; i++)
    if (memcmp(f + i, "data:", 5) == 0 && (i == 0 || f[i - 1] == '\n' || f[i - 1] == '\r')) {
      d = f + i + 5;
      break;
    }
  if (d == NULL || *d == '\0') return;
  cJSON *j = cJSON_ParseWithLength(d, n - (size_t)(d - f));
  if (j == NULL) return;
  const cJSON *t = NULL;
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
  if (cJSON_IsArray(ch) && cJSON_GetArraySize(ch) > 0) {
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ch, 0), "delta");
    t = cJSON_GetObjectItemCaseSensitive(delta, "content");
  } else {
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(j, "delta");
    t = cJSON_GetObjectItemCaseSensitive(delta, "text");
  }
  if (cJSON_IsString(t) && t->valuestring[0]) sim__conn_add_text(c, t->valuestring);
  note_tools(c->up, j);
  cJSON_Delete(j);
}

/* The text of a whole JSON answer (OpenAI chat choices[0].message.content,
   Anthropic content[].text) for the trace. */
static void note_body_text(sim_conn *c, const char *b, size_t n) {
  cJSON *j = cJSON_ParseWithLength(b, n);
  if (j == NULL) return;
  const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "choices");
  if (cJSON_IsArray(ch) && cJSON_GetArraySize(ch) > 0) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(ch, 0), "message");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "content");
    if (cJSON_IsString(t)) sim__conn_add_text(c, t->valuestring);
  }
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(j, "content");
  const cJSON *part;
  if (cJSON_IsArray(content))
    cJSON_ArrayForEach(part, content) {
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(part, "text");
      if (cJSON_IsString(t)) sim__conn_add_text(c, t->valuestring);
    }
  note_tools(c->up, j);
  cJSON_Delete(j);
}

/* The dialect's in-stream error event for error_after (the step's status,
   code, type and message, or the stream{} defaults). 0, or -1. */
static int build_error_frame(sim_conn *c, struct sim_upplay *u, const sim_step *s) {
  sim_step *st = sim__step_new(SIM_STEP_STREAM);
  if (st == NULL) return -1;
  st->error_after = 0;
  st->status = s->status;
  st->code = s->code ? strdup(s->code) : NULL;
  st->type = s->type ? strdup(s->type) : NULL;
  st->message = s->message ? strdup(s->message) : NULL;
  char *texts[] = {""};
  sim_sse sse;
  int rc = sim__sse_build(c->dialect, st, c->rid, c->model ? c->model : "upstream", 0, texts, 1,
                          &sse);
  sim__step_free(st);
  if (rc != SIM_OK) return -1;
  if (sse.error != NULL) {
    u->err_len = sse.binary ? sse.error_len : strlen(sse.error);
    u->err = malloc(u->err_len + 1);
    if (u->err != NULL) memcpy(u->err, sse.error, u->err_len);
  }
  sim__sse_clear(&sse);
  return u->err != NULL ? 0 : -1;
}

/* The answer's Retry-After (delta-seconds, an HTTP-date, retry-after-ms)
   for the trace's retry_after_ms, as the scenario's own would be. */
static void note_retry_after(sim_conn *c, const char *name, const char *value) {
  char *end = NULL;
  if (strcasecmp(name, "retry-after-ms") == 0) {
    double ms = strtod(value, &end);
    if (end != value && isfinite(ms) && ms >= 0) c->has_ra = 1, c->retry_after_ms = ms;
  } else if (strcasecmp(name, "retry-after") == 0 && !c->has_ra) {
    double s = strtod(value, &end), when;
    if (end != value && *end == '\0' && isfinite(s) && s >= 0) {
      c->has_ra = 1;
      c->retry_after_ms = s * 1000.0;
    } else if (sim_http_date_parse(value, &when) == 0) {
      double ahead = when - sim__env_wall_s(&c->srv->env);
      c->has_ra = 1;
      c->retry_after_ms = ahead > 0 ? ahead * 1000.0 : 0;
    }
  }
}

/* Ends the attempt's stream part at a clean end of the upstream's body. */
static ssize_t clean_end(sim_conn *c, struct sim_upplay *u) {
  if (!u->stream && u->body != NULL) note_body_text(c, u->body, u->body_len);
  /* An API whose stream has no end marker (Gemini) ends by ending. */
  if (u->stream && c->dialect == SIM_DIALECT_GEMINI) c->sent.end_marker = 1;
  if (u->stream && !c->sent.end_marker) c->no_end_marker = 1;
  return MHD_CONTENT_READER_END_OF_STREAM;
}

/* Keeps a whole body's first bytes, to find its text at the end. */
static void keep_body(struct sim_upplay *u, const char *p, size_t n) {
  if (u->stream || u->body_len >= BODY_KEEP) return;
  if (n > BODY_KEEP - u->body_len) n = BODY_KEEP - u->body_len;
  char *b = realloc(u->body, u->body_len + n + 1);
  if (b == NULL) return;
  memcpy(b + u->body_len, p, n);
  u->body = b;
  u->body_len += n;
  b[u->body_len] = '\0';
}

/* A frame fault due now, between frames of a stream: 0 none (pass the
   next bytes on), 1 the reader returns *ret (a cut, a stall), 2 the error
   event is to be sent now. */
static int frame_fault(sim_conn *c, struct sim_upplay *u, const sim_step *s, ssize_t *ret) {
  if (u->in_frame || !u->stream) return 0;
  if (u->cut_now) {
    sim__play_end(c, "cut_arguments", SIM_END_CUT);
    *ret = MHD_CONTENT_READER_END_WITH_ERROR;
    return 1;
  }
  if (s->error_after >= 0 && u->frames == s->error_after && !u->err_sent) {
    if (build_error_frame(c, u, s) != 0) {
      sim__play_end(c, "dropped", SIM_END_CUT);
      *ret = MHD_CONTENT_READER_END_WITH_ERROR;
      return 1;
    }
    u->err_sent = 1;
    c->sent.error_event = 1;
    c->how = "complete";
    return 2;
  }
  if (s->drop_after >= 0 && u->frames == s->drop_after) {
    sim__play_end(c, "dropped", SIM_END_CUT);
    *ret = MHD_CONTENT_READER_END_WITH_ERROR;
    return 1;
  }
  if (s->stall_after >= 0 && u->frames == s->stall_after && !u->stall_done) {
    u->stall_done = 1;
    c->stalled = 1;
    c->sent.stalling = 1;
    u->waiting = 1;
    sim__conn_wait(c, s->stall < 0 ? -1
                                   : sim__srv_now(c->srv) + s->stall * 1000.0 * c->srv->scale);
    *ret = 0;
    return 1;
  }
  return 0;
}

/* The content reader: the upstream's body as it comes, with the faults. */
static ssize_t up_reader(void *cls, uint64_t pos, char *out, size_t max) {
  (void)pos;
  sim_conn *c = cls;
  struct sim_upplay *u = c->up;
  const sim_step *s = c->cur;
  if (u->waiting) {
    u->waiting = 0;
    if (c->wake == SIM_WAKE_HANGUP) {
      sim__play_end(c, "client_abort", SIM_END_PEER_LEFT);
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (c->wake == SIM_WAKE_SHUTDOWN) {
      sim__play_end(c, "shutdown", SIM_END_SHUTDOWN);
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    if (u->stall_done) c->sent.stalling = 0; /* a timed stall is over: resumed */
  }
  for (;;) {
    if (u->err_sent && u->err != NULL) { /* the error event, then the end */
      if (u->err_off == u->err_len) return MHD_CONTENT_READER_END_OF_STREAM;
      size_t n = u->err_len - u->err_off < max ? u->err_len - u->err_off : max;
      memcpy(out, u->err + u->err_off, n);
      u->err_off += n;
      c->bytes += (long)n;
      return (ssize_t)n;
    }
    ssize_t ret = 0;
    int f = frame_fault(c, u, s, &ret);
    if (f == 1) return ret;
    if (f == 2) continue;
    if (u->buf_off == u->buf_len) {
      long n = sim_upx_read(u->x, u->buf, sizeof u->buf);
      if (n == 0) {
        u->waiting = 1;
        sim__conn_wait(c, sim__srv_now(c->srv) + POLL_MS);
        return 0;
      }
      if (n < 0) {
        sim_upx_info_get(u->x, &u->info);
        if (u->info.result == SIM_UPX_OK) return clean_end(c, u);
        /* the provider cut it: mirrored, and traced as cut */
        sim__play_end(c, "upstream_closed", SIM_END_CUT);
        if (!u->stream) c->sent.short_body = 1;
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      u->buf_len = (size_t)n;
      u->buf_off = 0;
    }
    size_t lim = u->buf_len - u->buf_off;
    if (lim > max) lim = max;
    if (s->cut_at >= 0) {
      if (u->passed >= s->cut_at) {
        c->sent.short_body = 1;
        sim__play_end(c, "early_close", SIM_END_CUT);
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      if ((long)lim > s->cut_at - u->passed) lim = (size_t)(s->cut_at - u->passed);
    }
    const char *p = u->buf + u->buf_off;
    size_t took = lim;
    if (u->stream) {
      int ended = 0;
      took = sim__frames_feed(&u->fr, p, lim, &ended);
      u->in_frame = !ended;
      if (ended) {
        u->frames++;
        c->chunks = (int)u->frames;
        if (sim__frame_is_end(u->fr.buf, u->fr.len)) c->sent.end_marker = 1;
        if (sim__frame_is_error(u->fr.buf, u->fr.len)) c->sent.error_event = 1;
        if (s->cut_arguments && sim__frame_has_arguments(u->fr.buf, u->fr.len)) u->cut_now = 1;
        note_frame_text(c, u->fr.buf, u->fr.len);
      }
    }
    memcpy(out, p, took);
    u->buf_off += took;
    u->passed += (long)took;
    c->bytes += (long)took;
    if (!u->stream) {
      keep_body(u, p, took);
      /* a body of known length is over when it is all out (libmicrohttpd
         asks no more): its text is noted now */
      if (u->info.content_length >= 0 && u->passed >= u->info.content_length && u->body != NULL &&
          s->cut_at < 0) {
        note_body_text(c, u->body, u->body_len);
        free(u->body);
        u->body = NULL;
      }
    }
    return (ssize_t)took;
  }
}

/* The head is in: queue the response the upstream gave, with its body to
   come through up_reader. */
static enum MHD_Result queue_answer(sim_conn *c, struct sim_upplay *u) {
  u->stream = u->info.stream;
  /* A whole body keeps its length, so a truncate is an early close below
     it; a stream goes chunked, so frames can be cut or added. */
  uint64_t size = !u->stream && u->info.content_length >= 0 ? (uint64_t)u->info.content_length
                                                            : MHD_SIZE_UNKNOWN;
  struct MHD_Response *r = MHD_create_response_from_callback(size, 16384, up_reader, c, NULL);
  if (r == NULL) return MHD_NO;
  char *names[SIM_UPX_MAX_HEADERS], *values[SIM_UPX_MAX_HEADERS];
  int nh = sim_upx_headers(u->x, names, values, SIM_UPX_MAX_HEADERS);
  for (int i = 0; i < nh; i++) {
    if (!sim_upstream_hop_by_hop(names[i])) {
      sim__play_header(r, c, names[i], values[i]);
      note_retry_after(c, names[i], values[i]);
    }
    free(names[i]);
    free(values[i]);
  }
  c->status = (int)u->info.status;
  c->sent.stream = (unsigned char)u->stream;
  c->sent.done = SIM_STATE_COMPLETE;
  c->phase = 2;
  enum MHD_Result ret = MHD_queue_response(c->mc, (unsigned)u->info.status, r);
  MHD_destroy_response(r);
  return ret;
}

/* Plays an upstream{} step; see play_int.h. */
enum MHD_Result sim__play_upstream(sim_conn *c, const sim_step *s) {
  struct sim_upplay *u = c->up;
  c->step_name = "upstream";
  if (u == NULL) {
    u = calloc(1, sizeof *u);
    if (u == NULL) return MHD_NO;
    c->up = u;
  }
  if (!u->delayed) { /* delay = S: before forwarding */
    if (s->seconds > 0 && !u->delay_armed) {
      u->delay_armed = 1;
      c->waiting = 1;
      sim__conn_wait(c, sim__srv_now(c->srv) + s->seconds * 1000.0 * c->srv->scale);
      return MHD_YES;
    }
    if (s->seconds > 0) c->delay_ms += s->seconds * 1000.0 * c->srv->scale;
    u->delayed = 1;
  }
  c->wake = 0;
  if (u->x == NULL) {
    char msg[256];
    if (start_forward(c, u, msg, sizeof msg) != SIM_OK) return answer_502(c, msg);
  }
  sim_upx_info_get(u->x, &u->info);
  if (!u->info.head && !u->info.done) {
    poll_later(c);
    return MHD_YES;
  }
  if (u->info.head) return queue_answer(c, u);
  switch (u->info.result) { /* over before any answer */
  case SIM_UPX_UNREACHABLE: {
    char msg[256];
    snprintf(msg, sizeof msg, "fusebox: the upstream %.160s is unreachable",
             c->srv->root->upstream);
    return answer_502(c, msg);
  }
  case SIM_UPX_RESET:
    sim__play_end(c, "reset", SIM_END_CUT);
    sim__play_reset(c);
    return MHD_NO;
  default: /* closed without an answer, as the upstream did */
    sim__play_end(c, "dropped", SIM_END_CUT);
    return MHD_NO;
  }
}
