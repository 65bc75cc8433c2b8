/*
 * control_http.c - requests fusebox answers itself, not a scenario: the
 * control API under /__fusebox/ (handed to the server's control hook with
 * its query, headers and body) and the refusal of a request whose session
 * cannot be served. Neither is an arrival: nothing of them reaches the
 * trace (a control request may carry the control token).
 */
#include <stdlib.h>
#include <string.h>

#include "sim/server_int.h"

#define MAX_KV 100 /* query parameters and headers handed to the hook */

typedef struct kv_list {
  sim_kv kv[MAX_KV];
  int n;
} kv_list;

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key,
                               const char *value) {
  (void)kind;
  kv_list *l = cls;
  if (l->n < MAX_KV && key != NULL) {
    l->kv[l->n].name = key;
    l->kv[l->n].value = value ? value : "";
    l->n++;
  }
  return MHD_YES;
}

/* Queues body (taken; malloc'd) with status and content type. */
static enum MHD_Result queue(sim_conn *c, int status, char *body, size_t len,
                             const char *type) {
  struct MHD_Response *r =
      MHD_create_response_from_buffer(body ? len : 0, body ? body : (void *)"",
                                      body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (r == NULL) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type ? type : "application/json");
  MHD_add_response_header(r, "Cache-Control", "no-store");
  c->phase = 2;
  enum MHD_Result ok = MHD_queue_response(c->mc, (unsigned)status, r);
  MHD_destroy_response(r);
  return ok;
}

/* {"error":{"type":type,"message":msg}} as a malloc'd string, or NULL. */
static char *error_json(const char *type, const char *msg) {
  cJSON *doc = cJSON_CreateObject();
  cJSON *e = cJSON_AddObjectToObject(doc, "error");
  cJSON_AddStringToObject(e, "type", type);
  cJSON_AddStringToObject(e, "message", msg ? msg : "");
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  return text;
}

/* Answers a direct connection; see server_int.h. */
enum MHD_Result sim__direct_answer(sim_conn *c, const char *method, const char *url) {
  sim_server *root = c->srv->root;
  if (c->refuse != 0 || root->control == NULL) {
    char *body = error_json(c->refuse_type ? c->refuse_type : "fusebox_error",
                            c->refuse_msg ? c->refuse_msg : "fusebox: refused");
    return queue(c, c->refuse ? c->refuse : 500, body, body ? strlen(body) : 0, NULL);
  }
  kv_list q = {.n = 0}, h = {.n = 0};
  MHD_get_connection_values(c->mc, MHD_GET_ARGUMENT_KIND, collect, &q);
  MHD_get_connection_values(c->mc, MHD_HEADER_KIND, collect, &h);
  sim_control_req req = {.method = method, .path = url, .query = q.kv, .nquery = q.n,
                         .headers = h.kv, .nheaders = h.n,
                         .body = c->too_big ? NULL : c->body,
                         .body_len = c->too_big ? 0 : c->body_len, .too_big = c->too_big};
  sim_control_resp resp = {.status = 500};
  root->control(root->control_arg, root, &req, &resp);
  return queue(c, resp.status, resp.body, resp.body_len, resp.content_type);
}
