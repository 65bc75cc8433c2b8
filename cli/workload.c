/*
 * workload.c - plays a scenario's workload: N logical calls, C at a time,
 * optionally wrapped in an application retry layer, each call's account
 * written to the trace as a `client` event.
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/run.h"

typedef struct play_ctx {
  guard *g;
  const run_workload *w;
  run_client_kind kind;
  sim_server *srv;
  double scale;
  double t0;            /* monotonic ms at start */
  atomic_int next;      /* next call index */
  atomic_int failures;
} play_ctx;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void sleep_until(double t_ms) {
  double d = t_ms - now_ms();
  if (d <= 0) return;
  struct timespec ts = {(time_t)(d / 1000.0), (long)((d - (double)(long)(d / 1000.0) * 1000.0) * 1e6)};
  nanosleep(&ts, NULL);
}

/* One call of the client (one layer). */
static int call_once(play_ctx *x, int i, guard_result **r) {
  const run_workload *w = x->w;
  if (w->call == RUN_CALL_EFFECT) {
    char payload[1100];
    if (w->payload[0]) snprintf(payload, sizeof payload, "%s", w->payload);
    else snprintf(payload, sizeof payload, "{\"to\":\"user%d@example.com\",\"call\":%d}", i, i);
    return guard_effect(x->g, w->effect, payload, NULL, r);
  }
  char text[600];
  if (w->prompt[0]) snprintf(text, sizeof text, "%s (call %d)", w->prompt, i);
  else snprintf(text, sizeof text, "Question %d: what is a retry storm?", i);
  guard_message m = {.role = "user", .content = text};
  int tools = w->call == RUN_CALL_TOOLS || w->call == RUN_CALL_STREAM_TOOLS;
  const char *names[8];
  for (int k = 0; k < w->ntools && k < 8; k++) names[k] = w->tools[k];
  guard_chat_request req = {.messages = &m, .nmessages = 1, .max_tokens = w->max_tokens,
                            .stream = w->call == RUN_CALL_STREAM ||
                                      w->call == RUN_CALL_STREAM_TOOLS,
                            .tools = tools ? names : NULL, .ntools = tools ? w->ntools : 0};
  int rc = guard_chat(x->g, &req, r);
  if (rc == GUARD_OK && tools && *r != NULL) {
    /* The agent's tool executor: the guard checks and keys each call. */
    int ran, refused;
    rc = guard_run_tools(x->g, &req, *r, &ran, &refused, NULL, 0);
  }
  return rc;
}

/*
 * The account of one logical call: the last layer's result, with every
 * layer's attempts and the whole time. A reference client has no fallback
 * text: where the loop degraded, it raised an error.
 */
static char *account(play_ctx *x, int i, guard_result **layers, int n, double total_ms) {
  char *last = guard_result_json(layers[n - 1], run_client_name(x->kind), i, 0);
  cJSON *ev = last ? cJSON_Parse(last) : NULL;
  free(last);
  if (ev == NULL) return NULL;
  cJSON *all = cJSON_CreateArray();
  for (int l = 0; l < n; l++) {
    char *js = guard_result_json(layers[l], run_client_name(x->kind), i, 0);
    cJSON *one = js ? cJSON_Parse(js) : NULL;
    free(js);
    cJSON *att = cJSON_DetachItemFromObject(one, "attempts");
    cJSON *a;
    while (att && (a = cJSON_DetachItemFromArray(att, 0)) != NULL) {
      cJSON_AddNumberToObject(a, "layer", l + 1);
      cJSON_AddItemToArray(all, a);
    }
    cJSON_Delete(att);
    cJSON_Delete(one);
  }
  cJSON_ReplaceItemInObject(ev, "attempts", all);
  cJSON_ReplaceItemInObject(ev, "total_ms", cJSON_CreateNumber(total_ms));
  if (n > 1) cJSON_AddNumberToObject(ev, "layers", n);
  if (x->kind != RUN_CLIENT_GUARD && layers[n - 1]->outcome == GUARD_OUTCOME_DEGRADED) {
    cJSON_ReplaceItemInObject(ev, "outcome", cJSON_CreateString("error"));
    cJSON_ReplaceItemInObject(ev, "text", cJSON_CreateString(""));
  }
  char *s = cJSON_PrintUnformatted(ev);
  cJSON_Delete(ev);
  return s;
}

static int failed(const guard_result *r) {
  return r->outcome == GUARD_OUTCOME_DEGRADED || r->outcome == GUARD_OUTCOME_ERROR ||
         r->outcome == GUARD_OUTCOME_PENDING;
}

static void play_call(play_ctx *x, int i) {
  const run_workload *w = x->w;
  int layers = x->kind == RUN_CLIENT_GUARD ? 1 : w->layers;
  guard_result *res[10] = {0};
  int n = 0;
  double start = now_ms();
  for (int l = 0; l < layers; l++) {
    if (call_once(x, i, &res[n]) != GUARD_OK || res[n] == NULL) {
      atomic_fetch_add(&x->failures, 1);
      break;
    }
    n++;
    if (!failed(res[n - 1])) break;
  }
  if (n > 0) {
    char *js = account(x, i, res, n, now_ms() - start);
    if (js == NULL || sim_server_note(x->srv, js) != SIM_OK) atomic_fetch_add(&x->failures, 1);
    free(js);
  }
  for (int l = 0; l < n; l++) guard_result_free(res[l]);
}

static void *worker(void *arg) {
  play_ctx *x = arg;
  for (;;) {
    int i = atomic_fetch_add(&x->next, 1);
    if (i >= x->w->requests) break;
    if (x->w->spread > 0 && x->w->requests > 1)
      sleep_until(x->t0 + (double)i * x->w->spread * 1000.0 * x->scale / x->w->requests);
    play_call(x, i);
  }
  return NULL;
}

/* Plays the workload; see run.h. */
int run_workload_play(guard *g, const run_workload *w, run_client_kind kind,
                      sim_server *srv, double time_scale) {
  play_ctx x = {.g = g, .w = w, .kind = kind, .srv = srv, .scale = time_scale, .t0 = now_ms()};
  atomic_init(&x.next, 0);
  atomic_init(&x.failures, 0);
  int nthreads = w->concurrency < 1 ? 1 : w->concurrency;
  pthread_t *th = calloc((size_t)nthreads, sizeof *th);
  if (th == NULL) return w->requests;
  int started = 0;
  for (; started < nthreads; started++)
    if (pthread_create(&th[started], NULL, worker, &x) != 0) break;
  if (started == 0) worker(&x); /* no thread could start: play them here */
  for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  free(th);
  return atomic_load(&x.failures);
}
