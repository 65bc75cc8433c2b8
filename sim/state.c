/*
 * state.c - what every state backend shares: release and the fusebox error
 * a server answers with when its state is out of reach.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/state_int.h"

/* Releases the state, its limiter included; NULL is a no-op. */
void sim__state_free(sim_state *st) {
  if (st == NULL) return;
  sim_ratelimit *rl = st->rl;
  st->ops->free(st);
  sim__ratelimit_free(rl);
}

/* The fusebox error for an unreachable state; see state_int.h. */
sim_step *sim__state_error_step(const char *why) {
  sim_step *s = sim__step_new(SIM_STEP_FAIL);
  if (s == NULL) return NULL;
  char msg[SIM_ERRLEN + 160];
  snprintf(msg, sizeof msg,
           "fusebox error, not the provider: the shared state is unavailable (%s). "
           "This run is invalid.", why && why[0] ? why : "no reason given");
  s->status = 500;
  s->code = strdup("fusebox_state_unavailable");
  s->type = strdup("fusebox_state_unavailable");
  s->message = strdup(msg);
  s->headers = calloc(1, sizeof *s->headers);
  if (s->headers != NULL) {
    s->headers[0].name = strdup("X-Fusebox-Error");
    s->headers[0].value = strdup("state_unavailable");
    s->nheaders = 1;
  }
  if (s->code == NULL || s->type == NULL || s->message == NULL || s->headers == NULL ||
      s->headers[0].name == NULL || s->headers[0].value == NULL) {
    sim__step_free(s);
    return NULL;
  }
  return s;
}

/* The state the options ask for; see state_int.h. */
int sim__state_open(const sim_server_opts *o, sim_scenario *sc, double scale,
                    const sim_env *env, sim_state **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  sim_ratelimit *rl = NULL;
  int rc = sim__ratelimit_new(sim__scenario_ratelimit_json(sc), scale, env, &rl, err);
  if (rc != SIM_OK) return rc;
  sim__ratelimit_set_wire(rl, o->scale_wire ? scale : 1);
  int honour = sim__scenario_idempotency_honoured(sc);
  if (o->state_url == NULL) return sim__state_local_new(honour, rl, out);
  /* Instances of one scenario meet in one session unless told otherwise:
     the default name is a fingerprint of the scenario's name. */
  char def[24];
  const char *name = sim__scenario_name(sc);
  char fp[17];
  sim__fingerprint(name, strlen(name), fp);
  snprintf(def, sizeof def, "s%s", fp);
  sim_state_redis_opts ro = {.url = o->state_url,
                             .session = o->session ? o->session : def,
                             .fresh = o->new_session};
  return sim__state_redis_new(&ro, honour, rl, out, err);
}

/* This server's name in a fleet; see state_int.h. */
void sim__state_instance(const sim_server_opts *o, char *out, size_t cap) {
  if (o->instance != NULL) {
    snprintf(out, cap, "%s", o->instance);
    return;
  }
  char host[48] = "host";
  gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = '\0';
  snprintf(out, cap, "%s-%ld", host, (long)getpid());
}
