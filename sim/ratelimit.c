/*
 * ratelimit.c - the optional token bucket in front of a scenario's
 * providers: requests per minute and tokens per minute, refilled
 * continuously in scenario time. An arrival it refuses gets a 429 with
 * Retry-After; every answer carries OpenAI x-ratelimit-* or Anthropic
 * anthropic-ratelimit-* headers, as the real providers send them.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_int.h"

struct sim_ratelimit {
  pthread_mutex_t lock;
  double rpm, tpm;          /* 0 = that limit is off */
  double req_cap, tok_cap;  /* bucket sizes (burst) */
  double req, tok;          /* what is left */
  double last_ms;           /* monotonic ms of the last refill */
  double scale;             /* time scale: a scenario second is scale s */
  double wire;              /* factor of the reset times on the wire (scale_wire), else 1 */
  int anthropic;            /* header style */
  sim_env env;              /* the clocks */
};

static int read_num(const cJSON *o, const char *k, double *out, char err[SIM_ERRLEN]) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (v == NULL) return 0;
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
      v->valuedouble > 1e9) {
    snprintf(err, SIM_ERRLEN, "ratelimit.%s must be a number from 0 to 1e9", k);
    return -1;
  }
  *out = v->valuedouble;
  return 0;
}

/*
 * Builds the limiter from the scenario's `ratelimit` table (JSON): rpm, tpm,
 * burst (requests a full bucket holds; default rpm), style ("openai" or
 * "anthropic"), on env's clocks. *out is NULL when json is NULL. Messages
 * start with the path of the offending key. Caller owns *out.
 */
int sim__ratelimit_new(const char *json, double scale, const sim_env *env,
                       sim_ratelimit **out, char err[SIM_ERRLEN]) {
  *out = NULL;
  if (json == NULL) return SIM_OK;
  cJSON *o = cJSON_Parse(json);
  if (o == NULL) { /* the text is sim's own JSON: only memory can fail */
    snprintf(err, SIM_ERRLEN, "ratelimit: out of memory");
    return SIM_ENOMEM;
  }
  if (!cJSON_IsObject(o)) {
    cJSON_Delete(o);
    snprintf(err, SIM_ERRLEN, "ratelimit must be a table");
    return SIM_ELOAD;
  }
  sim_ratelimit *rl = calloc(1, sizeof *rl);
  int rc = rl ? SIM_OK : SIM_ENOMEM;
  if (rl == NULL) snprintf(err, SIM_ERRLEN, "ratelimit: out of memory");
  double burst = -1, tburst = -1;
  const cJSON *k;
  cJSON_ArrayForEach(k, o) {
    if (rc == SIM_OK && strcmp(k->string, "rpm") && strcmp(k->string, "tpm") &&
        strcmp(k->string, "burst") && strcmp(k->string, "token_burst") &&
        strcmp(k->string, "style")) {
      snprintf(err, SIM_ERRLEN, "ratelimit.%.60s: unknown key (known: rpm, tpm, burst, "
               "token_burst, style)", k->string);
      rc = SIM_ELOAD;
    }
  }
  if (rc == SIM_OK && (read_num(o, "rpm", &rl->rpm, err) || read_num(o, "tpm", &rl->tpm, err) ||
                       read_num(o, "burst", &burst, err) || read_num(o, "token_burst", &tburst, err)))
    rc = SIM_ELOAD;
  const cJSON *style = cJSON_GetObjectItemCaseSensitive(o, "style");
  if (rc == SIM_OK && style != NULL) {
    if (cJSON_IsString(style) && strcmp(style->valuestring, "anthropic") == 0) rl->anthropic = 1;
    else if (!cJSON_IsString(style) || strcmp(style->valuestring, "openai") != 0) {
      snprintf(err, SIM_ERRLEN, "ratelimit.style must be \"openai\" or \"anthropic\"");
      rc = SIM_ELOAD;
    }
  }
  if (rc == SIM_OK && rl->rpm == 0 && rl->tpm == 0) {
    snprintf(err, SIM_ERRLEN, "ratelimit needs rpm or tpm");
    rc = SIM_ELOAD;
  }
  cJSON_Delete(o);
  if (rc != SIM_OK) {
    free(rl);
    return rc;
  }
  rl->req_cap = burst >= 0 ? burst : rl->rpm;
  rl->tok_cap = tburst >= 0 ? tburst : rl->tpm;
  rl->req = rl->req_cap;
  rl->tok = rl->tok_cap;
  rl->scale = scale > 0 ? scale : 1;
  rl->wire = 1;
  if (env != NULL) rl->env = *env;
  rl->last_ms = sim__env_now_ms(&rl->env);
  pthread_mutex_init(&rl->lock, NULL);
  *out = rl;
  return SIM_OK;
}

/* Releases the limiter; NULL is a no-op. */
void sim__ratelimit_free(sim_ratelimit *rl) {
  if (rl == NULL) return;
  pthread_mutex_destroy(&rl->lock);
  free(rl);
}

/* Seconds (scenario time) until `need` more units are in a bucket. */
static double wait_for(double have, double need, double per_min) {
  if (have >= need || per_min <= 0) return 0;
  return (need - have) * 60.0 / per_min;
}

/* "1s", "6m0s", "1.5s": the OpenAI reset format. */
static void oa_duration(double s, char *out, size_t cap) {
  if (s >= 60) snprintf(out, cap, "%dm%ds", (int)(s / 60), (int)fmod(s, 60));
  else if (s == floor(s)) snprintf(out, cap, "%ds", (int)s);
  else snprintf(out, cap, "%.3gs", s);
}

/* RFC 3339 time s seconds after wall time now: the Anthropic reset format. */
static void an_time(double now, double s, char *out, size_t cap) {
  time_t t = (time_t)now + (time_t)ceil(s);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void add(sim_rl_result *r, const char *name, const char *value) {
  if (r->nheaders >= SIM_RL_HEADERS) return;
  snprintf(r->headers[r->nheaders].name, sizeof r->headers[0].name, "%s", name);
  snprintf(r->headers[r->nheaders].value, sizeof r->headers[0].value, "%s", value);
  r->nheaders++;
}

/*
 * Takes one request and `tokens` tokens from the buckets. Returns 1 and
 * r->retry_after (scenario seconds) when refused, else 0; either way
 * r->headers holds the rate-limit headers to send.
 */
int sim__ratelimit_take(sim_ratelimit *rl, int tokens, sim_rl_result *r) {
  memset(r, 0, sizeof *r);
  pthread_mutex_lock(&rl->lock);
  double now = sim__env_now_ms(&rl->env);
  double elapsed_s = (now - rl->last_ms) / 1000.0 / rl->scale; /* scenario seconds */
  rl->last_ms = now;
  if (rl->rpm > 0) rl->req = fmin(rl->req_cap, rl->req + elapsed_s * rl->rpm / 60.0);
  if (rl->tpm > 0) rl->tok = fmin(rl->tok_cap, rl->tok + elapsed_s * rl->tpm / 60.0);
  double wr = rl->rpm > 0 ? wait_for(rl->req, 1, rl->rpm) : 0;
  double wt = rl->tpm > 0 ? wait_for(rl->tok, tokens, rl->tpm) : 0;
  int refused = wr > 0 || wt > 0;
  if (!refused) {
    if (rl->rpm > 0) rl->req -= 1;
    if (rl->tpm > 0) rl->tok -= tokens;
  }
  double req_left = rl->req, tok_left = rl->tok;
  pthread_mutex_unlock(&rl->lock);
  sim__ratelimit_answer(rl, refused, fmax(wr, wt), req_left, tok_left, r);
  return refused;
}

/* The limiter's settings, for a bucket kept elsewhere; see sim_int.h. */
void sim__ratelimit_conf(const sim_ratelimit *rl, sim_rl_conf *out) {
  out->rpm = rl->rpm;
  out->tpm = rl->tpm;
  out->req_cap = rl->req_cap;
  out->tok_cap = rl->tok_cap;
  out->scale = rl->scale;
}

void sim__ratelimit_set_wire(sim_ratelimit *rl, double wire) {
  if (rl != NULL) rl->wire = wire > 0 ? wire : 1;
}

/* Fills r from the levels left after a take; see sim_int.h. */
void sim__ratelimit_answer(const sim_ratelimit *rl, int refused, double wait_s,
                           double req_left, double tok_left, sim_rl_result *r) {
  memset(r, 0, sizeof *r);
  /* on the wire, like every wait advised there (scale_wire) */
  double reset_r = rl->rpm > 0 ? (rl->req_cap - req_left) * 60.0 / rl->rpm * rl->wire : 0;
  double reset_t = rl->tpm > 0 ? (rl->tok_cap - tok_left) * 60.0 / rl->tpm * rl->wire : 0;
  long left_r = (long)floor(req_left), left_t = (long)floor(tok_left);
  r->retry_after = refused ? ceil(wait_s) : 0;
  char v[sizeof r->headers[0].value];
  if (rl->rpm > 0) {
    snprintf(v, sizeof v, "%.0f", rl->req_cap);
    add(r, rl->anthropic ? "anthropic-ratelimit-requests-limit" : "x-ratelimit-limit-requests", v);
    snprintf(v, sizeof v, "%ld", left_r < 0 ? 0 : left_r);
    add(r, rl->anthropic ? "anthropic-ratelimit-requests-remaining" : "x-ratelimit-remaining-requests", v);
    if (rl->anthropic) an_time(sim__env_wall_s(&rl->env), reset_r, v, sizeof v);
    else oa_duration(reset_r, v, sizeof v);
    add(r, rl->anthropic ? "anthropic-ratelimit-requests-reset" : "x-ratelimit-reset-requests", v);
  }
  if (rl->tpm > 0) {
    snprintf(v, sizeof v, "%.0f", rl->tok_cap);
    add(r, rl->anthropic ? "anthropic-ratelimit-tokens-limit" : "x-ratelimit-limit-tokens", v);
    snprintf(v, sizeof v, "%ld", left_t < 0 ? 0 : left_t);
    add(r, rl->anthropic ? "anthropic-ratelimit-tokens-remaining" : "x-ratelimit-remaining-tokens", v);
    if (rl->anthropic) an_time(sim__env_wall_s(&rl->env), reset_t, v, sizeof v);
    else oa_duration(reset_t, v, sizeof v);
    add(r, rl->anthropic ? "anthropic-ratelimit-tokens-reset" : "x-ratelimit-reset-tokens", v);
  }
}
