/*
 * sim.h - the fake provider: scenario sessions served over HTTP.
 *
 * A session loads one scenario file, listens on one loopback port and
 * answers OpenAI chat completions, Anthropic messages and the effect
 * endpoints as the scenario says, writing every attempt to a trace.
 */
#ifndef FUSEBOX_SIM_H
#define FUSEBOX_SIM_H

#include <stdint.h>
#include <stdio.h>

#define SIM_ERRLEN 256

/* Error codes returned by sim_ functions (0 is success). */
enum {
  SIM_OK = 0,
  SIM_ENOMEM = -1,   /* out of memory */
  SIM_EIO = -2,      /* a file could not be read or written */
  SIM_ELOAD = -3,    /* a scenario did not load or validate */
  SIM_ELUA = -4,     /* a scenario failed while deciding a step */
  SIM_ELISTEN = -5,  /* the server could not bind or start */
  SIM_EINVAL = -6,   /* a bad argument */
  SIM_ESTATE = -7,   /* the shared state (Redis, --state) is unreachable */
  SIM_ENOENT = -8,   /* no such session */
  SIM_EFULL = -9     /* a bound was reached (sessions, a session's trace) */
};

/*
 * The environment: sim's clocks. A NULL member means the real one. Both must
 * be thread-safe (the server's event loops and its waiter thread read them).
 * Tests inject a fake clock, so that timers, the rate limiter and trace
 * times are tested without sleeping.
 */
typedef struct sim_env {
  double (*now_ms)(void *ud); /* monotonic milliseconds (default CLOCK_MONOTONIC) */
  double (*wall_s)(void *ud); /* seconds since the Unix epoch (default the system clock) */
  void *ud;                   /* passed to both */
} sim_env;

/* A static description of an error code. */
const char *sim_strerror(int code);

/* One-time process set-up (raises the open-file limit). Call before serving. */
int sim_global_init(void);

/* ------------------------------------------------------------ scenarios */

/*
 * A loaded scenario: the file run once in its sandbox and its whole table
 * validated, kept to be served by one server session. Load it once, check
 * the tables other modules read (`client`, `expect`) against it, and hand it
 * to sim_server_start: nothing loads the file again.
 */
typedef struct sim_scenario sim_scenario;

/*
 * Loads the scenario file at path and validates, in one pass, everything
 * sim reads of it: its keys, name, tags, steps, `provider`/`providers`,
 * `effects`, `ratelimit`, and that `client` and `expect` are plain tables.
 * `seed` seeds the scenario's math.random. Every error is
 * "file:line: message", the line being that of the offending key or value.
 * Returns SIM_OK, SIM_ELOAD, SIM_EIO or SIM_ENOMEM. The caller owns *out and
 * releases it with sim_scenario_free.
 */
int sim_scenario_load(const char *path, uint64_t seed, sim_scenario **out,
                      char err[SIM_ERRLEN]);
/*
 * As sim_scenario_load, from len bytes of Lua text in memory (at most
 * 1 MiB, copied); `name` stands for the file in every message
 * ("scenario.lua:3: ..."). Same returns; the caller owns *out.
 */
int sim_scenario_load_text(const char *name, const char *text, size_t len, uint64_t seed,
                           sim_scenario **out, char err[SIM_ERRLEN]);
/* Releases a scenario; NULL is a no-op. A server serving it must be freed
   first. */
void sim_scenario_free(sim_scenario *sc);
/* Borrowed views, valid until sim_scenario_free. The `client` and `expect`
   tables are JSON text, NULL when the scenario has none. */
const char *sim_scenario_path(const sim_scenario *sc);
const char *sim_scenario_name(const sim_scenario *sc);
const char *sim_scenario_client_json(const sim_scenario *sc);
/* The scenario's tags (its `tags` list): how many, and tag i (0 <= i <
   ntags; NULL out of range), borrowed until sim_scenario_free. */
int sim_scenario_ntags(const sim_scenario *sc);
const char *sim_scenario_tag(const sim_scenario *sc, int i);
const char *sim_scenario_expect_json(const sim_scenario *sc);
/* The providers in declaration order (names borrowed). */
int sim_scenario_nproviders(const sim_scenario *sc);
const char *sim_scenario_provider_name(const sim_scenario *sc, int i);
/*
 * Places a message about one of the scenario's tables in its file: msg
 * starts with the dotted path of the offending key or value, as the
 * validators of `client` and `expect` write them ("client.backoff.bsae:
 * unknown key", "expect.attempts.min: ..."). Writes "file:line: msg" into
 * err, the line being that key's as written in the file, else its nearest
 * enclosing key's, else the scenario{} call's.
 */
void sim_scenario_error(const sim_scenario *sc, const char *msg,
                        char err[SIM_ERRLEN]);

/* What `fusebox list` and `check` show of a scenario. */
typedef struct sim_scenario_info {
  char *path;
  char *name;
  char *doc;
  char **tags;
  int ntags;
  char *client_json; /* the `client` table as JSON, NULL if absent */
  char *expect_json; /* the `expect` table as JSON, NULL if absent */
} sim_scenario_info;

/*
 * Loads and validates a scenario file without serving it. On success fills
 * *info (which the caller releases with sim_scenario_info_clear); on failure
 * returns SIM_ELOAD or SIM_EIO with "file:line: message" in err.
 */
int sim_scenario_inspect(const char *path, sim_scenario_info *info,
                         char err[SIM_ERRLEN]);
/* Releases what sim_scenario_inspect filled in; safe on a zeroed struct. */
void sim_scenario_info_clear(sim_scenario_info *info);

/*
 * Loads a client profile (a Lua file returning profile { ... }: what a client
 * promises about attempts, backoff, retried statuses, Retry-After) in the
 * sandbox. Returns 0 with the profile as JSON text in *json, which the
 * caller frees; else a negative code with "file:line: message" in err.
 */
int sim_profile_load(const char *path, char **json, char err[SIM_ERRLEN]);

/* ------------------------------------------------------------ redaction */
/* The one redaction rule (sim/redact.c; docs/trace.md states it). */

/* 1 if a header, query parameter or field of this name carries a credential
   (auth, key, token, secret, cookie, signature, password... in any case). */
int sim_redact_name(const char *name);
/*
 * Returns a copy of the len bytes at text, NUL-terminated, with every value
 * that looks like a credential replaced by "[redacted]": sk-, sk-proj-,
 * sk-ant- and AIza keys, 32-hex Azure keys, Bearer/Basic tokens, and the
 * value of NAME=..., NAME: ..., "NAME":"..." for a secret NAME. The caller
 * owns the result and frees it; NULL when out of memory.
 */
char *sim_redact_text(const char *text, size_t len);
/* "[redacted]" for a secret header name, else sim_redact_text of value
   (NULL = ""). The caller owns the result; NULL when out of memory. */
char *sim_redact_header(const char *name, const char *value);
/*
 * Makes text safe to print on a terminal, in place: every terminal control
 * but newline and tab (common/term_rule.h, the rule reports/ applies too: C0,
 * DEL, C1 U+0080..U+009F, bytes that are not well-formed UTF-8) becomes one
 * '?', so ESC, BEL and CSI from scenarios, logs and traces cannot drive the
 * terminal. The text can only shrink. Returns text; NULL gives NULL.
 */
char *sim_term_safe(char *text);

/* --------------------------------------------------------------- server */

typedef struct sim_server sim_server;

/* ------------------------------------------------------ control (docs/control.md) */

#define SIM_SESSION_NAME_MAX 64  /* a session name: 1..64 of [A-Za-z0-9._-] */
#define SIM_MAX_SESSIONS 256     /* sessions one server holds, `default` included */
#define SIM_SESSION_TRACE_MAX ((size_t)8 << 20) /* bytes of trace kept per session */
#define SIM_CONTROL_MAX_BODY ((size_t)1 << 20)  /* larger control bodies: too_big */

/* One name and value (a query parameter, a request header). */
typedef struct sim_kv {
  const char *name;
  const char *value;
} sim_kv;

/* A request under /__fusebox/, as the control hook gets it. Borrowed for
   the duration of the call. Nothing of it is written to the trace. */
typedef struct sim_control_req {
  const char *method;
  const char *path;        /* e.g. "/__fusebox/scenario" (no query) */
  const sim_kv *query;     /* query parameters, percent-decoded */
  int nquery;
  const sim_kv *headers;   /* request headers as sent (credentials too) */
  int nheaders;
  const char *body;        /* NULL when empty */
  size_t body_len;
  int too_big;             /* the body exceeded SIM_CONTROL_MAX_BODY (not kept) */
} sim_control_req;

/* The hook's answer: status and a body it allocated with malloc (taken by
   the server; NULL = empty), and its type (static; NULL = application/json). */
typedef struct sim_control_resp {
  int status;
  char *body;
  size_t body_len;
  const char *content_type;
} sim_control_resp;

/* Answers one control request; runs on a server thread, several at once. */
typedef void (*sim_control_fn)(void *arg, sim_server *srv, const sim_control_req *req,
                               sim_control_resp *resp);

/* 1 when name is a good session name (see SIM_SESSION_NAME_MAX). */
int sim_session_name_ok(const char *name);

typedef struct sim_server_opts {
  const char *scenario_path; /* the file to load, or NULL with scenario */
  sim_scenario *scenario;    /* or serve this loaded scenario (borrowed: it must
                                outlive the server; one session per scenario;
                                `seed` is then the one it was loaded with) */
  const char *bind;          /* NULL = 127.0.0.1 */
  int port;                  /* 0 = pick a free port */
  const char *trace_path;    /* NULL = no trace file */
  FILE *trace_stream;        /* or write the trace here (not closed) */
  double time_scale;         /* 0 = 1.0; 0.1 makes every delay 10x shorter */
  /* 1: every wait advised on the wire (Retry-After in seconds, as a date and
     as retry-after-ms, Gemini's retryDelay, the limiter's Retry-After) is
     times time_scale too, for a client that does not know the scale (serve,
     exec); the trace keeps the scenario's values, which the verdicts scale.
     0: as the scenario wrote them (run's built-in client scales them). */
  int scale_wire;
  uint64_t seed;             /* math.random seed for the scenario */
  int max_connections;       /* 0 = 20000 */
  int loops;                 /* event loops (threads); 0 = one per core, at most 8 */
  /* Told once, at the first failed trace write (a full disk), with
     "path: cannot write trace: reason"; runs on a server thread. NULL =
     nobody is told until sim_server_stop. */
  void (*on_trace_error)(void *arg, const char *msg);
  void *on_trace_error_arg;
  sim_env env;               /* clocks; zeroed = the real ones */
  /* A fleet (docs/fleet.md): several servers acting as one provider. */
  const char *state_url;     /* redis://HOST:PORT[/DB]; NULL = all state in process */
  const char *session;       /* fleet session name; NULL = the scenario file's fingerprint */
  int new_session;           /* 1: start the session afresh instead of joining it */
  const char *instance;      /* this server's name in the trace; NULL = host-pid */
  /* Sessions and the control API (docs/control.md): with control set, the
     scenario is optional, requests under /__fusebox/ go to control, and a
     provider request joins a session by the X-Fusebox-Session header or
     the /__session/NAME/ path prefix. Not with state_url. */
  sim_control_fn control;
  void *control_arg;
  /* The real provider upstream{} steps forward to (docs/upstream.md):
     http:// or https:// URL, checked by sim_upstream_base; NULL = none
     (an upstream{} attempt is then answered 502). */
  const char *upstream;
} sim_server_opts;

/*
 * Loads the scenario, opens the trace and starts listening. The caller owns
 * *out and stops it with sim_server_free. On error returns a negative code
 * with the reason in err.
 */
int sim_server_start(const sim_server_opts *opts, sim_server **out,
                     char err[SIM_ERRLEN]);
/* The port the server listens on. */
int sim_server_port(const sim_server *srv);
/* Number of arrivals so far. */
long sim_server_arrivals(const sim_server *srv);
/* The scenario's providers, in declaration order (the first is also at /v1).
   The name is borrowed from the server. */
int sim_server_nproviders(const sim_server *srv);
const char *sim_server_provider_name(const sim_server *srv, int i);
/* Milliseconds since the session started (the trace's clock). */
double sim_server_elapsed_ms(const sim_server *srv);
/*
 * Writes one event of the caller's to the trace (e.g. a client's account of
 * a call): json must be one JSON object; its "t" is set to the trace clock.
 * Returns SIM_OK, or SIM_EINVAL when json is not an object.
 */
int sim_server_note(sim_server *srv, const char *json);
/*
 * Sessions (servers started with a control hook). A session plays its own
 * scenario, or a fresh copy of the default session's when it has none,
 * with its own attempt counters, ledger, rate limiter and trace lines.
 *
 * sim_server_session_put: session `name` (created if new) starts afresh
 * with sc, which the server takes in every case. SIM_EFULL when
 * SIM_MAX_SESSIONS are held, SIM_EINVAL for a bad name or a server without
 * sessions.
 * sim_server_session_reset: the session starts afresh with the same
 * scenario. SIM_ENOENT when there is no such session.
 * Both write a `session` event to the trace; err says why on failure.
 */
int sim_server_session_put(sim_server *srv, const char *name, sim_scenario *sc,
                           char err[SIM_ERRLEN]);
int sim_server_session_reset(sim_server *srv, const char *name, char err[SIM_ERRLEN]);
/*
 * The trace lines of the session's current run (what --trace holds of it),
 * NUL-terminated; the caller frees *text. *full = 1 when the session wrote
 * more than SIM_SESSION_TRACE_MAX bytes (the copy stops there). SIM_ENOENT
 * when there is no such session, SIM_ENOMEM.
 */
int sim_server_session_trace(sim_server *srv, const char *name, char **text, size_t *len,
                             int *full);
/* The names of the sessions, `default` first, copied into names (up to
   cap); returns how many there are. */
int sim_server_session_names(sim_server *srv, char (*names)[SIM_SESSION_NAME_MAX + 1],
                             int cap);

/*
 * Stops serving: ends hung and delayed connections, writes the last trace
 * lines, closes the trace and releases everything. NULL is a no-op.
 */
void sim_server_free(sim_server *srv);
/*
 * sim_server_free, and says whether the trace is whole: returns SIM_OK, or
 * SIM_EIO with "path: cannot write trace: reason" in err when any trace
 * write failed (the trace then ends at the failure). NULL is SIM_OK.
 */
int sim_server_stop(sim_server *srv, char err[SIM_ERRLEN]);

/* ------------------------------------------------------------ shared rules */
/* What the importer and the recorder (import/) share with the server, so
   both sides of a replay follow one rule. */

/* Milliseconds on CLOCK_MONOTONIC (the real clock), for measuring
   durations; never wall time. */
double sim_now_ms(void);
/*
 * Writes the logical request key of an arrival into out (cap bytes), the
 * key a scenario's attempt counter and the ledger go by: "idem:<key>" when
 * an Idempotency-Key (idem_key, NULL or "" = none) was sent, else
 * "hash:<16 hex>" of method, path and the body_len bytes of body. Returns
 * SIM_OK, or SIM_EINVAL if out is too small (out then holds it cut short,
 * terminated).
 */
int sim_request_key(const char *idem_key, const char *method, const char *path,
                    const char *body, size_t body_len, char *out, size_t cap);
/* A provider name as scenarios and URLs use it (/<name>/v1/...): 1 to
   SIM_PROVIDER_NAME_MAX bytes of a-z 0-9 _ -, and not "v1". Returns 1 when
   the len bytes at s are one, else 0. */
#define SIM_PROVIDER_NAME_MAX 32
int sim_provider_name_ok(const char *s, size_t len);
/* Parses an IMF-fixdate HTTP-date ("Wed, 01 May 2024 12:00:00 GMT", what
   the server writes) into *epoch_s, seconds since the epoch. Returns 0, or
   -1 when s is not one (*epoch_s is then unchanged). */
int sim_http_date_parse(const char *s, double *epoch_s);
/* Makes the connected socket fd send a TCP reset now instead of a FIN (the
   `reset` step). fd stays open; its owner closes it. */
void sim_tcp_reset(int fd);

/* --------------------------------------------- forwarding to an upstream */
/* sim/upstream.c: the forwarding rules of `fusebox record` and of the
   upstream{} step (docs/upstream.md), and one forwarded exchange. */

/*
 * Reduces an upstream URL to scheme://host[:port][/prefix] without a
 * trailing '/': http or https only, no user info, query or fragment.
 * Returns SIM_OK with *out (the caller frees it), or SIM_EINVAL (SIM_ENOMEM)
 * with the reason in err.
 */
int sim_upstream_base(const char *url, char **out, char err[SIM_ERRLEN]);
/*
 * Checks a request target and builds the URL forwarded to: base (from
 * sim_upstream_base) + target + query ("?a=b" or NULL). Only origin-form
 * targets are accepted: '/' followed by visible ASCII without '\\', so a
 * request can never pick another host ("@evil/", "//evil", absolute-form).
 * Returns SIM_OK with *url (the caller frees it), SIM_EINVAL, SIM_ENOMEM.
 */
int sim_upstream_target(const char *base, const char *target, const char *query, char **url);
/* 1 for a header a proxy never forwards either way: hop-by-hop headers
   (RFC 9110 7.6.1), Host, Content-Length, Expect, Accept-Encoding (bytes
   pass as they are) and Proxy-Authorization (for this hop only). */
int sim_upstream_hop_by_hop(const char *name);

/* One request forwarded to the upstream by a libcurl worker thread of its
   own; its answer is read as it arrives. Thread-safe. */
typedef struct sim_upx sim_upx;
typedef struct sim_upx_req {
  const char *method;
  const char *url;              /* from sim_upstream_target */
  const char *const *headers;   /* "Name: value" lines, already filtered by
                                   sim_upstream_hop_by_hop; copied */
  int nheaders;
  const char *body;             /* copied */
  size_t body_len;
  size_t keep;                  /* keep the first `keep` body bytes (a log) */
} sim_upx_req;
/* How a forwarded exchange ended, in the words of a log. */
enum {
  SIM_UPX_RUNNING = 0,
  SIM_UPX_OK,          /* the whole answer came */
  SIM_UPX_UNREACHABLE, /* no connection (refused, unresolved, TLS, connect timeout) */
  SIM_UPX_CLOSED,      /* the upstream closed the connection early */
  SIM_UPX_RESET,       /* ... with a reset, before any answer */
  SIM_UPX_TRUNCATED,   /* a body shorter than its head said */
  SIM_UPX_TIMEOUT      /* aborted (the client gave up, or a stop) */
};
/* What is known of an exchange, copied out under its lock. */
typedef struct sim_upx_info {
  int head;        /* the answer's head is in: status and headers below */
  int done;        /* the transfer is over: result below */
  int result;      /* SIM_UPX_* */
  long status;
  int stream;      /* the answer is text/event-stream */
  long long content_length; /* the head's Content-Length; -1 none */
  size_t received; /* body bytes received so far */
  double t_head, t_done; /* sim_now_ms() when they came */
} sim_upx_info;
#define SIM_UPX_MAX_HEADERS 128
/* Starts the worker. SIM_OK with *out, SIM_ENOMEM. The caller owns *out
   and releases it with sim_upx_free. */
int sim_upx_start(const sim_upx_req *req, sim_upx **out);
void sim_upx_info_get(sim_upx *x, sim_upx_info *out);
/* The answer's headers, once info.head: name/value pairs (copied into
   names[] and values[], which the caller frees); returns how many. */
int sim_upx_headers(sim_upx *x, char **names, char **values, int max);
/* Moves up to max received body bytes into buf. Returns the count, 0 when
   none is there yet, -1 at the end of the body (info.result says how). */
long sim_upx_read(sim_upx *x, char *buf, size_t max);
/* Waits up to ms for news (a head, bytes, the end) on x. */
void sim_upx_wait(sim_upx *x, int ms);
/* A copy of the kept body bytes (up to req.keep), NUL-terminated, and its
   length; NULL when none or out of memory. The caller frees it. */
char *sim_upx_kept(sim_upx *x, size_t *len);
/* Stops the transfer: the worker ends soon with SIM_UPX_TIMEOUT. */
void sim_upx_abort(sim_upx *x);
/* Aborts and releases x; with wait, returns once the worker has ended,
   else the worker frees x itself when it ends (an event loop must not
   block). NULL is a no-op. */
void sim_upx_free(sim_upx *x, int wait);
/* Waits up to ms for every worker still running (a released exchange's
   worker ends on its own once aborted: at most about a second) and returns
   how many remain; before libcurl's global cleanup. */
int sim_upx_drain(int ms);
/* The log's word for a result ("closed", "reset", "truncated",
   "timeout"; NULL for SIM_UPX_OK and SIM_UPX_RUNNING). Static. */
const char *sim_upx_result_name(int result);

#endif
