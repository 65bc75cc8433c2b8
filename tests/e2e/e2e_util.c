/*
 * e2e_util.c - see e2e_util.h.
 */
#include "e2e_util.h"

#include <CUnit/CUnit.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

e2e_server *e2e_start(const char *lua, double time_scale) {
  return e2e_start_env(lua, time_scale, NULL);
}

e2e_server *e2e_start_env(const char *lua, double time_scale, const sim_env *env) {
  return e2e_start_loops(lua, time_scale, env, 0);
}

e2e_server *e2e_start_loops(const char *lua, double time_scale, const sim_env *env, int loops) {
  CU_ASSERT_PTR_NOT_NULL_FATAL(lua);
  e2e_server *s = calloc(1, sizeof *s);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  snprintf(s->scenario_path, sizeof s->scenario_path, "/tmp/fbx-e2e-XXXXXX.lua");
  int fd = mkstemps(s->scenario_path, 4);
  CU_ASSERT_FATAL(fd >= 0);
  size_t len = strlen(lua);
  CU_ASSERT_FATAL(write(fd, lua, len) == (ssize_t)len);
  close(fd);
  snprintf(s->trace_path, sizeof s->trace_path, "/tmp/fbx-e2e-XXXXXX.jsonl");
  fd = mkstemps(s->trace_path, 6);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  sim_server_opts o = {.scenario_path = s->scenario_path, .trace_path = s->trace_path,
                       .time_scale = time_scale, .seed = 1, .loops = loops};
  if (env != NULL) o.env = *env;
  char err[SIM_ERRLEN];
  int rc = sim_server_start(&o, &s->srv, err);
  if (rc != SIM_OK) {
    fprintf(stderr, "e2e_start: %s\n", err);
    unlink(s->scenario_path);
    unlink(s->trace_path);
    free(s);
    CU_FAIL_FATAL("server did not start");
    return NULL;
  }
  s->port = sim_server_port(s->srv);
  return s;
}

void e2e_stop(e2e_server *s) {
  if (s == NULL || s->srv == NULL) return;
  sim_server_free(s->srv);
  s->srv = NULL;
  s->trace = cJSON_CreateArray();
  FILE *f = fopen(s->trace_path, "r");
  if (f == NULL) return;
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    cJSON *ev = cJSON_Parse(line);
    CU_ASSERT_PTR_NOT_NULL(ev); /* every line parses */
    if (ev) cJSON_AddItemToArray(s->trace, ev);
  }
  free(line);
  fclose(f);
}

void e2e_free(e2e_server *s) {
  if (s == NULL) return;
  e2e_stop(s);
  cJSON_Delete(s->trace);
  unlink(s->scenario_path);
  unlink(s->trace_path);
  free(s);
}

typedef struct buf {
  char *p;
  size_t n;
} buf;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud) {
  buf *b = ud;
  size_t len = size * nmemb;
  char *np = realloc(b->p, b->n + len + 1);
  if (np == NULL) return 0;
  b->p = np;
  memcpy(b->p + b->n, ptr, len);
  b->n += len;
  b->p[b->n] = '\0';
  return len;
}

void e2e_request(e2e_server *s, const char *method, const char *path, const char *body,
                 const char *const *extra_headers, long timeout_ms, e2e_resp *out) {
  memset(out, 0, sizeof *out);
  out->rc = CURLE_FAILED_INIT;
  CU_ASSERT_PTR_NOT_NULL(s); /* a server that did not start: no request */
  if (s == NULL) {
    out->headers = strdup("");
    out->body = strdup("");
    return;
  }
  char url[256];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, path);
  CURL *h = curl_easy_init();
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  buf hb = {0}, bb = {0};
  struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
  hl = curl_slist_append(hl, "Authorization: Bearer sk-test-SECRET-123");
  for (int i = 0; extra_headers && extra_headers[i]; i++) hl = curl_slist_append(hl, extra_headers[i]);
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  if (body) curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &bb);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &hb);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  out->rc = curl_easy_perform(h);
  clock_gettime(CLOCK_MONOTONIC, &b);
  out->elapsed_ms = (double)(b.tv_sec - a.tv_sec) * 1000.0 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->status);
  for (size_t i = 0; i < hb.n; i++) hb.p[i] = (char)tolower((unsigned char)hb.p[i]);
  out->headers = hb.p ? hb.p : strdup("");
  out->body = bb.p ? bb.p : strdup("");
  out->body_len = bb.n;
  curl_slist_free_all(hl);
  curl_easy_cleanup(h);
}

void e2e_chat(e2e_server *s, const char *path, int stream, long timeout_ms, e2e_resp *out) {
  const char *body =
      stream ? "{\"model\":\"m1\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
             : "{\"model\":\"m1\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  e2e_request(s, "POST", path, body, NULL, timeout_ms, out);
}

void e2e_resp_clear(e2e_resp *r) {
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}

const char *e2e_header(const e2e_resp *r, const char *name) {
  static char val[512];
  if (r == NULL || name == NULL) return NULL;
  size_t nlen = strlen(name);
  const char *p = r->headers;
  while (p && *p) {
    if (strncmp(p, name, nlen) == 0 && p[nlen] == ':') {
      p += nlen + 1;
      while (*p == ' ') p++;
      size_t len = strcspn(p, "\r\n");
      if (len >= sizeof val) len = sizeof val - 1;
      memcpy(val, p, len);
      val[len] = '\0';
      return val;
    }
    p = strchr(p, '\n');
    if (p) p++;
  }
  return NULL;
}

cJSON *e2e_event(const e2e_server *s, const char *ev, int nth) {
  cJSON *e;
  if (s == NULL || ev == NULL) return NULL;
  cJSON_ArrayForEach(e, s->trace) {
    cJSON *k = cJSON_GetObjectItem(e, "ev");
    if (cJSON_IsString(k) && strcmp(k->valuestring, ev) == 0 && nth-- == 0) return e;
  }
  return NULL;
}

int e2e_count(const e2e_server *s, const char *ev) {
  int n = 0;
  while (e2e_event(s, ev, n)) n++;
  return n;
}

const char *e2e_str(const cJSON *ev, const char *field) {
  cJSON *f = cJSON_GetObjectItem(ev, field);
  return cJSON_IsString(f) ? f->valuestring : NULL;
}

double e2e_num(const cJSON *ev, const char *field) {
  cJSON *f = cJSON_GetObjectItem(ev, field);
  return cJSON_IsNumber(f) ? f->valuedouble : -1;
}

int e2e_wait_trace(e2e_server *s, const char *ev, int n, long timeout_ms) {
  char needle[64];
  snprintf(needle, sizeof needle, "\"ev\":\"%s\"", ev);
  if (s == NULL) return 0;
  for (long waited = 0; waited <= timeout_ms; waited += 10) {
    FILE *f = fopen(s->trace_path, "r");
    int count = 0;
    if (f) {
      char *line = NULL;
      size_t cap = 0;
      while (getline(&line, &cap, f) > 0)
        if (strstr(line, needle)) count++;
      free(line);
      fclose(f);
    }
    if (count >= n) return 1;
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

cJSON *e2e_end_of(const e2e_server *s, int nth) {
  cJSON *arr = e2e_event(s, "arrive", nth);
  if (arr == NULL) return NULL;
  double id = e2e_num(arr, "id");
  cJSON *e;
  cJSON_ArrayForEach(e, s->trace) {
    if (e2e_str(e, "ev") && strcmp(e2e_str(e, "ev"), "end") == 0 && e2e_num(e, "id") == id) return e;
  }
  return NULL;
}
