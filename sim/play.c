/*
 * play.c - carries a step out on the wire: complete answers, provider-
 * shaped errors, delays and hangs on the waiter's timers, drops and resets,
 * truncated bodies, and SSE streams paced, stalled and cut as the step says.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sim/h2_bridge.h"
#include "sim/play_int.h"
#include "sim/server_int.h"

#define DEFAULT_TEXT "Hello from fusebox. This answer came from a fake provider."
#define DEFAULT_GARBAGE                                                        \
  "<html><head><title>502 Bad Gateway</title></head><body>"                    \
  "<center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>"        \
  "</body></html>\n"

/* Streams and early-close bodies are produced by a content reader. */
struct sim_player {
  sim_conn *c;
  const sim_step *s;       /* the stream step (NULL: an early-close body) */
  sim_sse sse;
  char **texts;            /* the text pieces the chunks carry (NULL when lazy) */
  int ntexts;              /* text pieces */
  int phase;               /* see reader */
  int sent;                /* text chunks sent */
  const char *frame;       /* frame being written */
  size_t frame_len, frame_off;
  double next_due;         /* monotonic ms before which no chunk is sent */
  int stall_done;
  int waiting;             /* suspended inside the reader */
  char *body;              /* early-close: the full body */
  size_t body_len, limit;  /* early-close: bytes actually sent */
  /* Lazy text frames (see play_stream): frame i of the text is head, the
     piece as JSON string text, tail; nothing of the text is copied. */
  int lazy;
  int nframes;             /* text frames, then sse.chunk[2..] (tool deltas) */
  const char *src;         /* the text pieces are cut from (no chunks) */
  size_t src_len, src_pos;
  char *head, *tail;       /* the template, cut from the probe's frame */
  size_t head_len, tail_len;
  int tf_part;             /* text frame being written: 0 none, 1 head, 2 text, 3 tail */
  size_t tf_off;
  const char *piece;       /* borrowed from the step */
  size_t piece_len;
};

enum { P_PRE, P_CHUNKS, P_TAIL, P_MARKER, P_DONE };

/* The player ends the attempt here: `how` for the trace's `how`, e for
   its `state` (sim__end_state). */
static void end_as(sim_conn *c, const char *how, sim_end_how e) {
  c->how = how;
  c->ended = e;
}

/* Releases a stream player; NULL is a no-op. */
void sim__player_free(sim_player *p) {
  if (p == NULL) return;
  sim__sse_clear(&p->sse);
  for (int i = 0; p->texts != NULL && i < p->ntexts; i++) free(p->texts[i]);
  free(p->texts);
  free(p->body);
  free(p->head);
  free(p->tail);
  free(p);
}

/* ------------------------------------------------------------- headers */

/* Sends a response header and, when record is set and a trace is written,
   notes it for the trace's `end.headers` through the one redaction rule
   (sim_redact_header): a scenario may send a credential-looking header
   (Set-Cookie, X-Debug-Token: Bearer sk-...), and the client gets it as
   sent, but no output holds it. */
static void add_header(struct MHD_Response *r, sim_conn *c, const char *name,
                       const char *value, int record) {
  MHD_add_response_header(r, name, value);
  if (!record || !sim__trace_on(c->srv->trace)) return; /* nobody would read it */
  /* the server's own names are lower case, so the quick test applies */
  int clean = sim__redact_header_clean(name, value, strlen(value));
  char *safe = clean ? NULL : sim_redact_header(name, value);
  sim__conn_note_header(c, name, clean ? value : safe ? safe : "[redacted]");
  free(safe);
}

/* The wait a Gemini error advises in RetryInfo: the step's retry_after,
   else retry_after_ms, else retry_after_date; -1 when it advises none. */
static double gemini_retry_s(const sim_step *s) {
  if (s->has_retry_after) return s->retry_after;
  if (s->has_retry_after_ms) return s->retry_after_ms / 1000.0;
  if (s->has_retry_after_date) return s->retry_after_date;
  return -1;
}

/* A wait of scenario_s scenario seconds as the wire advises it (times the
   time scale under scale_wire, sim.h); negative (none) stays as it is. */
static double wire_s(const sim_conn *c, double scenario_s) {
  double w = c->srv->wire > 0 ? c->srv->wire : 1; /* 0: a server made without it */
  return scenario_s < 0 ? scenario_s : scenario_s * w;
}

/* The headers every answer carries, plus the step's Retry-After forms and
   extra headers. The trace keeps the scenario's values (retry_after_ms),
   the wire carries them scaled under scale_wire. */
static void add_step_headers(struct MHD_Response *r, sim_conn *c, const sim_step *s) {
  add_header(r, c, sim__request_id_header(c->dialect), c->rid, 1);
  for (int i = 0; c->has_rl && i < c->rl.nheaders; i++)
    add_header(r, c, c->rl.headers[i].name, c->rl.headers[i].value, 1);
  if (c->has_rl && c->rl.retry_after > 0 && s != NULL && !s->has_retry_after &&
      s->retry_after_raw == NULL && !s->has_retry_after_date && !s->has_retry_after_ms) {
    char ra[32];
    sim__format_seconds(wire_s(c, c->rl.retry_after), ra);
    add_header(r, c, "retry-after", ra, 1);
    c->has_ra = 1;
    c->retry_after_ms = c->rl.retry_after * 1000.0;
  }
  if (s == NULL) return;
  char buf[64];
  if (c->dialect == SIM_DIALECT_GEMINI && s->kind == SIM_STEP_FAIL) {
    /* Google advises the wait in the body's RetryInfo, not in headers. */
    double ra = gemini_retry_s(s);
    if (ra >= 0) {
      c->has_ra = 1;
      c->retry_after_ms = ra * 1000.0;
    }
    for (int i = 0; i < s->nheaders; i++)
      add_header(r, c, s->headers[i].name, s->headers[i].value, 1);
    return;
  }
  if (s->has_retry_after_ms) {
    sim__format_seconds(wire_s(c, s->retry_after_ms), buf); /* ms, scaled alike */
    add_header(r, c, "retry-after-ms", buf, 1);
    c->has_ra = 1;
    c->retry_after_ms = s->retry_after_ms;
  }
  if (s->retry_after_raw != NULL) {
    add_header(r, c, "retry-after", s->retry_after_raw, 1);
  } else if (s->has_retry_after) {
    sim__format_seconds(wire_s(c, s->retry_after), buf);
    add_header(r, c, "retry-after", buf, 1);
    if (!c->has_ra) {
      c->has_ra = 1;
      c->retry_after_ms = s->retry_after * 1000.0;
    }
  } else if (s->has_retry_after_date) {
    sim__http_date(sim__env_wall_s(&c->srv->env), wire_s(c, s->retry_after_date), buf);
    add_header(r, c, "retry-after", buf, 1);
    if (!c->has_ra) {
      c->has_ra = 1;
      c->retry_after_ms = s->retry_after_date * 1000.0;
    }
  }
  for (int i = 0; i < s->nheaders; i++)
    add_header(r, c, s->headers[i].name, s->headers[i].value, 1);
}

/* Bedrock names every error in a header: x-amzn-errortype, from the
   status and the step's type (s NULL: the status alone). */
static void add_error_type(struct MHD_Response *r, sim_conn *c, int status, const sim_step *s) {
  if (!sim__dialect_binary(c->dialect) || status < 400) return;
  const char *type = s != NULL && s->kind == SIM_STEP_FAIL ? s->type : NULL;
  add_header(r, c, "x-amzn-errortype", sim__bedrock_error_type(status, type), 1);
}

/* Queues a complete response whose body (len bytes at body, malloc'd) is
   handed over: libmicrohttpd frees it, and queue_owned does when it
   cannot (the answer of nearly every request: no copy, issue 30). */
static enum MHD_Result queue_owned(sim_conn *c, int status, const char *ctype, char *body,
                                   size_t len, const sim_step *s) {
  /* an empty body is not handed over: whether libmicrohttpd frees the
     buffer of one is not said */
  struct MHD_Response *r =
      len > 0 ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
              : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  if (r == NULL || len == 0) free(body);
  if (r == NULL) return MHD_NO;
  add_header(r, c, "content-type", ctype, 0);
  add_step_headers(r, c, s);
  add_error_type(r, c, status, s);
  c->status = status;
  /* A 204 or 304 carries no body (RFC 9110 6.4.1): libmicrohttpd sends
     none, so none is traced. */
  c->bytes = status == 204 || status == 304 ? 0 : (long)len;
  c->phase = 2;
  enum MHD_Result ret = MHD_queue_response(c->mc, (unsigned)status, r);
  MHD_destroy_response(r);
  return ret;
}

/* Queues a complete response with a body the caller keeps (copied). */
static enum MHD_Result queue_body(sim_conn *c, int status, const char *ctype,
                                  const char *body, size_t len, const sim_step *s) {
  char *copy = malloc(len > 0 ? len : 1);
  if (copy == NULL) return MHD_NO;
  if (len > 0) memcpy(copy, body, len);
  return queue_owned(c, status, ctype, copy, len, s);
}

/* ------------------------------------------------------ shared bodies */

/*
 * A body rendered around markers: this connection's own small pieces (the
 * rendered text, owned) and, where each marker stood, the step's shared
 * blob (raw, or JSON-escaped), so a large answer, error message or page is
 * never copied per connection. limit < total cuts it (truncate{}).
 */
#define SHARED_MAX_SEGS 9 /* pieces: up to 4 markers in a body */
typedef struct shared_body {
  char *own;               /* the rendered body the literal pieces lie in */
  sim_blob *blob;          /* one reference */
  const char *seg[SHARED_MAX_SEGS];
  size_t seg_len[SHARED_MAX_SEGS];
  int nsegs;
  size_t total, limit;     /* bytes of the whole body; bytes sent */
  sim_conn *c;             /* early close: counts what went out */
  int early_close;         /* 1: Content-Length promises total, limit is sent */
} shared_body;

static void shared_body_free(void *cls) {
  shared_body *b = cls;
  if (b == NULL) return;
  free(b->own);
  sim__blob_unref(b->blob);
  free(b);
}

static ssize_t shared_body_read(void *cls, uint64_t pos, char *buf, size_t max) {
  shared_body *b = cls;
  if (pos >= b->limit) {
    if (!b->early_close || pos >= b->total) return MHD_CONTENT_READER_END_OF_STREAM;
    end_as(b->c, "early_close", SIM_END_CUT);
    return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  if (max > b->limit - pos) max = (size_t)(b->limit - pos);
  size_t n = 0;
  uint64_t off = pos;
  for (int i = 0; i < b->nsegs && n < max; i++) {
    if (off >= b->seg_len[i]) {
      off -= b->seg_len[i];
      continue;
    }
    size_t k = b->seg_len[i] - (size_t)off;
    if (k > max - n) k = max - n;
    memcpy(buf + n, b->seg[i] + off, k);
    n += k;
    off = 0;
  }
  if (b->early_close) b->c->bytes += (long)n;
  return n > 0 ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

/* Queues a shared body (taking it over) with the step's headers: its first
   b->limit bytes, under a Content-Length of b->total when early_close. */
static enum MHD_Result queue_shared(sim_conn *c, int status, const char *ctype,
                                    shared_body *b, const sim_step *s) {
  size_t len = b->early_close ? b->total : b->limit;
  b->c = c;
  struct MHD_Response *r = MHD_create_response_from_callback(len, 64 * 1024, shared_body_read,
                                                             b, shared_body_free);
  if (r == NULL) {
    shared_body_free(b);
    return MHD_NO;
  }
  add_header(r, c, "content-type", ctype, 0);
  add_step_headers(r, c, s);
  add_error_type(r, c, status, s);
  c->status = status;
  c->bytes = status == 204 || status == 304 || b->early_close ? 0 : (long)len;
  c->phase = 2;
  enum MHD_Result ret = MHD_queue_response(c->mc, (unsigned)status, r);
  MHD_destroy_response(r);
  return ret;
}

/* Marks where the shared text goes in a body rendered around it. */
#define SHARED_MARK "\x01" "fusebox-shared-text" "\x01"
#define SHARED_MARK_JSON "\\u0001fusebox-shared-text\\u0001"

/*
 * Splits whole (taken over; NULL = out of memory) at each marker, with the
 * blob's text (mid, borrowed from blob) in the marker's place. Returns NULL
 * (the caller renders a private copy) when anything is amiss.
 */
static shared_body *shared_split(char *whole, sim_blob *blob, const char *mid, size_t mid_len) {
  shared_body *b = whole && mid ? calloc(1, sizeof *b) : NULL;
  if (b == NULL) {
    free(whole);
    return NULL;
  }
  b->own = whole;
  const size_t ml = strlen(SHARED_MARK_JSON);
  const char *p = whole;
  for (;;) {
    const char *at = strstr(p, SHARED_MARK_JSON);
    if (b->nsegs + (at ? 2 : 1) > SHARED_MAX_SEGS) {
      shared_body_free(b);
      return NULL;
    }
    size_t lit = at ? (size_t)(at - p) : strlen(p);
    b->seg[b->nsegs] = p;
    b->seg_len[b->nsegs++] = lit;
    b->total += lit;
    if (at == NULL) break;
    b->seg[b->nsegs] = mid;
    b->seg_len[b->nsegs++] = mid_len;
    b->total += mid_len;
    p = at + ml;
  }
  b->blob = sim__blob_ref(blob);
  b->limit = b->total;
  return b;
}

static int tool_tokens(const sim_step *s);
static double gemini_retry_s(const sim_step *s);
static double wire_s(const sim_conn *c, double scenario_s);

/*
 * The body of a chat, fail or garbage step whose large text is a shared
 * blob, rendered in this API's shape exactly as a private copy would be;
 * *status its status. NULL when the step has no blob or anything is amiss
 * (the caller renders a private copy).
 */
static shared_body *shared_for(sim_conn *c, const sim_step *s, int *status) {
  sim_dialect d = c->dialect;
  size_t jlen;
  if (s->kind == SIM_STEP_GARBAGE && s->body_blob != NULL) {
    *status = s->status ? s->status : 200;
    char *none = strdup(SHARED_MARK_JSON); /* the page, whole, as it is */
    return shared_split(none, s->body_blob, sim__blob_data(s->body_blob),
                        sim__blob_len(s->body_blob));
  }
  if (s->kind == SIM_STEP_FAIL && s->message_blob != NULL) {
    *status = s->status ? s->status : 500;
    const char *json = sim__blob_json(s->message_blob, &jlen);
    char *whole = sim__error_body_retry(d, *status, s->code, s->type, SHARED_MARK,
                                        d == SIM_DIALECT_GEMINI ? wire_s(c, gemini_retry_s(s)) : -1);
    return shared_split(whole, s->message_blob, json, jlen);
  }
  if (s->kind != SIM_STEP_CHAT || s->content_blob == NULL || d == SIM_DIALECT_EMBEDDINGS)
    return NULL;
  *status = 200;
  const char *json = sim__blob_json(s->content_blob, &jlen);
  int tin = s->usage_in >= 0 ? s->usage_in : c->tokens_in_est;
  int tout = s->usage_out >= 0
                 ? s->usage_out
                 : sim__estimate_tokens(strlen(s->content)) + tool_tokens(s);
  char *whole = sim__answer_body(d, s, c->rid, s->model ? s->model : c->model, SHARED_MARK,
                                 tin, tout);
  shared_body *b = shared_split(whole, s->content_blob, json, jlen);
  c->sent.done = (unsigned char)sim__answer_done(d, s);
  if (b != NULL) {
    c->tokens_in = tin;
    c->tokens_out = tout;
    sim__conn_add_text(c, s->content); /* bounded by SIM_MAX_TEXT */
  }
  return b;
}

/* Plays a chat, fail or garbage step whose body is shared; MHD_YES/MHD_NO
   as the access handler returns, or -1 when the step has no shared body. */
static int play_shared(sim_conn *c, const sim_step *s) {
  int status;
  shared_body *b = shared_for(c, s, &status);
  if (b == NULL) return -1;
  return queue_shared(c, status, "application/json", b, s);
}

/* ---------------------------------------------------------- bodies */

static int tokens_of(const char *text) { return sim__estimate_tokens(strlen(text)); }

/* The answer text of a chat or stream step: its content or the default
   sentence as they are, its chunks joined into *joined (the caller frees
   it), or NULL when it answers only with tool calls; *err set when out of
   memory. */
static const char *answer_text(const sim_step *s, char **joined, int *err) {
  *err = 0;
  *joined = NULL;
  const char *t = s->content;
  if (t == NULL && s->kind == SIM_STEP_STREAM && s->nchunks > 0) {
    size_t len = 0;
    for (int i = 0; i < s->nchunks; i++) len += strlen(s->chunks[i]);
    char *j = malloc(len + 1);
    if (j == NULL) {
      *err = 1;
      return NULL;
    }
    j[0] = '\0';
    for (int i = 0; i < s->nchunks; i++) strcat(j, s->chunks[i]);
    return *joined = j;
  }
  if (t == NULL && s->ntool_calls > 0) return NULL;
  return t ? t : DEFAULT_TEXT;
}

static int tool_tokens(const sim_step *s) {
  int n = 0;
  for (int i = 0; i < s->ntool_calls; i++)
    n += tokens_of(s->tool_calls[i].name) +
         tokens_of(s->tool_calls[i].arguments ? s->tool_calls[i].arguments : "");
  return n;
}

/* The non-streaming body a step answers with; *status is its status. */
static char *step_body(sim_conn *c, const sim_step *s, int *status, const char **ctype) {
  *ctype = "application/json";
  sim_dialect d = c->dialect;
  if (s->kind == SIM_STEP_FAIL) {
    *status = s->status ? s->status : 500;
    return sim__error_body_retry(d, *status, s->code, s->type, s->message,
                                 d == SIM_DIALECT_GEMINI ? wire_s(c, gemini_retry_s(s)) : -1);
  }
  if (s->kind == SIM_STEP_GARBAGE) {
    *status = s->status ? s->status : 200;
    return strdup(s->body ? s->body : DEFAULT_GARBAGE);
  }
  /* chat, or a stream asked to answer as one body */
  int err;
  char *joined;
  const char *text = answer_text(s, &joined, &err);
  if (err) return NULL;
  const char *model = s->model ? s->model : c->model;
  c->tokens_in = s->usage_in >= 0 ? s->usage_in : c->tokens_in_est;
  c->tokens_out = s->usage_out >= 0 ? s->usage_out
                                    : (text ? tokens_of(text) : 0) + tool_tokens(s);
  *status = 200;
  c->sent.done = (unsigned char)sim__answer_done(d, s);
  if (text) sim__conn_add_text(c, text);
  char *b;
  if (d == SIM_DIALECT_EMBEDDINGS) {
    c->tokens_out = 0;
    b = sim__embeddings_body(model, text ? text : "", c->ninputs, c->tokens_in);
  } else {
    b = sim__answer_body(d, s, c->rid, model, text, c->tokens_in, c->tokens_out);
  }
  free(joined);
  return b;
}

/* ---------------------------------------------------------- streams */

static ssize_t emit(sim_player *p, char *buf, size_t max) {
  size_t n = p->frame_len - p->frame_off;
  if (n > max) n = max;
  memcpy(buf, p->frame + p->frame_off, n);
  p->frame_off += n;
  p->c->bytes += (long)n;
  return (ssize_t)n;
}

/* Starts frame f: blen bytes in a binary stream (Bedrock's event stream),
   else the string f. */
static void set_frame(sim_player *p, const char *f, size_t blen) {
  p->frame = f;
  p->frame_len = p->sse.binary ? blen : f ? strlen(f) : 0;
  p->frame_off = 0;
}

/* Suspends the stream until due (< 0: until hang-up); the reader returns 0. */
static ssize_t pause_until(sim_player *p, double due_ms) {
  p->waiting = 1;
  sim__conn_wait(p->c, due_ms);
  return 0;
}

/* Text piece i of a lazy stream: chunk i, or the next piece of the text. */
static void piece_at(sim_player *p, int i, const char **piece, size_t *n) {
  if (p->s->nchunks > 0) {
    *piece = p->s->chunks[i];
    *n = strlen(*piece);
    return;
  }
  if (!sim__next_piece(p->src, p->src_len, &p->src_pos, piece, n)) {
    *piece = "";
    *n = 0;
  }
}

/* Starts the frame of the next text piece, and notes its text for the
   trace (bounded by SIM_MAX_TEXT). */
static void next_text_frame(sim_player *p) {
  piece_at(p, p->sent, &p->piece, &p->piece_len);
  p->tf_part = 1;
  p->tf_off = 0;
  sim_conn *c = p->c;
  if (c->text_len < SIM_MAX_TEXT) {
    char note[SIM_MAX_TEXT + 1];
    size_t k = p->piece_len < SIM_MAX_TEXT - c->text_len ? p->piece_len
                                                          : SIM_MAX_TEXT - c->text_len;
    memcpy(note, p->piece, k);
    note[k] = '\0';
    sim__conn_add_text(c, note);
  }
}

/* Writes what fits of the text frame under way: head, the piece as JSON
   string text, tail. Returns the bytes written; 0 when the frame is out. */
static ssize_t emit_text(sim_player *p, char *buf, size_t max) {
  size_t n = 0;
  while (n < max && p->tf_part != 0) {
    if (p->tf_part == 2) {
      size_t w = sim__json_escape_some(p->piece, p->piece_len, &p->tf_off, buf + n, max - n);
      n += w;
      if (p->tf_off < p->piece_len) {
        if (w == 0 && n == 0) { /* max < 6: one escape cannot fit; never happens */
          p->tf_part = 0;
          end_as(p->c, "dropped", SIM_END_CUT);
          return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        break;
      }
      p->tf_part = 3;
      p->tf_off = 0;
      continue;
    }
    const char *part = p->tf_part == 1 ? p->head : p->tail;
    size_t len = p->tf_part == 1 ? p->head_len : p->tail_len;
    size_t k = len - p->tf_off;
    if (k > max - n) k = max - n;
    memcpy(buf + n, part + p->tf_off, k);
    n += k;
    p->tf_off += k;
    if (p->tf_off == len) {
      p->tf_part = p->tf_part == 1 ? 2 : 0;
      p->tf_off = 0;
    }
  }
  p->c->bytes += (long)n;
  return (ssize_t)n;
}

/* The content reader of an SSE stream: frames in order, paced, stalled,
   dropped or broken by an error event as the step says. */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  sim_player *p = cls;
  sim_conn *c = p->c;
  const sim_step *s = p->s;
  for (;;) {
    if (p->frame_off < p->frame_len) return emit(p, buf, max);
    if (p->tf_part != 0) {
      ssize_t n = emit_text(p, buf, max);
      if (n != 0) return n;
      continue; /* the text frame is out */
    }
    if (p->waiting) {
      p->waiting = 0;
      if (c->wake == SIM_WAKE_HANGUP) {
        end_as(c, "client_abort", SIM_END_PEER_LEFT);
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      if (c->wake == SIM_WAKE_SHUTDOWN) {
        end_as(c, "shutdown", SIM_END_SHUTDOWN);
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      c->sent.stalling = 0; /* resumed: a stall is over */
    }
    switch (p->phase) {
    case P_PRE:
      set_frame(p, p->sse.pre, p->sse.pre_len);
      p->phase = P_CHUNKS;
      break;
    case P_CHUNKS:
      if (s->error_after >= 0 && p->sent == s->error_after) {
        set_frame(p, p->sse.error, p->sse.error_len);
        p->phase = P_DONE;
        c->how = "complete";
        c->sent.error_event = 1;
        break;
      }
      if (s->drop_after >= 0 && p->sent == s->drop_after) {
        end_as(c, "dropped", SIM_END_CUT);
        return MHD_CONTENT_READER_END_WITH_ERROR;
      }
      if (s->stall_after >= 0 && p->sent == s->stall_after && !p->stall_done) {
        p->stall_done = 1;
        c->stalled = 1;
        c->sent.stalling = 1;
        return pause_until(p, s->stall < 0 ? -1 : sim__srv_now(c->srv) + s->stall * 1000.0 * c->srv->scale);
      }
      if (p->sent == p->nframes) {
        /* no_end: the stream stops before its finish chunk, as a proxy
           cutting it at a chunk boundary would leave it. */
        p->phase = s->no_end ? P_DONE : P_TAIL;
        if (s->no_end) {
          c->no_end_marker = 1;
          c->no_finish = 1;
        }
        break;
      }
      if (p->sent > 0 && sim__srv_now(c->srv) < p->next_due) return pause_until(p, p->next_due);
      if (!p->lazy) {
        set_frame(p, p->sse.chunk[p->sent], p->sse.binary ? p->sse.lens[p->sent] : 0);
        if (p->sent < p->ntexts) sim__conn_add_text(c, p->texts[p->sent]);
      } else if (p->sent < p->ntexts) {
        next_text_frame(p);
      } else {
        set_frame(p, p->sse.chunk[2 + p->sent - p->ntexts], 0); /* lazy: never binary */
      }
      p->sent++;
      c->chunks = p->sent;
      p->next_due = sim__srv_now(c->srv) + s->interval * 1000.0 * c->srv->scale;
      break;
    case P_TAIL:
      set_frame(p, p->sse.tail, p->sse.tail_len);
      p->phase = s->no_terminator ? P_DONE : P_MARKER;
      c->no_end_marker = s->no_terminator;
      break;
    case P_MARKER:
      set_frame(p, p->sse.marker, p->sse.marker_len);
      p->phase = P_DONE;
      c->sent.end_marker = 1;
      break;
    default:
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
  }
}

/* Two texts of different lengths whose JSON forms mark where a piece goes
   in a frame. */
#define MARK0 "\x01" "fbx" "\x01"
#define MARK0_JSON "\\u0001fbx\\u0001"
#define MARK1 "\x01" "fbx-text-mark" "\x01"
#define MARK1_JSON "\\u0001fbx-text-mark\\u0001"

/* 1 when f holds mark exactly once; *at is where. */
static int marked_once(const char *f, const char *mark, const char **at) {
  *at = f ? strstr(f, mark) : NULL;
  return *at != NULL && strstr(*at + 1, mark) == NULL;
}

static int holds_mark(const char *f) { return f != NULL && strstr(f, "\\u0001fbx") != NULL; }

/*
 * Makes p lazy when this API's text frames are a template: the probe (the
 * frames built for two marker pieces) has frames that differ only where the
 * piece goes, and no other frame holds a piece (an API that repeats the
 * whole text at the end, or numbers its events, is played from a full
 * build). Takes the probe's frames over into p->sse. Returns 1 when lazy.
 */
static int take_template(sim_player *p, sim_sse *probe) {
  const char *a0, *a1;
  if (probe->ntexts != 2 || probe->nchunks < 2 || !marked_once(probe->chunk[0], MARK0_JSON, &a0) ||
      !marked_once(probe->chunk[1], MARK1_JSON, &a1))
    return 0;
  size_t h0 = (size_t)(a0 - probe->chunk[0]), h1 = (size_t)(a1 - probe->chunk[1]);
  const char *t0 = a0 + strlen(MARK0_JSON), *t1 = a1 + strlen(MARK1_JSON);
  if (h0 != h1 || memcmp(probe->chunk[0], probe->chunk[1], h0) != 0 || strcmp(t0, t1) != 0)
    return 0;
  if (holds_mark(probe->pre) || holds_mark(probe->tail) || holds_mark(probe->marker) ||
      holds_mark(probe->error) || holds_mark(t0))
    return 0;
  for (int i = 2; i < probe->nchunks; i++)
    if (holds_mark(probe->chunk[i])) return 0;
  p->head = strndup(probe->chunk[0], h0);
  p->tail = strdup(t0);
  if (p->head == NULL || p->tail == NULL) return 0;
  p->head_len = h0;
  p->tail_len = strlen(p->tail);
  p->sse = *probe;
  p->lazy = 1;
  return 1;
}

/*
 * Counts the text pieces of stream step s (its chunks, or its text cut in
 * words) in place, and the tokens both ways the server bills them: *tok as
 * the answer's estimate (tool calls counted apart), *tok_sse as the stream
 * builder estimates them (sim__sse_build).
 */
static int count_pieces(const sim_step *s, const char *text, long *tok, long *tok_sse) {
  int n = 0;
  *tok = *tok_sse = 0;
  if (s->nchunks > 0) {
    for (; n < s->nchunks; n++) *tok += tokens_of(s->chunks[n]);
  } else {
    size_t pos = 0, len = strlen(text), k;
    const char *piece;
    while (sim__next_piece(text, len, &pos, &piece, &k)) {
      *tok += sim__estimate_tokens(k);
      n++;
    }
  }
  *tok_sse = *tok;
  for (int i = 0; i < s->ntool_calls; i++)
    *tok_sse += sim__estimate_tokens(
        strlen(s->tool_calls[i].arguments ? s->tool_calls[i].arguments : "") +
        strlen(s->tool_calls[i].name));
  *tok += tool_tokens(s);
  return n;
}

/*
 * Sets p up to make each text frame when it is due from a template (see
 * take_template), reading the pieces in place from the step, which outlives
 * the player: a connection then holds a few small frames, not a copy of the
 * text and every frame of it. Returns 1 when p is lazy, 0 when the stream
 * must be built whole (no text, or an API whose frames are no template).
 */
static int stream_lazy(sim_conn *c, sim_player *p, const sim_step *s) {
  if (sim__dialect_binary(c->dialect)) return 0; /* binary frames: no template */
  if (s->nchunks == 0 && s->content == NULL && s->ntool_calls > 0) return 0;
  const char *text = s->content ? s->content : DEFAULT_TEXT;
  long tok, tok_sse;
  int n = count_pieces(s, text, &tok, &tok_sse);
  if (n == 0) return 0;
  sim_step probe_step = *s; /* shallow: the probe bills what the real text would */
  probe_step.usage_out = s->usage_out >= 0 ? s->usage_out
                                           : (int)(tok_sse > 1000000000 ? 1000000000 : tok_sse);
  char *marks[2] = {MARK0, MARK1};
  sim_sse probe;
  if (sim__sse_build(c->dialect, &probe_step, c->rid, s->model ? s->model : c->model,
                     c->tokens_in, marks, 2, &probe) != SIM_OK)
    return 0;
  if (!take_template(p, &probe)) {
    sim__sse_clear(&probe);
    free(p->head);
    free(p->tail);
    p->head = p->tail = NULL;
    return 0;
  }
  p->ntexts = n;
  p->nframes = n + p->sse.nchunks - 2;
  p->src = text;
  p->src_len = s->nchunks > 0 ? 0 : strlen(text);
  c->tokens_out = s->usage_out >= 0 ? s->usage_out : (int)(tok > 1000000000 ? 1000000000 : tok);
  return 1;
}

/* Builds every piece and frame of the stream up front (small streams, and
   APIs whose frames are no template). */
static int stream_whole(sim_conn *c, sim_player *p, const sim_step *s) {
  int rc;
  if (s->nchunks > 0) {
    p->texts = calloc((size_t)s->nchunks, sizeof(char *));
    rc = p->texts ? SIM_OK : SIM_ENOMEM;
    for (int i = 0; rc == SIM_OK && i < s->nchunks; i++) {
      p->texts[i] = strdup(s->chunks[i]);
      if (p->texts[i] == NULL) rc = SIM_ENOMEM;
      p->ntexts = i + 1;
    }
  } else if (s->content == NULL && s->ntool_calls > 0) {
    p->texts = calloc(1, sizeof(char *)); /* tool calls only: no text */
    rc = p->texts ? SIM_OK : SIM_ENOMEM;
  } else {
    rc = sim__split_words(s->content ? s->content : DEFAULT_TEXT, &p->texts, &p->ntexts);
  }
  if (rc == SIM_OK)
    rc = sim__sse_build(c->dialect, s, c->rid, s->model ? s->model : c->model, c->tokens_in,
                        p->texts, p->ntexts, &p->sse);
  if (rc != SIM_OK) return rc;
  p->nframes = p->sse.nchunks;
  /* Billed: what the provider generated, whether or not it all went out. */
  int out = tool_tokens(s);
  for (int i = 0; i < p->ntexts; i++) out += tokens_of(p->texts[i]);
  c->tokens_out = s->usage_out >= 0 ? s->usage_out : out;
  return SIM_OK;
}

static enum MHD_Result play_stream(sim_conn *c, const sim_step *s) {
  sim_player *p = calloc(1, sizeof *p);
  if (p == NULL) return MHD_NO;
  p->c = c;
  p->s = s;
  c->tokens_in = s->usage_in >= 0 ? s->usage_in : c->tokens_in_est;
  if (!stream_lazy(c, p, s) && stream_whole(c, p, s) != SIM_OK) {
    sim__player_free(p);
    return MHD_NO;
  }
  c->player = p;
  c->player_ntexts = p->ntexts;
  c->sent.stream = 1;
  c->sent.done = (unsigned char)p->sse.done; /* the dialect's word on its marker */
  struct MHD_Response *r =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_reader, p, NULL);
  if (r == NULL) return MHD_NO;
  add_header(r, c, "content-type", sim__dialect_stream_ctype(c->dialect), 0);
  add_header(r, c, "cache-control", "no-cache", 0);
  add_step_headers(r, c, s);
  c->status = 200;
  c->phase = 2;
  enum MHD_Result ret = MHD_queue_response(c->mc, 200, r);
  MHD_destroy_response(r);
  return ret;
}

/* ------------------------------------------------------- truncation */

static ssize_t early_close_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  sim_player *p = cls;
  if (pos >= p->limit) {
    end_as(p->c, "early_close", SIM_END_CUT);
    return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  size_t n = p->limit - (size_t)pos;
  if (n > max) n = max;
  memcpy(buf, p->body + pos, n);
  p->c->bytes += (long)n;
  return (ssize_t)n;
}

static enum MHD_Result play_truncate(sim_conn *c, const sim_step *s) {
  const sim_step *inner = s->next;
  sim_step *def = NULL;
  if (inner == NULL) inner = def = sim__step_new(SIM_STEP_CHAT);
  if (inner == NULL) return MHD_NO;
  int status;
  const char *ctype;
  size_t at = s->at < 0 ? 0 : (size_t)s->at;
  c->sent.kind = inner->kind;
  shared_body *shared = shared_for(c, inner, &status);
  if (shared != NULL) { /* a large body: cut the shared copy, not a private one */
    if (at < shared->limit) {
      shared->limit = at;
      c->sent.short_body = 1;
      if (c->text) c->text[0] = '\0', c->text_len = 0;
    }
    shared->early_close = s->early_close && at < shared->total;
    sim__step_free(def);
    return queue_shared(c, status, "application/json", shared, s);
  }
  char *body = step_body(c, inner, &status, &ctype);
  if (body == NULL) {
    sim__step_free(def);
    return MHD_NO;
  }
  size_t len = strlen(body);
  if (at > len) at = len;
  c->sent.short_body = at < len;
  /* The trace shows what was actually sent. */
  if (c->text && at < len) c->text[0] = '\0', c->text_len = 0;
  enum MHD_Result ret;
  if (!s->early_close) {
    ret = queue_owned(c, status, ctype, body, at, s);
  } else {
    sim_player *p = calloc(1, sizeof *p);
    if (p == NULL) {
      free(body);
      sim__step_free(def);
      return MHD_NO;
    }
    p->c = c;
    p->body = body;
    p->body_len = len;
    p->limit = at;
    c->player = p;
    struct MHD_Response *r =
        MHD_create_response_from_callback(len, 4096, early_close_reader, p, NULL);
    if (r == NULL) {
      sim__step_free(def);
      return MHD_NO;
    }
    add_header(r, c, "content-type", ctype, 0);
    add_step_headers(r, c, s);
    c->status = status;
    c->phase = 2;
    ret = MHD_queue_response(c->mc, (unsigned)status, r);
    MHD_destroy_response(r);
  }
  sim__step_free(def);
  return ret;
}

/* ---------------------------------------------------------- effects */

static void trace_effect(sim_conn *c, const char *action, const char *key, int count,
                         const char *fp, int found) {
  if (!sim__trace_on(c->srv->trace)) return;
  cJSON *ev = sim__trace_event("effect", sim__srv_t(c->srv));
  if (ev == NULL) return;
  cJSON_AddNumberToObject(ev, "id", (double)c->id);
  if (c->effect_name[0]) cJSON_AddStringToObject(ev, "name", c->effect_name);
  /* The key as the arrival's logical key shows it (sim_request_key): a
     key-shaped or very long Idempotency-Key is never written as sent. */
  char shown[sizeof c->key];
  if (key && sim_request_key(key, "", "", NULL, 0, shown, sizeof shown) == 0)
    cJSON_AddStringToObject(ev, "key", shown + strlen("idem:"));
  else if (key) cJSON_AddStringToObject(ev, "key", "[redacted]");
  else cJSON_AddNullToObject(ev, "key");
  cJSON_AddStringToObject(ev, "action", action);
  if (fp) cJSON_AddStringToObject(ev, "fingerprint", fp);
  if (count > 0) cJSON_AddNumberToObject(ev, "count", count);
  if (found >= 0) cJSON_AddBoolToObject(ev, "found", found);
  sim__trace_emit(c->srv->trace, ev);
}

static enum MHD_Result effect_answer(sim_conn *c, int status, const char *key, int applied,
                                     const char *result, int replayed) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return MHD_NO;
  if (key) cJSON_AddStringToObject(o, "key", key);
  else cJSON_AddNullToObject(o, "key");
  cJSON_AddBoolToObject(o, "applied", applied);
  cJSON *r = result ? cJSON_Parse(result) : NULL;
  if (r) cJSON_AddItemToObject(o, "result", r);
  if (replayed) cJSON_AddBoolToObject(o, "replayed", 1);
  if (status == 409)
    cJSON_AddStringToObject(o, "error", "Idempotency-Key reused with a different payload");
  char *body = cJSON_PrintUnformatted(o);
  cJSON_Delete(o);
  if (body == NULL) return MHD_NO;
  enum MHD_Result ret = queue_owned(c, status, "application/json", body, strlen(body), NULL);
  return ret;
}

/* GET /v1/effects/{key}: was it applied? */
static enum MHD_Result play_lookup(sim_conn *c) {
  c->step_name = "lookup";
  if (!sim__scenario_ledger_up(c->srv->sc)) {
    trace_effect(c, "ledger_down", c->lookup_key, 0, NULL, -1);
    char *body = sim__error_body(SIM_DIALECT_OPENAI, 503, "ledger_unavailable", NULL,
                                 "The effect ledger is unavailable.");
    if (body == NULL) return MHD_NO;
    enum MHD_Result r = queue_owned(c, 503, "application/json", body, strlen(body), NULL);
    return r;
  }
  char *result = NULL, err[SIM_ERRLEN] = "";
  int applied = c->srv->state->ops->ledger_lookup(c->srv->state, c->lookup_key, &result, err);
  if (applied < 0) return sim__state_fail(c, err);
  trace_effect(c, "lookup", c->lookup_key, 0, NULL, applied);
  enum MHD_Result r = effect_answer(c, applied ? 200 : 404, c->lookup_key, applied, result, 0);
  free(result);
  return r;
}

/* POST /v1/effects/{name}: execute (or replay), then answer as `next` says. */
static enum MHD_Result play_effect(sim_conn *c, const sim_step *s) {
  char fp[17];
  sim__fingerprint(c->body ? c->body : "", c->body_len, fp);
  int count = 0;
  char *result = NULL, err[SIM_ERRLEN] = "";
  int action = c->srv->state->ops->ledger_post(c->srv->state, c->idem_key, c->effect_name, fp,
                                               s->apply, &count, &result, err);
  if (action == SIM_ESTATE) return sim__state_fail(c, err);
  if (action < 0) /* out of memory: nothing applied; say so, as a server error */
    return effect_answer(c, 500, c->idem_key, 0, NULL, 0);
  static const char *names[] = {"", "applied", "replayed", "conflict", "not_applied"};
  trace_effect(c, names[action], c->idem_key, action == SIM_LEDGER_APPLIED ? count : 0, fp, -1);
  enum MHD_Result r;
  if (action == SIM_LEDGER_CONFLICT) {
    r = effect_answer(c, 409, c->idem_key, 0, NULL, 0);
  } else if (s->next != NULL) {
    c->cur = s->next; /* commit, then answer badly: drop, hang, fail ... */
    r = sim__play(c);
  } else {
    r = effect_answer(c, 200, c->idem_key, action != SIM_LEDGER_NOT_APPLIED, result,
                      action == SIM_LEDGER_REPLAYED);
  }
  free(result);
  return r;
}

/* --------------------------------------------------------------- play */

static void reset_socket(sim_conn *c) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci == NULL) return;
  sim_tcp_reset(ci->connect_fd);
}

/* A stream step at an API that never streams (embeddings, models): each
   fault becomes its one-body equivalent: drop_after a dropped connection,
   error_after the error as the response, stall_after a wait (forever: a
   hang), else the whole answer. */
static enum MHD_Result play_unstreamable(sim_conn *c, const sim_step *s) {
  if (s->drop_after >= 0) {
    end_as(c, "dropped", SIM_END_CUT);
    return MHD_NO;
  }
  int status;
  const char *ctype;
  if (s->error_after >= 0) {
    status = s->status ? s->status : 500;
    char *body = sim__error_body(c->dialect, status, s->code, s->type, s->message);
    if (body == NULL) return MHD_NO;
    enum MHD_Result r = queue_owned(c, status, "application/json", body, strlen(body), NULL);
    return r;
  }
  if (s->stall_after >= 0 && c->wake != SIM_WAKE_TIMER) {
    c->stalled = 1;
    c->waiting = 1;
    sim__conn_wait(c, s->stall < 0 ? -1 : sim_now_ms() + s->stall * 1000.0 * c->srv->scale);
    return MHD_YES;
  }
  c->wake = 0;
  char *body = step_body(c, s, &status, &ctype);
  if (body == NULL) return MHD_NO;
  enum MHD_Result r = queue_owned(c, status, ctype, body, strlen(body), s);
  return r;
}

/* ------------------------------------------------- a window shut */

/* The content reader of h2_window{}: the first `limit` bytes, then a
   stall (the trace's stalled state while it lasts), then the rest. Over
   HTTP/2 the bridge sends the HEADERS and the bytes it has, and its data
   provider defers (NGHTTP2_ERR_DEFERRED) while no more come, so the
   session still answers PING and SETTINGS but no DATA flows. */
static ssize_t window_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  sim_player *p = cls;
  sim_conn *c = p->c;
  if (p->waiting) {
    p->waiting = 0;
    if (c->wake == SIM_WAKE_HANGUP || c->wake == SIM_WAKE_SHUTDOWN) {
      int left = c->wake == SIM_WAKE_HANGUP;
      end_as(c, left ? "client_abort" : "shutdown", left ? SIM_END_PEER_LEFT : SIM_END_SHUTDOWN);
      if (c->text) c->text[0] = '\0', c->text_len = 0; /* the trace shows what was sent */
      return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    c->sent.stalling = 0; /* the window opened */
  }
  if (pos >= p->body_len) return MHD_CONTENT_READER_END_OF_STREAM;
  if (pos >= p->limit && !p->stall_done) {
    p->stall_done = 1;
    c->stalled = 1;
    c->sent.stalling = 1;
    const sim_step *s = p->s;
    return pause_until(p, s->stall < 0 ? -1 : sim__srv_now(c->srv) + s->stall * 1000.0 * c->srv->scale);
  }
  size_t end = p->stall_done ? p->body_len : p->limit;
  size_t n = end - (size_t)pos;
  if (n > max) n = max;
  memcpy(buf, p->body + pos, n);
  p->c->bytes += (long)n;
  return (ssize_t)n;
}

/* h2_window{}: the inner step's head and `after` bytes of its body, then
   nothing until the stall is over (or the client leaves); the same on
   HTTP/1.1, where it is a body stalled after its head. */
static enum MHD_Result play_h2_window(sim_conn *c, const sim_step *s) {
  const sim_step *inner = s->next;
  sim_step *def = NULL;
  if (inner == NULL) inner = def = sim__step_new(SIM_STEP_CHAT);
  if (inner == NULL) return MHD_NO;
  int status;
  const char *ctype;
  c->sent.kind = inner->kind;
  char *body = step_body(c, inner, &status, &ctype);
  sim_player *p = body ? calloc(1, sizeof *p) : NULL;
  struct MHD_Response *r = NULL;
  if (p != NULL) {
    p->c = c;
    p->s = s;
    p->body = body;
    p->body_len = strlen(body);
    p->limit = s->at < 0 ? 0 : (size_t)s->at;
    c->player = p; /* frees the body with it */
    r = MHD_create_response_from_callback(p->body_len, 4096, window_reader, p, NULL);
  } else {
    free(body);
  }
  sim__step_free(def);
  if (r == NULL) return MHD_NO;
  add_header(r, c, "content-type", ctype, 0);
  add_step_headers(r, c, s);
  add_error_type(r, c, status, inner);
  c->status = status;
  c->phase = 2;
  enum MHD_Result ret = MHD_queue_response(c->mc, (unsigned)status, r);
  MHD_destroy_response(r);
  return ret;
}

/* Plays c->cur; returns what the access handler returns. */
/* h2_reset{}, h2_goaway{}: over HTTP/2 the bridge is told on the socket
   pair (a line no HTTP/1.1 response starts with) and plays the frame; over
   HTTP/1.1 the nearest fault: a reset is a TCP reset, a GOAWAY a close. */
static enum MHD_Result play_h2(sim_conn *c, const sim_step *s) {
  if (s->h2_fault == SIM_H2_WINDOW) {
    c->step_name = "h2_window";
    return play_h2_window(c, s);
  }
  c->step_name = s->h2_fault == SIM_H2_RST ? "h2_reset" : "h2_goaway";
  if (!sim__conn_is_h2(c->mc)) {
    if (s->h2_fault == SIM_H2_RST) {
      end_as(c, "reset", SIM_END_CUT);
      reset_socket(c);
    } else {
      end_as(c, "dropped", SIM_END_CUT);
    }
    return MHD_NO;
  }
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  char line[32];
  int n = sim__h2_fault_line(line, sizeof line, s->h2_fault, s->h2_code);
  if (ci != NULL && n > 0 && send(ci->connect_fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
    /* the bridge is gone: the client went first */
  }
  end_as(c, s->h2_fault == SIM_H2_RST ? "h2_reset" : "h2_goaway", SIM_END_CUT);
  return MHD_NO;
}

enum MHD_Result sim__play(sim_conn *c) {
  for (;;) {
    if (c->wake == SIM_WAKE_HANGUP) {
      end_as(c, "client_abort", SIM_END_PEER_LEFT);
      return MHD_NO;
    }
    if (c->wake == SIM_WAKE_SHUTDOWN) {
      end_as(c, "shutdown", SIM_END_SHUTDOWN);
      return MHD_NO;
    }
    const sim_step *s = c->cur;
    c->sent.kind = s->kind; /* the answer's step, once the wrappers unwrap */
    if (c->lookup_key != NULL) return play_lookup(c);
    if (s->kind != SIM_STEP_DELAY && s->kind != SIM_STEP_EFFECT)
      c->step_name = sim__step_kind_name(s->kind);
    switch (s->kind) {
    case SIM_STEP_DELAY:
      if (c->wake == SIM_WAKE_TIMER) { /* the delay is over */
        c->wake = 0;
        c->delay_ms += s->seconds * 1000.0 * c->srv->scale;
        if (s->next == NULL) {
          c->step_name = "delay";
          return queue_body(c, 200, "application/json", "{}", 2, NULL);
        }
        c->cur = s->next;
        continue;
      }
      c->step_name = "delay";
      /* A real provider bills a slow answer even when the client gives up. */
      if (s->next && (s->next->kind == SIM_STEP_CHAT || s->next->kind == SIM_STEP_STREAM)) {
        const sim_step *n = s->next;
        c->tokens_in = n->usage_in >= 0 ? n->usage_in : c->tokens_in_est;
        c->tokens_out = n->usage_out >= 0 ? n->usage_out
                                          : tokens_of(n->content ? n->content : DEFAULT_TEXT);
      }
      c->waiting = 1;
      sim__conn_wait(c, sim__srv_now(c->srv) + s->seconds * 1000.0 * c->srv->scale);
      return MHD_YES;
    case SIM_STEP_HANG:
      c->waiting = 1;
      sim__conn_wait(c, -1);
      return MHD_YES;
    case SIM_STEP_DROP:
      end_as(c, "dropped", SIM_END_CUT);
      return MHD_NO;
    case SIM_STEP_RESET:
      end_as(c, "reset", SIM_END_CUT);
      reset_socket(c);
      return MHD_NO;
    case SIM_STEP_H2:
      return play_h2(c, s);
    case SIM_STEP_UPSTREAM:
      return sim__play_upstream(c, s);
    case SIM_STEP_EFFECT:
      c->step_name = "effect";
      return play_effect(c, s);
    case SIM_STEP_TRUNCATE:
      return play_truncate(c, s);
    case SIM_STEP_STREAM:
      if (!sim__dialect_streams(c->dialect)) return play_unstreamable(c, s);
      return play_stream(c, s);
    case SIM_STEP_CHAT:
      /* asked to stream: stream cleanly */
      if (c->stream_req && sim__dialect_streams(c->dialect)) return play_stream(c, s);
      /* fall through */
    case SIM_STEP_FAIL:
    case SIM_STEP_GARBAGE: {
      int shared = play_shared(c, s);
      if (shared >= 0) return (enum MHD_Result)shared;
      int status;
      const char *ctype;
      char *body = step_body(c, s, &status, &ctype);
      if (body == NULL) return MHD_NO;
      enum MHD_Result r = queue_owned(c, status, ctype, body, strlen(body), s);
      return r;
    }
    }
    return MHD_NO;
  }
}

/* For the upstream player (play_upstream.c): the header, body and end
   rules of this file; see play_int.h. */
void sim__play_header(struct MHD_Response *r, sim_conn *c, const char *name, const char *value) {
  add_header(r, c, name, value, 1);
}
enum MHD_Result sim__play_body(sim_conn *c, int status, const char *body, size_t len) {
  return queue_body(c, status, "application/json", body, len, NULL);
}
void sim__play_end(sim_conn *c, const char *how, sim_end_how e) { end_as(c, how, e); }
void sim__play_reset(sim_conn *c) { reset_socket(c); }

/* The shared state is out of reach; see server_int.h. */
enum MHD_Result sim__state_fail(sim_conn *c, const char *why) {
  cJSON *ev = sim__trace_event("error", sim__srv_t(c->srv));
  if (ev != NULL) {
    cJSON_AddNumberToObject(ev, "id", (double)c->id);
    cJSON_AddStringToObject(ev, "kind", "state");
    cJSON_AddStringToObject(ev, "message", why);
    sim__trace_emit(c->srv->trace, ev);
  }
  free(c->lookup_key); /* answered with the error, not a lookup */
  c->lookup_key = NULL;
  sim__step_free(c->root);
  c->root = sim__state_error_step(why);
  c->cur = c->root;
  enum MHD_Result r = c->root ? sim__play(c) : MHD_NO;
  c->how = "error";
  return r;
}
