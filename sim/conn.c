/*
 * conn.c - what both the arrival side (server.c) and the player (play.c)
 * do to one connection: the session clock, suspending on the waiter, and
 * keeping the answer text for the trace. It calls neither of them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sim/json_write_int.h"
#include "sim/server_int.h"

/* Milliseconds since the session started. */
double sim__srv_t(const sim_server *srv) { return sim__srv_now(srv) - srv->t0; }

/* The server's monotonic clock in ms (its env's). */
double sim__srv_now(const sim_server *srv) { return sim__env_now_ms(&srv->env); }

/* Resumes c and makes its loop answer it: on the loop's own thread (a
   timer, an earlier hang-up) in its next turn, from another thread (a
   hang-up, shutdown) by waking it. */
static void resume(sim_conn *c) {
  sim_loop *l = c->loop;
  SIM_STAGE_CALL(MHD_resume_connection(c->mc)); /* c may be gone once it returns */
  sim__loop_resumed(l);
}

static void on_wake(void *arg, int reason) {
  sim_conn *c = arg;
  SIM_STAGE(c, fire);
  c->wake = reason;
  resume(c);
}

/* Suspends c until due_ms (< 0: until the peer hangs up or shutdown). */
void sim__conn_wait(sim_conn *c, double due_ms) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  int fd = ci ? ci->connect_fd : -1;
  c->wake = 0;
  c->loop = sim__loop_current();
  SIM_STAGE_SET(c, arrive, c->t_arrive + c->srv->t0);
  SIM_STAGE(c, suspend);
  SIM_STAGE_SET(c, due, due_ms);
  /* Suspend before registering, so a resume can never come first. */
  MHD_suspend_connection(c->mc);
  if (sim__waiter_add_on(c->srv->waiter, sim__loop_owner(c->loop), &c->wait, due_ms, fd,
                         on_wake, c) != SIM_OK) {
    c->wake = SIM_WAKE_SHUTDOWN;
    resume(c);
  }
}

/*
 * A request whose body is still to come, when its peer has already closed
 * (an aborted upload), is closed now rather than at libmicrohttpd's
 * connection timeout. libmicrohttpd 0.9.75's epoll mode is edge-triggered
 * and takes a short read for "nothing more to read": when the end of the
 * stream came in the same edge as the last bytes it read, it never reads
 * again, and the socket sat in CLOSE-WAIT for 300 s (issue 29 item 1;
 * `record`, thread per connection with poll, reads until the end). A peek
 * that finds the end shuts reading down on our side, which wakes the epoll
 * set once more: libmicrohttpd reads, gets the end and closes the request
 * as client_abort. Body bytes it holds already are still handed over first,
 * so a complete request from a peer that half-closed is still answered.
 * Returns 1 when the end was found.
 */
static int peek_now(sim_conn *c) {
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(c->mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci == NULL || ci->connect_fd < 0) return 0;
  char b;
  if (recv(ci->connect_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) != 0) return 0; /* data, or none yet */
  (void)shutdown(ci->connect_fd, SHUT_RD);
  return 1;
}

/*
 * A loop's own blocks and put-off looks (issue 30). Every request with a
 * body was peeked in its header callback: one system call per request more
 * than libmicrohttpd itself makes (bench/counters.sh), though by the end of
 * the turn the common request is whole and answered. So on a loop's thread
 * the look waits for the end of the turn and is made only for a request
 * still reading its body then: libmicrohttpd has read what the socket's
 * edge gave it, and an end of stream in that edge is still found (the peek
 * sees it, the shutdown wakes the loop). A connection released before
 * that is dropped from the list. Off the loops (shutdown's last turns) the
 * look is made at once, as before.
 *
 * sim_conn is 1.6 KB, above glibc's per-thread cache: calloc took its
 * large-bin path and consolidated the fast bins on every request. A loop
 * keeps up to CONN_CACHE released blocks instead.
 */
#define CONN_CACHE 32
#define PEEK_MAX 64
static __thread sim_conn *tl_free[CONN_CACHE];
static __thread int tl_nfree;
static __thread sim_conn *tl_peek[PEEK_MAX];
static __thread int tl_npeek;

int sim__conn_peer_gone(sim_conn *c) {
  if (sim__loop_current() != NULL && tl_npeek < PEEK_MAX) {
    for (int i = 0; i < tl_npeek; i++)
      if (tl_peek[i] == c) return 0;
    tl_peek[tl_npeek++] = c;
    return 0;
  }
  return peek_now(c);
}

/* The put-off looks, for the requests still reading their body. */
void sim__conn_turn_done(void) {
  int n = tl_npeek;
  tl_npeek = 0;
  for (int i = 0; i < n; i++)
    if (tl_peek[i]->phase == 0) (void)peek_now(tl_peek[i]);
}

/* A kept block keeps its body buffer up to this size (a malloc and a free
   a request fewer; 32 blocks a loop hold at most 512 KiB of them). */
#define BODY_KEEP (16u << 10)

sim_conn *sim__conn_new(void) {
  if (tl_nfree > 0) {
    sim_conn *c = tl_free[--tl_nfree];
    char *body = c->body;
    size_t cap = c->body_cap;
    memset(c, 0, sizeof *c);
    c->body = body; /* empty: body_len is 0 */
    c->body_cap = cap;
    return c;
  }
  return calloc(1, sizeof(sim_conn));
}

void sim__conn_release(sim_conn *c) {
  if (c == NULL) return;
  for (int i = 0; i < tl_npeek; i++)
    if (tl_peek[i] == c) {
      tl_peek[i] = tl_peek[--tl_npeek];
      break;
    }
  if (sim__loop_current() != NULL && tl_nfree < CONN_CACHE) {
    if (c->body_cap > BODY_KEEP) {
      free(c->body);
      c->body = NULL;
      c->body_cap = 0;
    }
    tl_free[tl_nfree++] = c;
    return;
  }
  free(c->body);
  free(c);
}

void sim__conn_loop_done(void) {
  while (tl_nfree > 0) {
    sim_conn *c = tl_free[--tl_nfree];
    free(c->body);
    free(c);
  }
  tl_npeek = 0;
}

/* MHD_OPTION_NOTIFY_CONNECTION: the header memo of a traced server's
   connection made and freed; a closing socket is no longer watched. */
void sim__conn_notify(void *cls, struct MHD_Connection *mc, void **socket_context,
                      enum MHD_ConnectionNotificationCode toe) {
  sim_server *srv = cls;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    /* sessions may trace to their own files or taps */
    if (sim__trace_on(srv->trace) || srv->sessions != NULL) *socket_context = sim__hdr_memo_new();
    return;
  }
  if (toe != MHD_CONNECTION_NOTIFY_CLOSED) return;
  sim__hdr_memo_free(*socket_context);
  *socket_context = NULL;
  const union MHD_ConnectionInfo *ci =
      MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (ci != NULL) sim__waiter_forget(srv->waiter, ci->connect_fd);
}

/* Notes a response header for the trace; see server_int.h. */
void sim__conn_note_header(sim_conn *c, const char *name, const char *value) {
  size_t n = strlen(name) + 1, v = strlen(value) + 1;
  if (n + v > SIM_MAX_RESP_HDRS - c->resp_hdrs_len) return;
  if (c->resp_hdrs_len + n + v > c->resp_hdrs_cap) {
    size_t cap = c->resp_hdrs_cap ? c->resp_hdrs_cap * 2 : 256;
    while (cap < c->resp_hdrs_len + n + v) cap *= 2;
    char *p = realloc(c->resp_hdrs, cap);
    if (p == NULL) return;
    c->resp_hdrs = p;
    c->resp_hdrs_cap = cap;
  }
  memcpy(c->resp_hdrs + c->resp_hdrs_len, name, n);
  memcpy(c->resp_hdrs + c->resp_hdrs_len + n, value, v);
  c->resp_hdrs_len += n + v;
}

/* Writes the noted headers; see server_int.h. */
void sim__conn_write_headers(const sim_conn *c, sim_jw *w) {
  const char *end = c->resp_hdrs + c->resp_hdrs_len;
  for (const char *p = c->resp_hdrs; p != NULL && p < end;) {
    const char *name = p, *value = p + strlen(p) + 1;
    p = value + strlen(value) + 1;
    int again = 0; /* noted again later: that one is written */
    for (const char *q = p; q < end && !again; q += strlen(q) + 1, q += strlen(q) + 1)
      again = strcmp(q, name) == 0;
    if (!again) sim__jw_kstr(w, name, value);
  }
}

/* Appends answer text for the trace, bounded by SIM_MAX_TEXT. The end
   line is its only reader, so a request whose arrival was not traced keeps
   none (issue 30: a copy and a malloc a request for nobody). */
void sim__conn_add_text(sim_conn *c, const char *s) {
  if (!c->traced) return;
  size_t len = strlen(s);
  if (c->text_len + len > SIM_MAX_TEXT) len = SIM_MAX_TEXT - c->text_len;
  if (c->text == NULL || c->text_len + len > c->text_cap) {
    size_t cap = c->text_len + len;
    if (cap < 64) cap = 64;
    if (cap < c->text_cap * 2) cap = c->text_cap * 2;
    if (cap > SIM_MAX_TEXT) cap = SIM_MAX_TEXT;
    char *nt = realloc(c->text, cap + 1);
    if (nt == NULL) return;
    c->text = nt;
    c->text_cap = cap;
  }
  memcpy(c->text + c->text_len, s, len);
  c->text_len += len;
  c->text[c->text_len] = '\0';
}
