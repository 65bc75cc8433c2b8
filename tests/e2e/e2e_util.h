/*
 * e2e_util.h - end-to-end helpers: a server started in-process on an
 * ephemeral port from scenario text, a libcurl client that reports how the
 * connection ended, and the trace read back as JSON.
 */
#ifndef FUSEBOX_E2E_UTIL_H
#define FUSEBOX_E2E_UTIL_H

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stddef.h>

#include "sim/sim.h"

typedef struct e2e_server {
  sim_server *srv;
  int port;
  char scenario_path[64];
  char trace_path[64];
  cJSON *trace;  /* array of events, filled by e2e_stop */
} e2e_server;

typedef struct e2e_resp {
  CURLcode rc;       /* CURLE_OK, CURLE_GOT_NOTHING (dropped), ... */
  long status;
  char *headers;     /* raw response headers, lower-cased */
  char *body;
  size_t body_len;
  double elapsed_ms;
} e2e_resp;

/* Starts a server playing scenario text; NULL (with a CUnit failure) on error. */
e2e_server *e2e_start(const char *lua, double time_scale);
/* As e2e_start, on the clocks of env (copied; NULL = the real ones). */
e2e_server *e2e_start_env(const char *lua, double time_scale, const sim_env *env);
/* As e2e_start_env, with `loops` event loops (0 = one per core). */
e2e_server *e2e_start_loops(const char *lua, double time_scale, const sim_env *env, int loops);
/* Stops the server and reads its trace into s->trace. */
void e2e_stop(e2e_server *s);
void e2e_free(e2e_server *s);

/* One request. extra_headers: NULL-terminated "Name: value" strings. */
void e2e_request(e2e_server *s, const char *method, const char *path, const char *body,
                 const char *const *extra_headers, long timeout_ms, e2e_resp *out);
/* A POST to the OpenAI or Anthropic chat endpoint with a small body. */
void e2e_chat(e2e_server *s, const char *path, int stream, long timeout_ms, e2e_resp *out);
void e2e_resp_clear(e2e_resp *r);

/* The value of a response header (name lower-case), or NULL. Static buffer.
   Every helper here takes NULL (a server that did not start, an event not
   in the trace) and gives NULL or -1 back; the string assertions fail on
   NULL (tests/test_check.h) rather than crash the runner. */
const char *e2e_header(const e2e_resp *r, const char *name);

/* The nth (from 0) trace event of kind ev, or NULL. */
cJSON *e2e_event(const e2e_server *s, const char *ev, int nth);
int e2e_count(const e2e_server *s, const char *ev);
/* The `end` event of the nth (from 0) arrival: ends of different
   connections may be written in another order than their arrivals. */
cJSON *e2e_end_of(const e2e_server *s, int nth);
/* A string or number field of an event (number printed as %g). */
const char *e2e_str(const cJSON *ev, const char *field);
double e2e_num(const cJSON *ev, const char *field);



/* Polls the trace file until it holds n events of kind ev (bounded wait for
   an event, not a sleep to test timing). Returns 1 when found. */
int e2e_wait_trace(e2e_server *s, const char *ev, int n, long timeout_ms);
#endif
