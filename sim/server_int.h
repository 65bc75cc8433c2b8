/*
 * server_int.h - what server.c (arrivals, routing, life cycle) and play.c
 * (carrying steps out on the wire) share about one connection.
 */
#ifndef FUSEBOX_SERVER_INT_H
#define FUSEBOX_SERVER_INT_H

#include <microhttpd.h>
#include <pthread.h>

#include "sim/sim_int.h"
#include "sim/stages.h"
#include "sim/state_int.h"

#define SIM_MAX_BODY (1024 * 1024)  /* larger request bodies get a 413 */
#define SIM_MAX_REQ_HEADERS 100     /* headers kept for the trace and Lua */
#define SIM_MAX_TEXT 4096           /* answer text kept for the trace */
#define SIM_MAX_RESP_HDRS (1u << 20) /* bytes of answer headers kept for the trace */
#define SIM_CONN_POOL (16 * 1024)   /* libmicrohttpd's memory per connection (headers) */
#define SIM_DRAIN_MS 250            /* at stop: the most a request in flight is waited for */

struct sim_server {
  sim_scenario *sc;
  int own_sc;         /* 1: loaded by the server and freed with it */
  sim_env env;        /* clocks: timers, the rate limiter, trace times */
  struct sim_loops *loops; /* the event loops and their daemons (loops.c) */
  struct sim_front *front; /* the listening socket, HTTP/1.1 and HTTP/2 (front.c) */
  sim_trace *trace;
  sim_waiter *waiter;
  sim_state *state;   /* attempts, ledger, rate limit: in process or Redis */
  char instance[64];  /* this server's name in a fleet's traces */
  double t0;          /* CLOCK_MONOTONIC ms at start */
  double scale;       /* time scale for every server-side delay */
  double wire;        /* factor of waits advised on the wire: scale with
                         scale_wire (sim.h), else 1 */
  int port;
  unsigned rid_salt;  /* makes request ids differ between sessions */
  long arrivals;      /* this view's, counted atomically */
  /* Sessions (session.c). With a control hook, each run of a session is a
     sim_server of its own, a "view": its scenario, state, trace tap, clock
     and counters, sharing the root's loops, waiter and port. The root is
     the default session's first run and owns what the views share. */
  sim_server *root;          /* the server that owns the loops (itself for the root) */
  struct sim_sessions *sessions; /* root: the session table; NULL = no sessions */
  sim_trace *trace_file;     /* root with sessions: the --trace file (trace is its tap) */
  int refs;                  /* views: connections + the table (under the table's lock) */
  long all_arrivals;         /* root: arrivals of every session (atomic) */
  long in_flight;            /* root: requests begun and not yet completed (atomic) */
  char *upstream;            /* root: serve --upstream, as sim_upstream_base
                                made it; NULL = none (upstream{} answers 502) */
  sim_control_fn control;    /* root: the control hook; NULL = no control API */
  void *control_arg;
};

typedef struct sim_player sim_player;

/* Everything the server knows about one request, from first byte to end. */
typedef struct sim_conn {
  sim_server *srv;
  struct MHD_Connection *mc;
  char *body;               /* request body, bounded by SIM_MAX_BODY */
  size_t body_len, body_cap;
  size_t body_seen;         /* body bytes received, kept or not (too_big) */
  long long content_length; /* the request's Content-Length, -1 without one
                               (read once, at its first callback) */
  int too_big;              /* body exceeded SIM_MAX_BODY */
  int phase;                /* 0 reading, 1 playing, 2 response queued */
  int direct;               /* answered by fusebox itself (control, a refused
                               session): no arrival, nothing in the trace */
  int refuse;               /* direct: the HTTP status of the refusal (0 = control) */
  const char *refuse_type;  /* direct: its error type (static) */
  char *refuse_msg;         /* direct: its message */
  size_t url_off;           /* bytes of a /__session/NAME prefix to skip */
  long id;                  /* arrival number */
  double t_arrive;
  char key[320];            /* logical request key */
  int attempt;
  int provider;             /* provider index, -1 effects, -2 no route */
  sim_dialect dialect;
  int stream_req;           /* the request asked for a stream */
  char *model;              /* model_small, or malloc'd when longer */
  char model_small[64];
  char path_model[128];     /* model or deployment named by the path */
  int path_stream;          /* the path asks for a stream (Gemini) */
  int ninputs;              /* embeddings: inputs in the request */
  char *offered;            /* "\nname\n..." tools the request offered, or NULL */
  int player_ntexts;        /* stream: chunks that carry text (tool deltas follow) */
  int tokens_in_est;
  char effect_name[128];    /* POST /v1/effects/{name} */
  char *lookup_key;         /* GET /v1/effects/{key} */
  char *idem_key;
  char rid[40];             /* request id sent to the client */
  int has_rl;               /* rl holds rate-limit headers to send */
  sim_rl_result rl;

  sim_step *root;           /* the decision; owned */
  const sim_step *cur;      /* the part being played (delay unwraps) */
  sim_wait wait;
  struct sim_loop *loop;    /* the event loop serving it (its thread) */
  int waiting;              /* suspended in the access handler */
  volatile int wake;        /* why the last wait ended (SIM_WAKE_*) */
  sim_player *player;       /* streams and early-close bodies */
  struct sim_upplay *up;    /* upstream{}: the forwarded attempt (play_upstream.c) */
  char *fwd_path;           /* upstream{}: the target forwarded (set at arrival) */
  sim_stamps stamps;        /* stages.h: bench builds only */

  /* What happened, for the `end` event. */
  const char *how;          /* NULL until decided; see docs/trace.md */
  sim_end_how ended;        /* how the player ended it (SIM_END_OPEN: it did not) */
  sim_sent sent;            /* what went out, for sim__end_state (status is c->status) */
  const char *step_name;
  int status;
  long bytes;
  char *resp_hdrs;          /* the answer's headers for the trace's end.headers,
                               redacted: "name\0value\0" pairs as sent */
  size_t resp_hdrs_len, resp_hdrs_cap;
  int has_ra;
  double retry_after_ms;
  int tokens_in, tokens_out;
  int chunks;
  int stalled;
  int no_end_marker;        /* a stream finished without [DONE] / message_stop */
  int no_finish;            /* ... and without its finish chunk (finish_reason / stop_reason) */
  double delay_ms;
  char *text;               /* answer text sent, bounded by SIM_MAX_TEXT; kept
                               only when traced (the end line is its reader) */
  size_t text_len, text_cap;
  int traced;               /* 1: its arrive line was written */
} sim_conn;

/* loops.c: the event loops, one thread and one libmicrohttpd daemon each,
   in external polling mode; each fires its connections' timers itself. */
typedef struct sim_loop sim_loop;
typedef struct sim_loops sim_loops;
/* Makes loop i's daemon (of n) with MHD_USE_EPOLL and no internal thread.
   listen_fd < 0 for the first, which opens the socket; for the others a
   descriptor of that socket the daemon takes over. NULL on failure. */
typedef struct MHD_Daemon *(*sim_daemon_fn)(void *arg, int i, int n, int listen_fd);
/* Starts n loops (1..SIM_LOOPS_MAX) whose timers are the waiter's owners
   1..n on env's clock (NULL: the real one). SIM_ELISTEN when a daemon
   could not be made. Caller owns *out (sim__loops_stop). */
int sim__loops_start(int n, sim_waiter *wt, const sim_env *env, sim_daemon_fn make, void *arg,
                     sim_loops **out);
#define SIM_LOOP_QUEUE 1024 /* sockets waiting to be added to one loop's daemon (a herd connects at once) */
/* Hands an accepted socket to the next loop (round robin), whose thread
   adds it to its daemon. 0, or -1 when that loop's queue is full (fd is
   closed). */
int sim__loops_add(sim_loops *all, int fd);

/* front.c: the server's listening socket, owned by fusebox so HTTP/2 and
   HTTP/1.1 share the port: its thread accepts, reads the first bytes
   without taking them (MSG_PEEK) and hands an HTTP/1.1 connection to a
   loop, an HTTP/2 one (the client preface) to a thread of h2_bridge.c
   whose streams reach the loops through socket pairs. */
typedef struct sim_front sim_front;
/* Listens on addr (port 0: a free one); SIM_ELISTEN when it cannot. */
int sim__front_start(const struct sockaddr *addr, socklen_t len, sim_loops *loops,
                     sim_front **out);
int sim__front_port(const sim_front *f);
/* Stops accepting and waits for its HTTP/2 connections to end (their
   sockets are shut first). NULL is a no-op. */
void sim__front_stop(sim_front *f);

/* 1 when mc is a stream front.c bridged from HTTP/2 (a socket pair's
   AF_UNIX peer), 0 for HTTP/1.1. */
int sim__conn_is_h2(struct MHD_Connection *mc);

/* The first loop's daemon (its port is the server's). */
struct MHD_Daemon *sim__loops_daemon(const sim_loops *all);
/* Stops the loops' threads, then their daemons (which end the connections
   still open, on the calling thread), and frees all. NULL is a no-op. */
void sim__loops_stop(sim_loops *all);
/* The loop the calling thread runs, or NULL off the loops. */
sim_loop *sim__loop_current(void);
/* l's owner number in the waiter (0 for NULL: the waiter thread's). */
int sim__loop_owner(const sim_loop *l);
/* Makes l run a turn soon (from another thread). NULL is a no-op. */
void sim__loop_kick(sim_loop *l);
/* Call after resuming one of l's connections, on any thread: l runs a turn
   without waiting (its own thread) or is kicked (another). NULL: no-op. */
void sim__loop_resumed(sim_loop *l);

/* conn.c: used by server.c and play.c alike. */
/* Milliseconds since the session started. */
double sim__srv_t(const sim_server *srv);
/* The server's monotonic clock in ms (its env's); due times of its waits
   are on it. */
double sim__srv_now(const sim_server *srv);
/* Suspends c until due_ms (< 0: until hang-up); the socket is watched for
   hang-up meanwhile. Why the wait ended is in c->wake when c resumes. */
void sim__conn_wait(sim_conn *c, double due_ms);
/* conn.c: 1 when c's peer has closed its side (nothing more to read): the
   socket is then shut for reading, so libmicrohttpd ends the request as a
   client abort at its next turn. For requests whose body is not all in.
   On a loop's thread the look is put off to the end of the loop's turn
   (sim__conn_turn_done), and made only if c's body is still not all in
   then; it returns 0. */
int sim__conn_peer_gone(sim_conn *c);
/* A zeroed sim_conn, from the calling loop's free list or calloc; NULL
   when out of memory. One from the free list may keep an empty body buffer
   (body set, body_cap its size, body_len 0). The caller owns it, and gives
   it back with sim__conn_release. */
sim_conn *sim__conn_new(void);
/* Gives back c's own block and its body buffer (what else it points to
   is the caller's to free first): to the calling loop's free list, or
   free(). NULL is a no-op. */
void sim__conn_release(sim_conn *c);
/* loops.c, after each turn of a loop: the looks sim__conn_peer_gone put
   off. */
void sim__conn_turn_done(void);
/* loops.c, as a loop's thread ends: its free list is freed and its
   put-off looks dropped. */
void sim__conn_loop_done(void);

/* MHD_OPTION_NOTIFY_CONNECTION (cls: the server): a new connection of a
   server that traces gets a header memo (hdr_memo.c) as its socket context;
   a socket MHD closes frees it and stops being watched for hang-up by the
   waiter. */
void sim__conn_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
                      enum MHD_ConnectionNotificationCode toe);
/* Appends answer text for the trace, bounded by SIM_MAX_TEXT. */
void sim__conn_add_text(sim_conn *c, const char *s);

/* hdr_memo.c: the arrive line's "headers" object remembered per keep-alive
   connection. */
typedef struct sim_hdr_memo sim_hdr_memo;
#define SIM_HDR_RAW_MAX 4096 /* raw header bytes a memo compares; more: none */
typedef struct sim_hdr_raw {
  size_t n;  /* bytes in use: name NUL value NUL, header after header */
  int over;  /* 1: more than SIM_HDR_RAW_MAX */
  char bytes[SIM_HDR_RAW_MAX];
} sim_hdr_raw;
sim_hdr_memo *sim__hdr_memo_new(void);
void sim__hdr_memo_free(sim_hdr_memo *m);
/* Reads the request's raw headers into r; when they are the ones m saw
   last (m not NULL), writes the JSON kept for them to w and returns 1. */
int sim__hdr_memo_hit(const sim_hdr_memo *m, struct MHD_Connection *mc, sim_hdr_raw *r,
                      struct sim_jw *w);
/* Keeps in m the JSON w holds from byte `at` on, as the object of the raw
   headers r (nothing when m is NULL, r was over, or the JSON is long). */
void sim__hdr_memo_keep(sim_hdr_memo *m, const sim_hdr_raw *r, const struct sim_jw *w,
                        size_t at);
/* Notes a response header (its value already redacted) for the trace's
   end.headers, bounded by SIM_MAX_RESP_HDRS bytes (past it, dropped). */
void sim__conn_note_header(sim_conn *c, const char *name, const char *value);
/* Writes the noted headers as a JSON object's members: a name noted twice
   once, with its last value, where it was last noted (as a header set
   again replaces the first). */
void sim__conn_write_headers(const sim_conn *c, struct sim_jw *w);
/* server.c: the shared state is out of reach: an `error` event (kind
   "state") in the trace and the fusebox error to the client. */
enum MHD_Result sim__state_fail(sim_conn *c, const char *why);

/* session_event.c: writes the `session` event that starts srv's trace (a
   no-op for a control server waiting for its scenario); called by server.c
   at start and by session.c for each new run. */
void sim__trace_session(sim_server *srv, uint64_t seed);

/* session.c: the session table of a server with a control hook. */
/* Makes root the default session's first run. SIM_ENOMEM. */
int sim__sessions_new(sim_server *root);
/* Releases every view but the root; after the daemon stopped. */
void sim__sessions_free(sim_server *root);
/* Routes a new connection (first call, headers in): sets c->srv to the view
   of its session with a reference taken, c->url_off past a /__session/NAME
   prefix, or marks it direct (control, or a refusal in c->refuse). */
void sim__session_route(sim_conn *c, const char *url);
/* Drops the connection's reference on its view (frees a retired view). */
void sim__session_unref(sim_server *view);

/* control_http.c: answers a direct connection once its body is in: the
   control hook's answer, or the refusal. */
enum MHD_Result sim__direct_answer(sim_conn *c, const char *method, const char *url);

/* server.c: what arrive() reads of a request before keying it: the
   provider and dialect its path selects (c->srv->sc's providers), the
   model and stream flag (body, else path), the tools offered and the
   inputs counted. c->body/body_len are read, c->model and c->offered set
   (owned by c). Also the seam fuzz/fuzz_api.c feeds requests through. */
void sim__request_read(sim_conn *c, const char *method, const char *url);

/* body_scan.c: a request body's top-level fields as cJSON's lookups
   would find them (the first member of each name), without its tree.
   Returns 1 when they were read, with model pointing into body (NULL
   when absent or not a string); 0 when the body must be left to cJSON
   (not strict JSON, an object offering tools, and the other cases the
   file lists). */
typedef struct {
  int has_model, has_stream, has_input;
  const char *model; /* not NUL-terminated: model_len bytes */
  size_t model_len;
  int stream;  /* 1: "stream": true */
  int input_n; /* elements of an "input" array, else -1 */
} sim_body_fields;
int sim__body_scan(const char *body, size_t len, sim_body_fields *out);

/* tools_trace.c: tool calls in the trace. */
void sim__offered_tools(sim_conn *c, const cJSON *body);
/* The end event's tool_calls array, or NULL; owned by the caller. */
cJSON *sim__trace_tools(const sim_conn *c);
/* One entry of that array: a tool call the client received, its arguments
   judged "valid", "invalid" or "cut" (args), the argument text as answered
   (arguments, redacted) and as received (sent bytes of it, fingerprinted),
   and whether the request offered its tool. Owned by the caller. */
cJSON *sim__trace_tool_entry(const sim_conn *c, const char *id, const char *name,
                             const char *args, const char *arguments, size_t sent);
/* play_upstream.c: the tool calls of a real answer (upstream{}), or NULL. */
cJSON *sim__upplay_tools(const sim_conn *c);

#endif
