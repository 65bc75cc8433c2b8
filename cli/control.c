/*
 * control.c - the control API of `fusebox serve --control`
 * (docs/control.md): the token check, the endpoints under /__fusebox/, and
 * their JSON answers. Scenarios are checked as `fusebox check` checks a
 * file; reports are the JSON `fusebox report --json` writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "cli/control.h"
#include "reports/reports.h"

#define PREFIX "/__fusebox"

/* Sets resp to a JSON document (taken, NULL = out of memory). */
static void answer(sim_control_resp *resp, int status, char *json) {
  if (json == NULL) {
    status = 500;
    json = strdup("{\"error\":{\"type\":\"fusebox_error\",\"message\":\"out of memory\"}}");
  }
  resp->status = status;
  resp->body = json;
  resp->body_len = json ? strlen(json) : 0;
  resp->content_type = "application/json";
}

/* An error answer: {"error":{"type":type,"message":msg}}. */
static void fail(sim_control_resp *resp, int status, const char *type, const char *msg) {
  cJSON *doc = cJSON_CreateObject();
  cJSON *e = cJSON_AddObjectToObject(doc, "error");
  cJSON_AddStringToObject(e, "type", type);
  cJSON_AddStringToObject(e, "message", msg);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  answer(resp, status, text);
}

/* The value of query parameter or header name (headers: any case), or NULL. */
static const char *lookup(const sim_kv *kv, int n, const char *name, int any_case) {
  for (int i = 0; i < n; i++)
    if (any_case ? strcasecmp(kv[i].name, name) == 0 : strcmp(kv[i].name, name) == 0)
      return kv[i].value;
  return NULL;
}

/* 1 when a and b are equal, in a time that does not depend on where they
   differ (the token must not leak through timing). */
static int same_secret(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b); /* b is the token: time depends on its length */
  unsigned char d = (unsigned char)(la != lb);
  for (size_t i = 0; i < lb; i++) d |= (unsigned char)((i < la ? a[i] : 0) ^ b[i]);
  return d == 0;
}

/* 1 when the request carries "Authorization: Bearer token". */
static int authorised(const cli_control *cc, const sim_control_req *req) {
  if (cc->token == NULL) return 1;
  const char *h = lookup(req->headers, req->nheaders, "Authorization", 1);
  if (h == NULL || strncasecmp(h, "Bearer ", 7) != 0) return 0;
  h += 7;
  while (*h == ' ') h++;
  return same_secret(h, cc->token);
}

/* GET /health. */
static void health(sim_server *srv, sim_control_resp *resp) {
  char (*v)[SIM_SESSION_NAME_MAX + 1] = malloc(SIM_MAX_SESSIONS * sizeof *v);
  if (v == NULL) {
    answer(resp, 500, NULL);
    return;
  }
  int n = sim_server_session_names(srv, v, SIM_MAX_SESSIONS);
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddBoolToObject(doc, "ok", 1);
  cJSON *arr = cJSON_AddArrayToObject(doc, "sessions");
  for (int i = 0; i < n && i < SIM_MAX_SESSIONS; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]));
  cJSON_AddNumberToObject(doc, "arrivals", (double)sim_server_arrivals(srv));
  free(v);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  answer(resp, 200, text);
}

/* {"ok":true,"session":name[,"scenario":scenario]} */
static void ok_session(sim_control_resp *resp, const char *name, const char *scenario) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddBoolToObject(doc, "ok", 1);
  cJSON_AddStringToObject(doc, "session", name);
  if (scenario) cJSON_AddStringToObject(doc, "scenario", scenario);
  char *text = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  answer(resp, 200, text);
}

/* 1 when s is a scenario file name fit for messages: 1..128 of
   A-Z a-z 0-9 . _ - (no path). */
static int file_name_ok(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 128) return 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '.' || ch == '_' || ch == '-'))
      return 0;
  }
  return 1;
}

/* PUT /scenario: check the text as `fusebox check` would, then start the
   session afresh with it. */
static void put_scenario(const cli_control *cc, sim_server *srv, const sim_control_req *req,
                         const char *session, sim_control_resp *resp) {
  const char *name = lookup(req->query, req->nquery, "name", 0);
  if (name == NULL) name = "scenario.lua";
  if (!file_name_ok(name)) {
    fail(resp, 400, "fusebox_bad_request",
         "name: a file name of 1 to 128 of A-Z a-z 0-9 . _ - (it names the scenario in messages)");
    return;
  }
  char err[SIM_ERRLEN];
  sim_scenario *sc = NULL;
  int rc = cli_scenario_load_text(name, req->body ? req->body : "", req->body_len, cc->seed,
                                  &sc, err);
  if (rc != SIM_OK) {
    fail(resp, rc == SIM_ENOMEM ? 500 : 400, "fusebox_bad_scenario", err);
    return;
  }
  char *scname = strdup(sim_scenario_name(sc) ? sim_scenario_name(sc) : "");
  rc = sim_server_session_put(srv, session, sc, err);
  if (rc == SIM_OK) ok_session(resp, session, scname ? scname : "");
  else if (rc == SIM_EFULL) fail(resp, 503, "fusebox_too_many_sessions", err);
  else fail(resp, 500, "fusebox_error", err);
  free(scname);
}

/* The session's trace lines into *text, or an error answer (0 = answered). */
static int session_trace(sim_server *srv, const char *session, char **text, size_t *len,
                         sim_control_resp *resp) {
  int full = 0;
  int rc = sim_server_session_trace(srv, session, text, len, &full);
  char msg[200];
  if (rc == SIM_ENOENT) {
    snprintf(msg, sizeof msg, "no session named '%s': PUT a scenario for it or send it a request",
             session);
    fail(resp, 404, "fusebox_unknown_session", msg);
    return 0;
  }
  if (rc != SIM_OK) {
    answer(resp, 500, NULL);
    return 0;
  }
  if (full) {
    free(*text);
    *text = NULL;
    snprintf(msg, sizeof msg,
             "session '%s' wrote more than %zu MiB of trace, the most a session keeps: "
             "reset it (the --trace file still holds every line)",
             session, SIM_SESSION_TRACE_MAX >> 20);
    fail(resp, 507, "fusebox_session_full", msg);
    return 0;
  }
  return 1;
}

/* GET /report: the trace judged as `fusebox report --json` judges it. A
   session still running has no `done` line: one is added at its last t, so
   the report judges what happened so far rather than a stopped run. */
static void report(sim_server *srv, const char *session, sim_control_resp *resp) {
  char *text = NULL;
  size_t len = 0;
  if (!session_trace(srv, session, &text, &len, resp)) return;
  if (len == 0) {
    free(text);
    fail(resp, 503, "fusebox_no_scenario",
         "the session has no scenario yet: PUT one to /__fusebox/scenario");
    return;
  }
  double last_t = 0;
  const char *lastl = text + len - 1; /* text ends with '\n' */
  while (lastl > text && lastl[-1] != '\n') lastl--;
  cJSON *ev = cJSON_ParseWithLength(lastl, (size_t)(text + len - lastl));
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "t");
  if (cJSON_IsNumber(t)) last_t = t->valuedouble;
  int done = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ev, "ev")) &&
             strcmp(cJSON_GetObjectItemCaseSensitive(ev, "ev")->valuestring, "done") == 0;
  cJSON_Delete(ev);
  char tail[96];
  int tl = done ? 0 : snprintf(tail, sizeof tail, "{\"ev\":\"done\",\"t\":%.3f}\n", last_t);
  char *all = realloc(text, len + (size_t)tl + 1);
  if (all == NULL) {
    free(text);
    answer(resp, 500, NULL);
    return;
  }
  memcpy(all + len, tail, (size_t)tl);
  len += (size_t)tl;
  all[len] = '\0';
  char name[SIM_SESSION_NAME_MAX + 16];
  snprintf(name, sizeof name, "session %s", session);
  char err[RPT_ERRLEN];
  rpt_input in = {0};
  int rc = rpt_trace_read_mem(all, len, name, &in.trace, err);
  free(all);
  rpt_run *run = rc == RPT_OK ? rpt_run_new() : NULL;
  if (rc == RPT_OK && run == NULL) {
    rpt_trace_free(in.trace);
    answer(resp, 500, NULL);
    return;
  }
  if (rc == RPT_OK) rc = rpt_run_add(run, &in, err);
  char *json = rc == RPT_OK ? rpt_run_json_text(run, err) : NULL;
  rpt_run_free(run);
  if (json == NULL) fail(resp, 500, "fusebox_error", err);
  else answer(resp, 200, json);
}

/* The control hook; see control.h. */
void cli_control_handle(void *arg, sim_server *srv, const sim_control_req *req,
                        sim_control_resp *resp) {
  const cli_control *cc = arg;
  if (!authorised(cc, req)) {
    fail(resp, 401, "fusebox_unauthorized",
         "this control API needs the header Authorization: Bearer <the --control-token>");
    return;
  }
  const char *ep = strncmp(req->path, PREFIX, strlen(PREFIX)) == 0
                       ? req->path + strlen(PREFIX) : req->path;
  static const struct { const char *path, *method; } eps[] = {
      {"/health", "GET"},  {"/scenario", "PUT"}, {"/reset", "POST"},
      {"/requests", "GET"}, {"/report", "GET"},  {"/trace", "GET"}};
  size_t k = 0, neps = sizeof eps / sizeof eps[0];
  while (k < neps && strcmp(ep, eps[k].path) != 0) k++;
  char msg[512];
  if (k == neps) {
    snprintf(msg, sizeof msg,
             "fusebox: no control endpoint %.100s; there are GET /__fusebox/health, "
             "PUT /__fusebox/scenario, POST /__fusebox/reset, GET /__fusebox/requests, "
             "GET /__fusebox/report and GET /__fusebox/trace", req->path);
    fail(resp, 404, "fusebox_unknown_control", msg);
    return;
  }
  if (strcmp(req->method, eps[k].method) != 0) {
    snprintf(msg, sizeof msg, "fusebox: use %s for /__fusebox%s", eps[k].method, eps[k].path);
    fail(resp, 405, "fusebox_method_not_allowed", msg);
    return;
  }
  if (req->too_big) {
    snprintf(msg, sizeof msg, "fusebox: a control request body is at most %zu bytes",
             (size_t)SIM_CONTROL_MAX_BODY);
    fail(resp, 413, "fusebox_too_large", msg);
    return;
  }
  const char *session = lookup(req->query, req->nquery, "session", 0);
  if (session == NULL) session = "default";
  if (!sim_session_name_ok(session)) {
    fail(resp, 400, "fusebox_bad_session",
         "session: a name of 1 to 64 of A-Z a-z 0-9 . _ -");
    return;
  }
  char err[SIM_ERRLEN];
  if (k == 0) {
    health(srv, resp);
  } else if (k == 1) {
    put_scenario(cc, srv, req, session, resp);
  } else if (k == 2) {
    int rc = sim_server_session_reset(srv, session, err);
    if (rc == SIM_OK) ok_session(resp, session, NULL);
    else if (rc == SIM_ENOENT) fail(resp, 404, "fusebox_unknown_session", err);
    else fail(resp, 500, "fusebox_error", err);
  } else if (k == 5 || k == 3) {
    char *text = NULL;
    size_t len = 0;
    if (!session_trace(srv, session, &text, &len, resp)) return;
    if (k == 5) {
      resp->status = 200;
      resp->body = text;
      resp->body_len = len;
      resp->content_type = "application/x-ndjson";
    } else {
      answer(resp, 200, cli_control_journal(session, text, len));
      free(text);
    }
  } else {
    report(srv, session, resp);
  }
}
