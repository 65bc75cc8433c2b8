/*
 * record_note.c - what the recorder writes about one exchange, and which
 * request targets it forwards. No sockets here, so the fuzzer and the unit
 * tests reach every rule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "import/import.h"
#include "import/import_int.h"
#include "import/record_int.h"

/* Checks the target and joins base + target + query (see record_int.h). */
int imp__record_target(const char *base, const char *target, const char *query, char **url) {
  return sim_upstream_target(base, target, query, url); /* the one rule, shared with upstream{} */
}

static double ms3(double v) { return (double)(long long)(v * 1000) / 1000; }

/* The exchange as one JSON Lines attempt, redacted (see record_int.h). */
char *imp__record_note(const imp_rec_exchange *e) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  char key[512];
  const char *idem = e->idem;
  char *red_idem = NULL;
  if (idem != NULL && strlen(idem) > 400) idem = NULL; /* too long to be a key: hash */
  if (sim_request_key(idem, e->method, e->path, e->body ? e->body : "", e->body_len, key,
                      sizeof key) != SIM_OK)
    snprintf(key, sizeof key, "hash:0");
  red_idem = sim_redact_text(key, strlen(key)); /* an Idempotency-Key holding a key */
  size_t plen = strlen(e->path) + (e->query ? strlen(e->query) : 0) + 1;
  char *full = malloc(plen);
  char *path = NULL;
  if (full != NULL) {
    snprintf(full, plen, "%s%s", e->path, e->query ? e->query : "");
    path = sim_redact_text(full, strlen(full));
    free(full);
  }
  int ok = red_idem != NULL && path != NULL;
  long status = e->headers_done ? e->status : 0;
  const char *error = e->error;
  int odd = e->headers_done && (status < 200 || status > 599);
  if (odd) {
    cJSON_AddNumberToObject(o, "upstream_status", (double)status);
    status = 0;
    error = "closed";
  }
  cJSON_AddNumberToObject(o, "t", ms3(e->t_ms));
  cJSON_AddStringToObject(o, "method", e->method);
  if (ok) cJSON_AddStringToObject(o, "path", path);
  if (ok) cJSON_AddStringToObject(o, "key", red_idem);
  cJSON_AddNumberToObject(o, "status", (double)status);
  if (e->headers_done && !odd)
    cJSON_AddNumberToObject(o, "latency_ms", (double)(long long)e->latency_ms);
  else if (e->latency_ms >= 0 && error != NULL && strcmp(error, "timeout") != 0)
    cJSON_AddNumberToObject(o, "latency_ms", (double)(long long)e->latency_ms);
  cJSON_AddNumberToObject(o, "duration_ms", (double)(long long)e->duration_ms);
  if (e->headers_done) {
    cJSON *h = cJSON_AddObjectToObject(o, "headers");
    for (int i = 0; h && i < e->nh; i++) {
      if (cJSON_GetObjectItem(h, e->hname[i])) continue;
      char *r = sim_redact_header(e->hname[i], e->hvalue[i]);
      /* and the account ids (openai-organization: org-...), as imports do */
      char *v = r ? imp__scrub(r, strlen(r)) : NULL;
      free(r);
      if (v == NULL) ok = 0;
      else cJSON_AddStringToObject(h, e->hname[i], v);
      free(v);
    }
    if (e->stream && !odd) cJSON_AddTrueToObject(o, "stream");
    if (e->kept != NULL) {
      char *b = imp__scrub(e->kept, strlen(e->kept));
      if (b == NULL) ok = 0;
      else cJSON_AddStringToObject(o, "body", b);
      free(b);
    }
    cJSON_AddNumberToObject(o, "bytes", (double)e->received);
  }
  if (error != NULL) cJSON_AddStringToObject(o, "error", error);
  free(red_idem);
  free(path);
  char *line = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return line;
}
