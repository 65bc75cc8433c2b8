/*
 * sim_int.h - internals shared by the files of the sim/ module.
 *
 * The split: Lua decides, C acts. sim/lua_*.c (the only files that include
 * lua.h) load a scenario and turn what its provider returns into a sim_step;
 * the server files carry the step out on the wire, on timers.
 */
#ifndef FUSEBOX_SIM_INT_H
#define FUSEBOX_SIM_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"

/* ---------------------------------------------------------------- steps */

typedef enum sim_step_kind {
  SIM_STEP_CHAT = 0, /* a well-formed completion */
  SIM_STEP_STREAM,   /* an SSE stream, possibly faulty */
  SIM_STEP_FAIL,     /* a provider-shaped error response */
  SIM_STEP_HANG,     /* never answer */
  SIM_STEP_DELAY,    /* wait `seconds`, then play `next` */
  SIM_STEP_DROP,     /* close the connection without a response */
  SIM_STEP_RESET,    /* TCP RST */
  SIM_STEP_TRUNCATE, /* play `next` with its body cut at `at` bytes */
  SIM_STEP_GARBAGE,  /* 200 whose body is not JSON */
  SIM_STEP_EFFECT,   /* a side effect at the effect endpoint */
  SIM_STEP_H2,       /* an HTTP/2 fault: RST_STREAM or GOAWAY (h2_fault) */
  SIM_STEP_UPSTREAM  /* forward to the real provider (serve --upstream), faults on its answer */
} sim_step_kind;

/* h2_reset{}, h2_goaway{} and h2_window{}: what an HTTP/2 attempt gets
   (sim/front.c, sim/h2_bridge.c); on HTTP/1.1 the nearest fault: a TCP
   reset, a drop, a body stalled after its head (what h2_window is on
   both: the bridge's data provider defers while no bytes come). */
enum { SIM_H2_RST = 1, SIM_H2_GOAWAY = 2, SIM_H2_WINDOW = 3 };

/* blob.c: one immutable, reference-counted copy of a large step body,
   shared by the steps and connections that play it. Thread-safe. */
typedef struct sim_blob sim_blob;
/* Step bodies at least this long are shared as blobs; shorter ones are
   copied per step. */
#define SIM_BLOB_MIN ((size_t)64 << 10)
sim_blob *sim__blob_new(const char *p, size_t len);
sim_blob *sim__blob_ref(sim_blob *b);
void sim__blob_unref(sim_blob *b);
const char *sim__blob_data(const sim_blob *b);
size_t sim__blob_len(const sim_blob *b);
const char *sim__blob_json(sim_blob *b, size_t *len);

/* sse_text.c: a stream's text pieces cut in place, and JSON string text
   written a little at a time, so a long answer is never copied per
   connection. */
/*
 * The next word-sized piece of the len bytes at text from *pos ("Hello",
 * " world": leading blanks join the word), the one rule of
 * sim__split_words. Sets *piece and *n (borrowed from text), advances *pos;
 * returns 0 at the end.
 */
int sim__next_piece(const char *text, size_t len, size_t *pos, const char **piece,
                    size_t *n);
/*
 * Writes the n bytes at src, from *off, as the inside of a JSON string
 * exactly as cJSON writes it, into dst (at most max bytes, never splitting
 * an escape); advances *off and returns the bytes written. max >= 6 always
 * makes progress.
 */
size_t sim__json_escape_some(const char *src, size_t n, size_t *off, char *dst, size_t max);

typedef struct sim_header {
  char *name;
  char *value;
} sim_header;

/* One tool call a chat or stream step answers with. */
typedef struct sim_tool_call {
  char *id;          /* call id sent to the client, e.g. "call_1" */
  char *name;        /* the function's name */
  char *arguments;   /* argument JSON text as sent (may be invalid on purpose) */
} sim_tool_call;

/* How an answer ends: complete, or cut short by the provider. */
enum { SIM_FINISH_STOP = 0, SIM_FINISH_LENGTH, SIM_FINISH_FILTER };

/*
 * One decision of the provider for one attempt. Every pointer is owned by
 * the step and released by sim__step_free(). Fields that do not apply to
 * the step's kind keep their defaults (see sim__step_new).
 */
typedef struct sim_step {
  sim_step_kind kind;

  /* chat, stream */
  char *content;      /* answer text; NULL = a default sentence; points
                         into content_blob when that is set */
  sim_blob *content_blob; /* the shared copy of a large content; owned ref */
  int content_inline;  /* 1: content lives in the step's own block, after it
                         (sim__step_free leaves it to the step's free) */
  char *model;        /* NULL = echo the request's model */
  int usage_in;       /* prompt tokens billed; -1 = estimate from request */
  int usage_out;      /* completion tokens billed; -1 = estimate from text */
  sim_tool_call *tool_calls; /* chat, stream: tool calls after the text */
  int ntool_calls;
  int finish;         /* SIM_FINISH_*: `incomplete` (max tokens, filter) */

  /* h2_reset, h2_goaway, h2_window (its after: `at`, its hold: `stall`, its body: `next`) */
  int h2_fault;       /* SIM_H2_RST, SIM_H2_GOAWAY, SIM_H2_WINDOW */
  unsigned h2_code;   /* the HTTP/2 error code (RFC 9113 7) */

  /* stream */
  char **chunks;      /* text pieces, one per delta event; NULL = split content;
                         point into chunks_blob when that is set */
  int nchunks;
  sim_blob *chunks_blob; /* the shared copy of a large chunk list (each
                            chunk NUL-terminated, in order); owned ref */
  double interval;    /* seconds between chunks (scaled by the time scale) */
  int drop_after;     /* close the connection after N chunks; -1 = never */
  int stall_after;    /* stop sending after N chunks; -1 = never */
  double stall;       /* how long a stall lasts in seconds; < 0 = forever */
  int error_after;    /* send an in-stream error event after N chunks; -1 = never */
  int no_end;         /* 1: end cleanly after the chunks: no finish chunk, no end marker */
  int no_terminator;  /* 1: send the finish chunk but no end marker ([DONE] / message_stop) */

  /* fail; status/code/type/message also describe a stream's error event */
  int status;         /* HTTP status; 0 = the kind's default */
  char *code;         /* provider error code, e.g. "rate_limit_exceeded" */
  char *type;         /* provider error type, e.g. "rate_limit_error" */
  char *message;             /* points into message_blob when that is set */
  sim_blob *message_blob;    /* the shared copy of a large message; owned ref */
  int has_retry_after;       /* 1: send Retry-After */
  double retry_after;        /* delta-seconds (may be decimal) */
  char *retry_after_raw;     /* send this exact Retry-After text instead */
  int has_retry_after_ms;
  double retry_after_ms;     /* retry-after-ms header value */
  int has_retry_after_date;
  double retry_after_date;   /* Retry-After as an HTTP-date this many s ahead */

  sim_header *headers;       /* extra response headers, any step */
  int nheaders;

  /* delay */
  double seconds;            /* scaled by the time scale */

  /* delay, truncate, effect: the wrapped step (effect: how the response
     goes; NULL = a normal 200 answer) */
  struct sim_step *next;

  /* truncate */
  long at;                   /* bytes of the body actually sent */
  int early_close;           /* 1: Content-Length promises the full body */

  /* garbage */
  char *body;                /* NULL = a default HTML page; points into
                                body_blob when that is set */
  sim_blob *body_blob;       /* the shared copy of a large body; owned ref */

  /* effect */
  int apply;                 /* 1: the effect is applied (committed) */

  /* upstream (docs/upstream.md); also seconds (delay = S, before
     forwarding), drop_after, error_after, stall_after, stall (counted in
     the answer's SSE frames) and status/code/type/message (the error event) */
  long cut_at;               /* truncate = N: body bytes passed on, then close; -1 = all */
  int cut_arguments;         /* 1: close inside a streamed tool call's arguments */
} sim_step;

/* A step of `kind` with every field at its default. Owned by the caller. */
sim_step *sim__step_new(sim_step_kind kind);
/* Releases a step and everything it owns; NULL is a no-op. */
void sim__step_free(sim_step *s);
/* The step kind's name as scenarios spell it ("chat", "fail", ...). */
const char *sim__step_kind_name(sim_step_kind kind);

/* ------------------------------------------------------------- requests */

typedef enum sim_dialect {
  SIM_DIALECT_OPENAI = 0,   /* POST /v1/chat/completions (and Azure, prefixes) */
  SIM_DIALECT_ANTHROPIC,    /* POST /v1/messages, /messages */
  SIM_DIALECT_EFFECT,       /* POST /v1/effects/{name}, GET /v1/effects/{key} */
  SIM_DIALECT_RESPONSES,    /* POST /v1/responses */
  SIM_DIALECT_COMPLETIONS,  /* POST /v1/completions (legacy) */
  SIM_DIALECT_EMBEDDINGS,   /* POST /v1/embeddings */
  SIM_DIALECT_MODELS,       /* GET /v1/models */
  SIM_DIALECT_GEMINI,       /* POST /v1beta/models/{m}:generateContent */
  SIM_DIALECT_OLLAMA_CHAT,  /* POST /api/chat (NDJSON stream by default) */
  SIM_DIALECT_OLLAMA_GENERATE, /* POST /api/generate */
  SIM_DIALECT_COHERE,       /* POST /v2/chat */
  SIM_DIALECT_BEDROCK,      /* POST /model/{id}/converse, /converse-stream */
  SIM_DIALECT_BEDROCK_INVOKE /* POST /model/{id}/invoke, /invoke-with-response-stream */
} sim_dialect;

/* The API's name as the trace and req.dialect spell it ("openai-chat"). */
const char *sim__dialect_name(sim_dialect d);
/* 1 when the API can answer with an SSE stream. */
int sim__dialect_streams(sim_dialect d);
/* 1 when the API's stream is binary (Bedrock's event stream). */
int sim__dialect_binary(sim_dialect d);
/* 1 when the API streams a request that does not say "stream" (Ollama). */
int sim__dialect_streams_by_default(sim_dialect d);
/* The content type of the API's stream ("text/event-stream; charset=utf-8",
   Ollama's "application/x-ndjson", Bedrock's
   "application/vnd.amazon.eventstream"). Static. */
const char *sim__dialect_stream_ctype(sim_dialect d);
/* How the API carries a tool call's arguments in a stream: 0 never (no tool
   calls), 1 whole in one chunk (Gemini, Ollama), 2 in 8-byte pieces. */
int sim__dialect_tool_form(sim_dialect d);
/* The name of an error with this status (and the step's type, NULL: none)
   in the x-amzn-errortype header Bedrock's errors carry. Static. */
const char *sim__bedrock_error_type(int status, const char *type);
/* The APIs routed by their own paths (dialect.c): Ollama's /api/chat and
   /api/generate, Cohere's /v2/chat, Bedrock's /model/{id}/converse,
   /converse-stream, /invoke and /invoke-with-response-stream. Returns 1 and sets *d (and *stream
   when the path alone asks for a stream; model gets a model the path names,
   cap bytes at most) when path p names one, else 0. */
int sim__route_own_path(const char *p, sim_dialect *d, char *model, size_t cap, int *stream);

/*
 * What a provider function sees of one arrival (the `req` table). Borrowed
 * from the server for the duration of one decision.
 */
typedef struct sim_req {
  int attempt;               /* nth arrival of this logical request, from 1 */
  int n;                     /* arrival number in the session, from 1 */
  const char *method;
  const char *path;          /* path as sent, e.g. /backup/v1/messages */
  const char *provider;      /* provider name the path selected */
  sim_dialect dialect;
  const sim_header *headers; /* lower-case names; secrets already redacted */
  int nheaders;
  /* When set, headers and nheaders are unset and this collects them on
     first need (most provider functions never read them). */
  void (*load_headers)(void *arg, const sim_header **h, int *n);
  void *headers_arg;         /* for load_headers */
  const char *body;          /* raw body bytes (not NUL-terminated) */
  size_t body_len;
  int stream;                /* 1: the body asked for "stream": true */
  double t;                  /* seconds since session start */
  const char *key;           /* logical request key */
} sim_req;

/* ------------------------------------------------------------ scenarios */

/*
 * srcmap.c: where the keys of a scenario file's tables are written, found by
 * scanning its text (Lua tables keep no lines).
 */
typedef struct sim_srcmap sim_srcmap;
/* Scans len bytes of Lua text. Returns NULL only when out of memory; a file
   too large or too odd to scan gives a map whose lookups answer 0. Owned by
   the caller (sim__srcmap_free). */
sim_srcmap *sim__srcmap_new(const char *buf, size_t len);
void sim__srcmap_free(sim_srcmap *m);
/*
 * The line of the key at path ("client.backoff.base", "providers[2].name")
 * in the table passed to the scenario{} call written on root_line: the
 * key's own line, else the line of its nearest enclosing key written out,
 * else the table's. A key whose value is a name (`client = defaults`)
 * continues in the table last assigned to that name. 0 when no scenario{}
 * call is written on root_line.
 */
int sim__srcmap_line(const sim_srcmap *m, int root_line, const char *path);
/*
 * The dotted key path a message starts with ("client.backoff.base" in
 * "client.backoff.base: must be a number", "ratelimit" in "ratelimit needs
 * rpm or tpm"), copied into path (cap bytes).
 * Returns 1, or 0 (path "") when the message starts with no path.
 */
int sim__msg_path(const char *msg, char *path, size_t cap);

/*
 * Loads and validates a scenario file in a fresh sandboxed Lua state.
 * `seed` seeds math.random. On error returns a negative code and writes
 * "file:line: message" into err. The caller owns *out.
 */
int sim__scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                       char err[SIM_ERRLEN]);
/* As sim__scenario_load, from len bytes of text in memory (copied); name
   stands for the file in messages ("scenario.lua:3: ..."). */
int sim__scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                            sim_scenario **out, char err[SIM_ERRLEN]);
/* A fresh load (a new Lua state, unclaimed) of the text sc was loaded from,
   with the same name and seed: what a session that starts afresh plays.
   Reads only what never changes after the load, so sc may be in use. The
   caller owns *out. */
int sim__scenario_clone(const sim_scenario *sc, sim_scenario **out, char err[SIM_ERRLEN]);
/* Releases a scenario and its Lua states; NULL is a no-op. No decision may
   be running (stop the server first). */
void sim__scenario_free(sim_scenario *sc);
/* The seed it was loaded with. */
uint64_t sim__scenario_seed(const sim_scenario *sc);

/* Borrowed views of a loaded scenario; valid until sim__scenario_free. */
const char *sim__scenario_name(const sim_scenario *sc);
const char *sim__scenario_doc(const sim_scenario *sc);
const char *sim__scenario_path(const sim_scenario *sc);
int sim__scenario_ntags(const sim_scenario *sc);
const char *sim__scenario_tag(const sim_scenario *sc, int i);
/* Providers in declaration order; index 0 is also served at /v1. */
int sim__scenario_nproviders(const sim_scenario *sc);
const char *sim__scenario_provider_name(const sim_scenario *sc, int i);
/* 1 if the scenario declares `effects`. */
int sim__scenario_has_effects(const sim_scenario *sc);
/* 1 if the effect ledger honours Idempotency-Key (default), 0 if ignored. */
int sim__scenario_idempotency_honoured(const sim_scenario *sc);
/* 1 if the ledger answers lookups (default), 0 if it is "down" (503). */
int sim__scenario_ledger_up(const sim_scenario *sc);

/*
 * The `client`, `expect` and `ratelimit` tables as JSON text (NULL when
 * absent). Owned by the scenario.
 */
const char *sim__scenario_client_json(const sim_scenario *sc);
const char *sim__scenario_expect_json(const sim_scenario *sc);
const char *sim__scenario_ratelimit_json(const sim_scenario *sc);

/*
 * Writes "file:line: msg" into err for a message about the scenario's tables
 * that starts with the key path it is about ("client.attemps: unknown key"):
 * the line is the key's as written (sim__srcmap_line), else the line of the
 * scenario{} call.
 */
void sim__scenario_error(const sim_scenario *sc, const char *msg,
                         char err[SIM_ERRLEN]);
/* Claims the scenario for one server session: SIM_OK the first time,
   SIM_EINVAL after (its provider functions keep state across a session). */
int sim__scenario_claim(sim_scenario *sc);

/*
 * Asks provider `provider` (index into the providers, or -1 for the effects
 * table) what to do with one arrival. Thread-safe: each calling thread (an
 * event loop) gets a Lua state of its own on its first call, so calls of
 * different threads run side by side (lua_scenario.c). On success returns
 * 0 and a step the caller owns; on a scenario error (a Lua error, the
 * instruction or memory limit, a bad step) returns a negative code and
 * "file:line: message" in err.
 */
int sim__scenario_decide(sim_scenario *sc, int provider, const sim_req *req,
                         sim_step **out, char err[SIM_ERRLEN]);


/* ====================================================================
 * Server internals (server.c, conn.c, session.c, play.c, step.c, stages.c,
 * end_state.c, waiter.c, trace.c, dialect*.c, ledger.c, keying.c, keymap.c,
 * ratelimit.c, state*.c). No Lua here.
 * ==================================================================== */

#include <cjson/cJSON.h>

/* env.c: the clocks of an environment (NULL or a NULL member: the real one). */
double sim__env_now_ms(const sim_env *env);
double sim__env_wall_s(const sim_env *env);

/* keying.c (sim_request_key is in sim.h) */
void sim__fingerprint(const void *data, size_t len, char out[17]);
/* The SHA-256 of bytes (libcrypto's), as 64 lower-case hex digits in
   out[65]: the collision-safe name of a key too long, or too secret, to be
   written as it is (Redis key names, trace keys). */
void sim__key_digest(const void *data, size_t len, char out[65]);
/* Longest key (Idempotency-Key, effect key) kept as it is in a Redis key
   name or a logical request key; a longer one is named by its digest. */
#define SIM_KEY_RAW_MAX 200
/* Writes v in lower-case hex, at least min digits (what "%0*llx" prints),
   at o without a terminator; returns the end. For the hot path, where
   snprintf costs more than the rest of the field. */
char *sim__put_hex(char *o, uint64_t v, int min);
/* redact.c: sim_redact_name, kept under its old name for the server. */
int sim__header_is_secret(const char *name);
/* 1 when sim_redact_header(name_low, value) is the value itself: the name
   (lower case) is not secret and no rule can match the len bytes of value.
   A quick test that copies nothing (issue 30: the trace redacted every
   header of every request through a malloc'd copy); 0 means "ask
   sim_redact_header", not "secret". */
int sim__redact_header_clean(const char *name_low, const char *value, size_t len);
/* 1 when sim_redact_text(text, len) is the text itself (no rule can match
   it); 0 means "ask sim_redact_text". */
int sim__redact_text_clean(const char *text, size_t len);

/* keymap.c: counts arrivals per logical request key (thread-safe). */
typedef struct sim_keymap sim_keymap;
sim_keymap *sim__keymap_new(void);
void sim__keymap_free(sim_keymap *m);
/* Adds one arrival for key; returns the new count (>= 1), or < 0 on error. */
int sim__keymap_bump(sim_keymap *m, const char *key);

/* trace.c: JSON Lines, one line per event, flushed as written. */
typedef struct sim_trace sim_trace;
/* Opens path for writing (or uses stream when path is NULL; both NULL = no
   trace). Returns 0 or SIM_EIO with the reason in err. Caller owns *out. */
int sim__trace_open(const char *path, FILE *stream, sim_trace **out,
                    char err[SIM_ERRLEN]);
/* Called once, at the first failed write, with "path: cannot write trace:
   reason"; runs on the writing thread with the trace locked. */
typedef void (*sim_trace_error_fn)(void *arg, const char *msg);
void sim__trace_on_error(sim_trace *tr, sim_trace_error_fn fn, void *arg);
/* Writes ev as one line and frees it. Thread-safe; NULL trace = free only.
   After a failed write nothing more is written. */
void sim__trace_emit(sim_trace *tr, cJSON *ev);
/* ev as one JSON line ending in '\n', strings UTF-8-fixed (U+FFFD), in the
   calling thread's reusable buffer (valid until its next call), or NULL
   without memory; *len its length. */
const char *sim__trace_line(const cJSON *ev, size_t *len);
/* Flushes and closes (the file, not a borrowed stream); returns SIM_EIO
   with the reason in err (may be NULL) when any write failed, the last
   flush included. NULL is a no-op. */
int sim__trace_finish(sim_trace *tr, char err[SIM_ERRLEN]);
/* sim__trace_finish, ignoring the result. */
void sim__trace_close(sim_trace *tr);
/* 1 when a line could not be written (a write failed or memory ran out). */
int sim__trace_failed(const sim_trace *tr);
/* 1 when events are written anywhere (callers skip building them if not). */
int sim__trace_on(const sim_trace *tr);
/*
 * A session's tap: a trace with no file of its own that keeps its lines in
 * memory (up to max_bytes; past that it keeps no more and says it is full)
 * and passes each on to parent's file (NULL = none). With session not
 * NULL, every line gets "session": session. The caller owns *out and closes
 * it (sim__trace_close) before parent.
 */
int sim__trace_tap_new(sim_trace *parent, const char *session, size_t max_bytes,
                       sim_trace **out);
/* A NUL-terminated copy of a tap's lines (the caller frees *out), *full = 1
   when lines were left out. SIM_EINVAL when tr is not a tap; SIM_ENOMEM. */
int sim__trace_tap_copy(sim_trace *tr, char **out, size_t *len, int *full);
/* A new event object {"ev": kind, "t": t_ms}. Owned by the caller. */
cJSON *sim__trace_event(const char *kind, double t_ms);
/*
 * The hot events without a tree (issue 13): opens the line
 * {"ev": kind, "t": t_ms in the calling thread's buffer and returns it for
 * the caller to add fields with sim__jw_k* (sim/json_write_int.h), or NULL
 * when tr writes nowhere or memory ran out. sim__trace_commit ends the line
 * and writes it; no other trace line may be begun on the thread in between.
 */
struct sim_jw;
struct sim_jw *sim__trace_begin(const sim_trace *tr, const char *kind, double t_ms);
void sim__trace_commit(sim_trace *tr, struct sim_jw *w);

/* ------------------------------------------------ attempt end states */

/* end_state.c: the terminal state of an attempt, as its API would call it:
   the `state` of the trace's `end` event (docs/trace.md lists them). */
typedef enum sim_end_state {
  SIM_STATE_COMPLETE = 0,  /* a 2xx answer sent whole that its API calls finished */
  SIM_STATE_ERROR_STATUS,  /* a non-2xx status sent whole */
  SIM_STATE_ERROR_EVENT,   /* a 2xx stream that carried an in-band error */
  SIM_STATE_INCOMPLETE,    /* an answer its API calls incomplete (Responses) */
  SIM_STATE_NO_END,        /* a stream that ended cleanly without its finish/end marker */
  SIM_STATE_CUT,           /* a status line went out, the server cut the rest */
  SIM_STATE_STALLED,       /* a stream stalled and never resumed to its end */
  SIM_STATE_UNPARSABLE,    /* a 2xx body sent whole that is not its API's JSON */
  SIM_STATE_NO_RESPONSE,   /* no status line was ever sent */
  SIM_STATE_ABORTED        /* the client left while a live answer was being sent */
} sim_end_state;
#define SIM_STATE_COUNT 10

/* How an attempt's connection ended. */
typedef enum sim_end_how {
  SIM_END_OPEN = 0,  /* the player did not end it: libmicrohttpd's
                        termination code tells (server.c resolves it) */
  SIM_END_CLEAN,     /* the response went out as the player made it */
  SIM_END_CUT,       /* the server closed it on purpose: drop, reset,
                        drop_after, an early close */
  SIM_END_PEER_LEFT, /* the client went away first (or timed out) */
  SIM_END_SHUTDOWN   /* the server stopped with the attempt open */
} sim_end_how;

/* What the player sent of one attempt: filled where the answer is made
   (play.c), with the dialect's own word on what its answer is (`done`). */
typedef struct sim_sent {
  sim_step_kind kind;        /* the step whose answer went out (a truncate's
                                inner step; an effect's `next`) */
  int status;                /* the status line sent; 0 = none */
  unsigned char stream;      /* the answer is an SSE stream */
  unsigned char short_body;  /* truncate: fewer bytes than the answer has */
  unsigned char error_event; /* stream: its in-band error event went out */
  unsigned char end_marker;  /* stream: its end marker went out (after its finish) */
  unsigned char stalling;    /* stream: stalled, and not resumed */
  unsigned char done;        /* sim_end_state the dialect gives its answer
                                when sent whole: COMPLETE or INCOMPLETE */
} sim_sent;

/* The state of an attempt that sent `sent` and ended `how` (SIM_END_OPEN
   counts as CLEAN). The one rule; pure, no server needed. */
sim_end_state sim__end_state(const sim_sent *sent, sim_end_how how);
/* The state's name as the trace spells it ("complete", "error_event", ...). */
const char *sim__end_state_name(sim_end_state st);

/* dialect.c: bodies shaped as each provider shapes them. All returned
   strings are malloc'd and owned by the caller. */
const char *sim__request_id_header(sim_dialect d);
char *sim__chat_body(sim_dialect d, const char *id, const char *model,
                     const char *text, int tokens_in, int tokens_out);
/* The answer body of step s (text, tool calls, how it ends) in the API's
   shape; s NULL = plain text. */
char *sim__answer_body(sim_dialect d, const sim_step *s, const char *id, const char *model,
                       const char *text, int tokens_in, int tokens_out);
/* The dialect's word on step s's answer sent whole (a body, or a stream
   through its end marker): SIM_STATE_INCOMPLETE where the API calls it
   so (Responses' "incomplete"), else SIM_STATE_COMPLETE. */
sim_end_state sim__answer_done(sim_dialect d, const sim_step *s);
/* The embeddings list: ninputs vectors derived from text. */
char *sim__embeddings_body(const char *model, const char *text, int ninputs, int tokens_in);
/* As sim__error_body; retry_s >= 0 adds Google's RetryInfo (Gemini). */
char *sim__error_body_retry(sim_dialect d, int status, const char *code, const char *type,
                            const char *message, double retry_s);
/* Fills in default code/type/message for status when the step leaves them
   NULL, then renders the error body. */
char *sim__error_body(sim_dialect d, int status, const char *code,
                      const char *type, const char *message);
/* The frames of an SSE stream, split so the player can time and cut them. */
typedef struct sim_sse {
  char *pre;       /* frames before the first text chunk */
  char **chunk;    /* one frame per text chunk, then tool argument deltas */
  int nchunks;
  int cap;         /* allocated chunk slots */
  int ntexts;      /* chunks [0, ntexts) carry the answer text */
  char *tail;      /* finish frames after the text (not the end marker) */
  char *marker;    /* the end marker: data: [DONE] / message_stop */
  char *error;     /* the in-stream error event */
  sim_end_state done; /* the dialect's word on the stream sent through its
                         marker: SIM_STATE_COMPLETE or SIM_STATE_INCOMPLETE */
  int binary;      /* 1: frames are bytes (NULs inside; Bedrock's event
                      stream), their lengths below; 0: C strings */
  size_t *lens;    /* binary: chunk[i]'s length */
  int lens_cap;
  size_t pre_len, tail_len, marker_len, error_len; /* binary */
} sim_sse;
int sim__sse_build(sim_dialect d, const sim_step *s, const char *id,
                   const char *model, int tokens_in, char **texts, int ntexts,
                   sim_sse *out);
void sim__sse_clear(sim_sse *sse);
/* Appends a frame (taken; NULL = out of memory) to the stream's chunks. */
int sim__sse_push(sim_sse *out, char *frame);
/* Appends a binary frame of len bytes (taken) to a binary stream's chunks. */
int sim__sse_push_bin(sim_sse *out, char *frame, size_t len);

/* frames.c: SSE frames (events) in a byte stream that arrives in pieces,
   for the upstream{} step's faults on a real answer. */
#define SIM_FRAME_KEEP ((size_t)64 << 10) /* bytes of one frame kept to read it */
typedef struct sim_frames {
  char *buf;        /* the frame under way (its first SIM_FRAME_KEEP bytes) */
  size_t len, cap;
  size_t line_len;  /* bytes of the line under way */
  int cr;           /* the last byte was a CR (a CRLF's LF is not a line end) */
  int has_field;    /* the frame has a line that is not a comment */
  int ended;        /* the last feed ended a frame */
  long count;       /* frames ended so far */
} sim_frames;
/*
 * Feeds up to n bytes of the stream and stops just past the first frame
 * that ends in them: returns the bytes taken, and *ended = 1 with the
 * frame's text in f->buf (f->len bytes, valid until the next feed) when a
 * frame ended, else every byte was taken. A zeroed sim_frames is ready.
 */
size_t sim__frames_feed(sim_frames *f, const char *p, size_t n, int *ended);
/* Releases the splitter's buffer (zeroes it). */
void sim__frames_clear(sim_frames *f);
/* What a frame (n bytes) says: its API's end marker (data: [DONE],
   message_stop, response.completed, Cohere's message-end) ... */
int sim__frame_is_end(const char *f, size_t n);
/* ... an in-stream error event (event: error, data: {"error": ...},
   "type":"error", response.failed) ... */
int sim__frame_is_error(const char *f, size_t n);
/* ... a non-empty piece of a tool call's arguments (OpenAI's
   "arguments":"...", Anthropic's partial_json, Responses'
   function_call_arguments.delta). */
int sim__frame_has_arguments(const char *f, size_t n);

/* eventstream.c: AWS's binary event stream messages (see the file). Each
   returns the message (owned by the caller) and its length in *len, or
   NULL when out of memory or past its limits. */
char *sim__es_message(const char *const *names, const char *const *values, int nh,
                      const char *payload, size_t plen, size_t *len);
char *sim__es_event(const char *type, const char *json, size_t *len);
char *sim__es_exception(const char *type, const char *json, size_t *len);
/* Splits argument text into 8-byte stream pieces; see dialect.c. */
int sim__split_args(const char *args, char ***out, int *n);
void sim__free_strv(char **v, int n);
/* Splits text into word-sized pieces for streaming. *out owned by caller. */
int sim__split_words(const char *text, char ***out, int *n);
/* The farthest a Retry-After date may lie from now, either way, in seconds
   (scenarios are checked against it at load; the formatter clamps to it). */
#define SIM_RETRY_DATE_MAX 1e9
/* Tokens billed for len bytes of text when a step gives no usage (a token
   is about four characters, rounded up): every estimate of the server. */
int sim__estimate_tokens(size_t len);

/* http_date.c: formats wall time now_s + seconds_ahead, rounded up to the
   next whole second, as an IMF-fixdate HTTP-date; seconds_ahead beyond
   +-SIM_RETRY_DATE_MAX (or NaN) is clamped, never formatted. sim_http_date_parse
   (sim.h) reads them back. */
void sim__http_date(double now_s, double seconds_ahead, char out[40]);
/* Formats seconds as delta-seconds ("2", "1.5"). */
void sim__format_seconds(double seconds, char out[32]);

/* waiter.c: timers and hang-up watches for suspended connections, so no
   thread sleeps per connection. Hang-ups are watched by the waiter's own
   thread; timers either by it (owner 0) or by the event loop that owns
   them (owner 1..SIM_LOOPS_MAX, see loops.c), which fires them itself. */
#define SIM_LOOPS_MAX 8
#define SIM_WAIT_OWNERS (SIM_LOOPS_MAX + 1)
enum { SIM_WAKE_TIMER = 1, SIM_WAKE_HANGUP = 2, SIM_WAKE_SHUTDOWN = 3 };
typedef void (*sim_wake_fn)(void *arg, int reason);
typedef struct sim_wait {
  double due_ms;   /* CLOCK_MONOTONIC ms; < 0 = no timer */
  size_t heap_idx; /* position in the timer heap (private) */
  int fd;          /* socket watched for hang-up; < 0 = none */
  int active;      /* 1 while registered (private) */
  int owner;       /* whose timer heap it is on (private) */
  sim_wake_fn fn;
  void *arg;
} sim_wait;
typedef struct sim_waiter sim_waiter;
/* A waiter whose timers run on env's monotonic clock (copied; NULL = the
   real clock). Caller owns *out. */
int sim__waiter_new(const sim_env *env, sim_waiter **out);
/* Wakes at once, with reason, every wait whose arg match(arg, ctx)
   accepts (a run's connections: session.c), firing them on the calling
   thread. Returns how many were woken. */
int sim__waiter_wake_if(sim_waiter *wt, int (*match)(void *arg, void *ctx), void *ctx,
                        int reason);
/* Makes the waiter look at its clock again (after a fake clock moved). */
void sim__waiter_kick(sim_waiter *wt);
/* Registers w: fn(arg, reason) runs once when the timer is due, the peer
   hangs up, or the waiter shuts down - on the waiter thread, or on a
   thread calling sim__waiter_add or sim__waiter_poll once w is due. Before
   registering, the caller fires (on its own thread, lock not held) up to
   64 timers already due. Returns SIM_EINVAL after shutdown began (the
   caller must not wait then). */
int sim__waiter_add(sim_waiter *wt, sim_wait *w, double due_ms, int fd,
                    sim_wake_fn fn, void *arg);
/* The same on owner's timers (1..SIM_LOOPS_MAX; 0 is sim__waiter_add's),
   called on owner's thread only: its timers fire only in
   sim__waiter_fire_due on that thread (a hang-up or shutdown still fires
   on the waiter thread), and the timers fired before registering are
   owner's. */
int sim__waiter_add_on(sim_waiter *wt, int owner, sim_wait *w, double due_ms, int fd,
                       sim_wake_fn fn, void *arg);
/* For owner's thread: fires owner's timers that are due, then returns the
   due time of its next one (on the waiter's clock), or -1 when none. */
double sim__waiter_fire_due(sim_waiter *wt, int owner);
/* The socket fd is about to be closed: stop watching it (a socket is
   watched from its first wait on, across waits). A wait still registered
   on it stays, unwatched. */
void sim__waiter_forget(sim_waiter *wt, int fd);
/* Fires on the calling thread up to 64 timers already due (none when
   another thread holds the waiter at that moment). For event loops. */
void sim__waiter_poll(sim_waiter *wt);
/* Wakes every registered wait with SIM_WAKE_SHUTDOWN and refuses new ones;
   returns when all have been woken. */
void sim__waiter_shutdown(sim_waiter *wt);
void sim__waiter_free(sim_waiter *wt);

/* ratelimit.c: an optional token bucket in front of the providers. */
typedef struct sim_ratelimit sim_ratelimit;
#define SIM_RL_HEADERS 6
typedef struct sim_rl_result {
  double retry_after;  /* scenario seconds to wait when refused */
  struct {
    char name[48];
    char value[40];
  } headers[SIM_RL_HEADERS];
  int nheaders;
} sim_rl_result;
/* Builds the limiter from the `ratelimit` table (JSON; NULL = none, *out
   NULL) on env's clocks (copied; NULL = the real ones). A bad table gives
   SIM_ELOAD and a message that starts with the offending key's path
   ("ratelimit.rpm: ..."). Caller owns *out. */
int sim__ratelimit_new(const char *json, double scale, const sim_env *env,
                       sim_ratelimit **out, char err[SIM_ERRLEN]);
void sim__ratelimit_free(sim_ratelimit *rl);
/* The factor of the reset times written on the wire (x-ratelimit-reset-*,
   anthropic-ratelimit-*-reset): the time scale under scale_wire, else 1. */
void sim__ratelimit_set_wire(sim_ratelimit *rl, double wire);
int sim__ratelimit_take(sim_ratelimit *rl, int tokens, sim_rl_result *r);
/* For a bucket kept elsewhere (state_redis.c): the limiter's settings
   (0 = that limit is off; scale = real seconds per scenario second) ... */
typedef struct sim_rl_conf {
  double rpm, tpm, req_cap, tok_cap, scale;
} sim_rl_conf;
void sim__ratelimit_conf(const sim_ratelimit *rl, sim_rl_conf *out);
/* ... and the answer from the levels left after a take: r->retry_after and
   the headers, as sim__ratelimit_take fills them. */
void sim__ratelimit_answer(const sim_ratelimit *rl, int refused, double wait_s,
                           double req_left, double tok_left, sim_rl_result *r);

/* ledger.c: the side-effect ledger. Thread-safe. */
typedef struct sim_ledger sim_ledger;
enum { SIM_LEDGER_APPLIED = 1, SIM_LEDGER_REPLAYED, SIM_LEDGER_CONFLICT,
       SIM_LEDGER_NOT_APPLIED };
sim_ledger *sim__ledger_new(int honour_keys);
void sim__ledger_free(sim_ledger *lg);
/* Executes (when apply) or replays an effect. key may be NULL. Returns the
   action; *count = times this key (or keyless payload) has been executed;
   *result = the stored result JSON (owned by the caller). SIM_ENOMEM when
   out of memory: then nothing was applied or recorded. */
int sim__ledger_post(sim_ledger *lg, const char *key, const char *name,
                     const char *fingerprint, int apply, int *count,
                     char **result);
/* 1 if key was applied under any effect name (the first one's *result,
   owned by the caller), else 0. A key is scoped by the effect's name in
   sim__ledger_post: the same key sent to two effects is two entries. */
int sim__ledger_lookup(sim_ledger *lg, const char *key, char **result);
/* The entry an effect is filed under (its key, or "fp:<fingerprint>");
   returns key or buf. Shared with the Redis ledger (state_redis.c). */
#define SIM_LEDGER_KEYLEN 320 /* "fp:", 16 hex digits, ':' and a name of up to 256 */
const char *sim__ledger_key(const char *key, const char *name, const char *fingerprint,
                            char buf[SIM_LEDGER_KEYLEN]);
/* The stored result of the serial-th executed effect, as JSON text (caller owns). */
char *sim__ledger_result(long serial, const char *name);

#endif
