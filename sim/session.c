/*
 * session.c - the sessions of one server (a server started with a control
 * hook; docs/control.md): which session a request belongs to, and each
 * session's current run.
 *
 * A run is a "view": a sim_server of its own with its scenario, attempt
 * counters, ledger, rate limiter (its state), trace tap and clock, sharing
 * the root's loops, waiter and port, so play.c and server.c serve it as
 * they serve any server. A connection holds a reference on the view it
 * arrived at, so starting a session afresh (PUT, reset) never frees what an
 * in-flight request still plays: the old view is retired, and freed by
 * its last connection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/server_int.h"

#define SESSION_PREFIX "/__session/"
/* Runs a PUT or reset replaced that requests still use, kept per session:
   each holds its scenario (its Lua states) until its last request ends, so
   15 PUTs under hanging requests took a server from 50 to 398 MB (issue
   29). Beyond this, the oldest one's waiting requests end as `shutdown`. */
#define RETIRED_MAX 4
#define CONTROL_PREFIX "/__fusebox/"

typedef struct sim_session {
  char name[SIM_SESSION_NAME_MAX + 1];
  sim_server *view; /* the current run; the table holds one reference */
  sim_server *retired[RETIRED_MAX]; /* replaced runs still in use, oldest first */
  int nretired;
} sim_session;

struct sim_sessions {
  pthread_mutex_t lock;       /* the table and every view's refs */
  sim_session s[SIM_MAX_SESSIONS];
  int n;                      /* s[0] is `default` */
  unsigned runs;              /* views made so far (request id salts) */
};

/* 1 when name is a good session name; see sim.h. */
int sim_session_name_ok(const char *name) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0 || n > SIM_SESSION_NAME_MAX) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = name[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '.' || ch == '_' || ch == '-'))
      return 0;
  }
  return 1;
}

/* Makes root the default session's first run. */
int sim__sessions_new(sim_server *root) {
  struct sim_sessions *t = calloc(1, sizeof *t);
  if (t == NULL) return SIM_ENOMEM;
  pthread_mutex_init(&t->lock, NULL);
  snprintf(t->s[0].name, sizeof t->s[0].name, "default");
  t->s[0].view = root; /* the root is never freed before the server */
  t->n = 1;
  root->sessions = t;
  return SIM_OK;
}

/* Releases a view that nobody uses any more (never the root). */
static void view_free(sim_server *v) {
  if (v == NULL || v == v->root) return;
  sim__trace_close(v->trace);
  sim__state_free(v->state);
  sim__scenario_free(v->sc);
  free(v);
}

/* Releases every view but the root; see server_int.h. */
void sim__sessions_free(sim_server *root) {
  struct sim_sessions *t = root->sessions;
  if (t == NULL) return;
  for (int i = 0; i < t->n; i++) view_free(t->s[i].view);
  pthread_mutex_destroy(&t->lock);
  free(t);
  root->sessions = NULL;
}

/* Drops one reference on v (under the table lock); returns v when it is
   now unused and must be freed (outside the lock), else NULL. */
static sim_server *drop_ref(sim_server *v) {
  if (v == v->root) return NULL;
  return --v->refs == 0 ? v : NULL;
}

/* Forgets v in the retired lists (under the lock): it is being freed. */
static void forget_retired(struct sim_sessions *t, const sim_server *v) {
  for (int i = 0; i < t->n; i++)
    for (int k = 0; k < t->s[i].nretired; k++)
      if (t->s[i].retired[k] == v) {
        memmove(&t->s[i].retired[k], &t->s[i].retired[k + 1],
                (size_t)(t->s[i].nretired - k - 1) * sizeof t->s[i].retired[0]);
        t->s[i].nretired--;
        return;
      }
}

/* Drops a connection's reference; see server_int.h. */
void sim__session_unref(sim_server *v) {
  if (v == NULL || v == v->root) return;
  struct sim_sessions *t = v->root->sessions;
  pthread_mutex_lock(&t->lock);
  sim_server *dead = drop_ref(v);
  if (dead != NULL) forget_retired(t, dead);
  pthread_mutex_unlock(&t->lock);
  view_free(dead);
}

/* sim__waiter_wake_if: a wait of a connection of run ctx. Compares
   pointers only (the run may be freed as soon as its requests end). */
static int of_run(void *arg, void *ctx) { return ((const sim_conn *)arg)->srv == ctx; }

/*
 * A new run of session name playing sc (taken): its own state, a trace
 * tap on the root's file (lines marked with the session's name unless it
 * is `default`), its clock started now, and its `session` event written.
 * Returns NULL with the reason in err.
 */
static sim_server *view_new(sim_server *root, const char *name, sim_scenario *sc,
                            char err[SIM_ERRLEN]) {
  sim_server *v = calloc(1, sizeof *v);
  if (v == NULL) {
    sim__scenario_free(sc);
    snprintf(err, SIM_ERRLEN, "out of memory");
    return NULL;
  }
  v->root = root;
  v->sc = sc;
  v->own_sc = 1;
  v->env = root->env;
  v->loops = root->loops;
  v->waiter = root->waiter;
  v->scale = root->scale;
  v->wire = root->wire;
  v->port = root->port;
  snprintf(v->instance, sizeof v->instance, "%s", root->instance);
  pthread_mutex_lock(&root->sessions->lock);
  unsigned run = ++root->sessions->runs;
  pthread_mutex_unlock(&root->sessions->lock);
  v->rid_salt = root->rid_salt ^ (run * 2654435761u);
  int is_default = strcmp(name, "default") == 0;
  int rc = sim__trace_tap_new(root->trace_file, is_default ? NULL : name,
                              SIM_SESSION_TRACE_MAX, &v->trace);
  if (rc == SIM_OK) {
    sim_server_opts o = {.seed = 0}; /* in process: sessions never use --state */
    rc = sim__state_open(&o, sc, v->scale, &v->env, &v->state, err);
  }
  if (rc != SIM_OK) {
    if (err[0] == '\0') snprintf(err, SIM_ERRLEN, "%s", sim_strerror(rc));
    view_free(v);
    return NULL;
  }
  v->t0 = sim__srv_now(v);
  return v;
}

/* The index of session name, or -1. Under the lock. */
static int find(const struct sim_sessions *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->s[i].name, name) == 0) return i;
  return -1;
}

enum { RESET = 0, PUT, JOIN }; /* how install treats a session that is there or not */

/*
 * Makes v (a fresh view) the current run of session name: RESET needs the
 * session, PUT creates or replaces it, JOIN creates it only when new (else
 * v is dropped: another request made it first). Returns SIM_OK, SIM_ENOENT,
 * SIM_EFULL; on failure v is freed. The old run is retired (freed now when
 * no connection holds it). The new run's `session` event is written before
 * any request can reach it.
 */
static int install(sim_server *root, const char *name, sim_server *v, int how,
                   char err[SIM_ERRLEN]) {
  struct sim_sessions *t = root->sessions;
  sim_server *dead = NULL, *evict = NULL;
  int rc = SIM_OK;
  pthread_mutex_lock(&t->lock);
  int i = find(t, name);
  if (i < 0 && how == RESET) {
    rc = SIM_ENOENT;
  } else if (i >= 0 && how == JOIN) {
    dead = v; /* lost a race: the session is there */
  } else if (i < 0 && t->n >= SIM_MAX_SESSIONS) {
    rc = SIM_EFULL;
  } else {
    if (i < 0) {
      i = t->n++;
      snprintf(t->s[i].name, sizeof t->s[i].name, "%s", name);
    } else {
      sim_server *old = t->s[i].view;
      dead = drop_ref(old);
      if (dead == NULL && old != root) { /* still in use: retired, bounded */
        sim_session *ss = &t->s[i];
        if (ss->nretired == RETIRED_MAX) {
          evict = ss->retired[0]; /* its requests end below; it is freed by the last */
          memmove(&ss->retired[0], &ss->retired[1], (RETIRED_MAX - 1) * sizeof ss->retired[0]);
          ss->nretired--;
        }
        ss->retired[ss->nretired++] = old;
      }
    }
    v->refs = 1;
    t->s[i].view = v;
    sim__trace_session(v, sim__scenario_seed(v->sc));
  }
  pthread_mutex_unlock(&t->lock);
  if (rc == SIM_ENOENT) snprintf(err, SIM_ERRLEN, "no session named '%s'", name);
  if (rc == SIM_EFULL)
    snprintf(err, SIM_ERRLEN, "this server holds %d sessions already (the limit)",
             SIM_MAX_SESSIONS);
  if (rc != SIM_OK) {
    view_free(v);
    return rc;
  }
  view_free(dead);
  if (evict != NULL) (void)sim__waiter_wake_if(root->waiter, of_run, evict, SIM_WAKE_SHUTDOWN);
  return SIM_OK;
}

/* Starts session name afresh with sc; see sim.h. */
int sim_server_session_put(sim_server *srv, const char *name, sim_scenario *sc,
                           char err[SIM_ERRLEN]) {
  err[0] = '\0';
  if (srv == NULL || srv->sessions == NULL || !sim_session_name_ok(name) || sc == NULL) {
    sim__scenario_free(sc);
    snprintf(err, SIM_ERRLEN, "bad session name or a server without sessions");
    return SIM_EINVAL;
  }
  if (sim__scenario_claim(sc) != SIM_OK) {
    sim__scenario_free(sc);
    snprintf(err, SIM_ERRLEN, "the scenario is served already");
    return SIM_EINVAL;
  }
  sim_server *v = view_new(srv, name, sc, err);
  if (v == NULL) return SIM_ENOMEM;
  return install(srv, name, v, PUT, err);
}

/* The scenario of session name's current run with a reference on that run
   taken (*held, to drop with sim__session_unref), or NULL. */
static sim_scenario *current(sim_server *root, const char *name, sim_server **held) {
  struct sim_sessions *t = root->sessions;
  *held = NULL;
  pthread_mutex_lock(&t->lock);
  int i = find(t, name);
  sim_server *v = i >= 0 ? t->s[i].view : NULL;
  if (v != NULL && v != root) v->refs++;
  pthread_mutex_unlock(&t->lock);
  *held = v;
  return v ? v->sc : NULL;
}

/* A fresh copy of sc for a new run, claimed. NULL with err on failure. */
static sim_scenario *fresh_copy(const sim_scenario *sc, char err[SIM_ERRLEN]) {
  sim_scenario *copy = NULL;
  if (sim__scenario_clone(sc, &copy, err) != SIM_OK) return NULL;
  (void)sim__scenario_claim(copy);
  return copy;
}

/* Starts session name afresh with its scenario; see sim.h. */
int sim_server_session_reset(sim_server *srv, const char *name, char err[SIM_ERRLEN]) {
  err[0] = '\0';
  if (srv == NULL || srv->sessions == NULL || name == NULL) {
    snprintf(err, SIM_ERRLEN, "a server without sessions");
    return SIM_EINVAL;
  }
  sim_server *held = NULL;
  sim_scenario *sc = current(srv, name, &held);
  if (held == NULL) {
    snprintf(err, SIM_ERRLEN, "no session named '%s'", name);
    return SIM_ENOENT;
  }
  if (sc == NULL) { /* `default` with no scenario yet: nothing to start */
    sim__session_unref(held);
    return SIM_OK;
  }
  sim_scenario *copy = fresh_copy(sc, err);
  sim__session_unref(held);
  if (copy == NULL) return SIM_ENOMEM;
  sim_server *v = view_new(srv, name, copy, err);
  if (v == NULL) return SIM_ENOMEM;
  return install(srv, name, v, RESET, err);
}

/* The trace lines of a session's current run; see sim.h. */
int sim_server_session_trace(sim_server *srv, const char *name, char **text, size_t *len,
                             int *full) {
  *text = NULL;
  *len = 0;
  *full = 0;
  if (srv == NULL || srv->sessions == NULL) return SIM_EINVAL;
  sim_server *held = NULL;
  (void)current(srv, name, &held);
  if (held == NULL) return SIM_ENOENT;
  int rc = sim__trace_tap_copy(held->trace, text, len, full);
  sim__session_unref(held);
  return rc;
}

/* The names of the sessions; see sim.h. */
int sim_server_session_names(sim_server *srv, char (*names)[SIM_SESSION_NAME_MAX + 1],
                             int cap) {
  if (srv == NULL || srv->sessions == NULL) return 0;
  struct sim_sessions *t = srv->sessions;
  pthread_mutex_lock(&t->lock);
  int n = t->n;
  for (int i = 0; i < n && i < cap; i++) memcpy(names[i], t->s[i].name, sizeof names[i]);
  pthread_mutex_unlock(&t->lock);
  return n;
}

/* ------------------------------------------------------------- routing */

/* Marks c answered by fusebox itself with status, type and message. */
static void refuse(sim_conn *c, int status, const char *type, const char *fmt,
                   const char *arg) {
  char msg[SIM_ERRLEN + 128];
  snprintf(msg, sizeof msg, fmt, arg);
  c->direct = 1;
  c->refuse = status;
  c->refuse_type = type;
  c->refuse_msg = strdup(msg);
}

/*
 * The view of session name with a reference taken, creating the session
 * (a fresh copy of the default session's scenario) on its first request.
 * NULL when refused (c says why).
 */
static sim_server *join(sim_conn *c, sim_server *root, const char *name) {
  struct sim_sessions *t = root->sessions;
  pthread_mutex_lock(&t->lock);
  int i = find(t, name);
  sim_server *v = i >= 0 ? t->s[i].view : NULL;
  if (v != NULL && v != root) v->refs++;
  pthread_mutex_unlock(&t->lock);
  if (v == NULL) {
    /* A new session plays a fresh copy of the default session's scenario. */
    sim_server *held = NULL;
    sim_scenario *def = current(root, "default", &held);
    char err[SIM_ERRLEN] = "";
    sim_scenario *copy = def ? fresh_copy(def, err) : NULL;
    sim__session_unref(held);
    if (def == NULL) {
      refuse(c, 503, "fusebox_no_scenario",
             "fusebox: session '%s' has no scenario and neither has the default session: "
             "PUT one to /__fusebox/scenario first.", name);
      return NULL;
    }
    sim_server *nv = copy ? view_new(root, name, copy, err) : NULL;
    if (nv == NULL) {
      refuse(c, 500, "fusebox_error", "fusebox: cannot start a session: %s", err);
      return NULL;
    }
    if (install(root, name, nv, JOIN, err) == SIM_EFULL) {
      refuse(c, 503, "fusebox_too_many_sessions", "fusebox: %s", err);
      return NULL;
    }
    /* Installed by us or, in a race, by another request: take the current. */
    pthread_mutex_lock(&t->lock);
    i = find(t, name);
    v = i >= 0 ? t->s[i].view : NULL;
    if (v != NULL && v != root) v->refs++;
    pthread_mutex_unlock(&t->lock);
    if (v == NULL) {
      refuse(c, 500, "fusebox_error", "fusebox: session '%s' vanished", name);
      return NULL;
    }
  }
  if (v->sc == NULL) {
    sim__session_unref(v);
    refuse(c, 503, "fusebox_no_scenario",
           "fusebox: session '%s' has no scenario: PUT one to /__fusebox/scenario first.",
           name);
    return NULL;
  }
  return v;
}

/* Routes a new connection to its session; see server_int.h. */
void sim__session_route(sim_conn *c, const char *url) {
  sim_server *root = c->srv;
  if (strncmp(url, CONTROL_PREFIX, strlen(CONTROL_PREFIX)) == 0 && root->control != NULL) {
    c->direct = 1; /* a control request: the hook answers */
    return;
  }
  char name[SIM_SESSION_NAME_MAX + 2] = "default";
  size_t plen = strlen(SESSION_PREFIX);
  if (strncmp(url, SESSION_PREFIX, plen) == 0) {
    const char *p = url + plen;
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > SIM_SESSION_NAME_MAX) len = SIM_SESSION_NAME_MAX + 1; /* too long */
    memcpy(name, p, len);
    name[len] = '\0';
    c->url_off = plen + (end ? (size_t)(end - p) : strlen(p));
  } else {
    const char *h = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "X-Fusebox-Session");
    if (h != NULL) {
      size_t len = strlen(h);
      if (len > SIM_SESSION_NAME_MAX) len = SIM_SESSION_NAME_MAX + 1;
      memcpy(name, h, len);
      name[len] = '\0';
    }
  }
  if (!sim_session_name_ok(name)) {
    refuse(c, 400, "fusebox_bad_session",
           "fusebox: a session name is 1 to 64 of A-Z a-z 0-9 . _ - (got '%.80s')", name);
    return;
  }
  sim_server *v = join(c, root, name);
  if (v != NULL) c->srv = v;
}
