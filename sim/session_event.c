/*
 * session_event.c - the `session` event that starts a trace (docs/trace.md):
 * written by the server when it starts (server.c) and by each new run of a
 * session (session.c). Its own file so that neither of those calls the other
 * back.
 */
#include <time.h>

#include <cjson/cJSON.h>

#include "sim/server_int.h"

/* The `session` event that starts a session's trace; see server_int.h. */
void sim__trace_session(sim_server *srv, uint64_t seed) {
  if (srv->sc == NULL) return; /* a control server waiting for its scenario */
  cJSON *ev = sim__trace_event("session", 0);
  if (ev == NULL) return;
  cJSON_AddNumberToObject(ev, "version", 1);
  cJSON_AddStringToObject(ev, "scenario", sim__scenario_name(srv->sc));
  cJSON_AddStringToObject(ev, "file", sim__scenario_path(srv->sc));
  cJSON_AddNumberToObject(ev, "time_scale", srv->scale);
  char start[32];
  time_t now = (time_t)(sim__env_wall_s(&srv->env) - srv->state->age_ms / 1000.0);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(ev, "start", start);
  cJSON_AddNumberToObject(ev, "port", srv->port);
  cJSON_AddNumberToObject(ev, "seed", (double)seed);
  if (srv->state->session[0]) { /* one of a fleet: `report` merges its traces */
    cJSON *f = cJSON_AddObjectToObject(ev, "fleet");
    cJSON_AddStringToObject(f, "session", srv->state->session);
    cJSON_AddStringToObject(f, "instance", srv->instance);
    cJSON_AddStringToObject(f, "state", "redis");
  }
  const char *js[2] = {sim__scenario_expect_json(srv->sc), sim__scenario_client_json(srv->sc)};
  const char *names[2] = {"expect", "client"};
  for (int i = 0; i < 2; i++) {
    cJSON *j = js[i] ? cJSON_Parse(js[i]) : NULL;
    if (j) cJSON_AddItemToObject(ev, names[i], j);
  }
  sim__trace_emit(srv->trace, ev);
}
