/*
 * result_json.c - a call's result as the `client` event of docs/trace.md.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <math.h>

/* Milliseconds rounded to microseconds, so lines stay short. */
static double ms(double v) { return isfinite(v) ? round(v * 1000.0) / 1000.0 : 0; }

static int add_str_or_null(cJSON *o, const char *name, const char *s) {
  return (s ? cJSON_AddStringToObject(o, name, s) : cJSON_AddNullToObject(o, name)) != NULL;
}

static int add_attempt(cJSON *arr, const guard_attempt *a) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return 0;
  cJSON_AddItemToArray(arr, o);
  int ok = cJSON_AddNumberToObject(o, "n", a->n) &&
           cJSON_AddStringToObject(o, "provider", a->provider) &&
           cJSON_AddNumberToObject(o, "start_ms", ms(a->start_ms)) &&
           cJSON_AddNumberToObject(o, "elapsed_ms", ms(a->elapsed_ms)) &&
           cJSON_AddStringToObject(o, "kind", guard_kind_name(a->kind)) &&
           cJSON_AddNumberToObject(o, "status", a->status) &&
           cJSON_AddStringToObject(o, "error", a->error) &&
           cJSON_AddNumberToObject(o, "wait_ms", ms(a->wait_ms)) &&
           cJSON_AddStringToObject(o, "wait_why", guard_wait_why_name(a->wait_why)) &&
           cJSON_AddStringToObject(o, "partial", a->partial ? a->partial : "") &&
           cJSON_AddNumberToObject(o, "timeout_ms", ms(a->timeout_ms));
  if (ok && a->retry_after_ms >= 0)
    ok = cJSON_AddNumberToObject(o, "retry_after_ms", ms(a->retry_after_ms)) != NULL;
  if (ok && a->detail[0]) ok = cJSON_AddStringToObject(o, "detail", a->detail) != NULL;
  if (ok && a->request_id[0])
    ok = cJSON_AddStringToObject(o, "request_id", a->request_id) != NULL;
  return ok;
}

/* Renders a result as one `client` trace line; the caller frees it. */
char *guard_result_json(const guard_result *r, const char *client, int call,
                        double t_ms) {
  if (r == NULL) return NULL;
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  int ok = cJSON_AddStringToObject(o, "ev", "client") &&
           cJSON_AddNumberToObject(o, "t", ms(t_ms)) &&
           cJSON_AddStringToObject(o, "client", client ? client : "guard") &&
           cJSON_AddNumberToObject(o, "call", call) &&
           cJSON_AddStringToObject(o, "outcome", guard_outcome_name(r->outcome)) &&
           cJSON_AddNumberToObject(o, "total_ms", ms(r->total_ms)) &&
           cJSON_AddNumberToObject(o, "tokens", (double)r->tokens) &&
           cJSON_AddStringToObject(o, "text", r->text ? r->text : "") &&
           add_str_or_null(o, "reason", r->reason) &&
           add_str_or_null(o, "stopped", r->stop[0] ? r->stop : NULL) &&
           add_str_or_null(o, "provider", r->provider) &&
           cJSON_AddNumberToObject(o, "requests", r->requests) &&
           add_str_or_null(o, "key", r->key[0] ? r->key : NULL);
  cJSON *arr = ok ? cJSON_AddArrayToObject(o, "attempts") : NULL;
  if (arr == NULL) ok = 0;
  for (int i = 0; ok && i < r->nattempts; i++) ok = add_attempt(arr, &r->attempts[i]);
  char *s = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}
