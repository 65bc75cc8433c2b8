/*
 * test_trace.c - the trace: first and last lines, redaction, and scenario
 * errors at run time (a 500 and an error line, never a crash).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e_util.h"

#define CHAT "/v1/chat/completions"

/* The secret planted in a request's headers is nowhere in the trace file. */
static void assert_no_secret(const e2e_server *s) {
  FILE *f = fopen(s->trace_path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = '\0';
  fclose(f);
  CU_ASSERT_PTR_NULL(strstr(buf, "SECRET"));
}

static void test_session_done_and_redaction(void) {
  e2e_server *s = e2e_start("return scenario { name='trace me', provider = { chat{} } }", 1);
  const char *h[] = {"x-api-key: sk-ant-SECRET-456", NULL};
  e2e_resp r;
  e2e_request(s, "POST", CHAT, "{}", h, 2000, &r);
  e2e_resp_clear(&r);
  e2e_stop(s);
  cJSON *first = cJSON_GetArrayItem(s->trace, 0);
  CU_ASSERT_STRING_EQUAL(e2e_str(first, "ev"), "session");
  CU_ASSERT_STRING_EQUAL(e2e_str(first, "scenario"), "trace me");
  cJSON *last = cJSON_GetArrayItem(s->trace, cJSON_GetArraySize(s->trace) - 1);
  CU_ASSERT_STRING_EQUAL(e2e_str(last, "ev"), "done");
  cJSON *hd = cJSON_GetObjectItem(e2e_event(s, "arrive", 0), "headers");
  CU_ASSERT_STRING_EQUAL(e2e_str(hd, "authorization"), "[redacted]");
  CU_ASSERT_STRING_EQUAL(e2e_str(hd, "x-api-key"), "[redacted]");
  assert_no_secret(s);
  e2e_free(s);
}

/* Two logical requests interleaved on one path (A, B, A, B; by body and by
   Idempotency-Key): each is counted from attempt 1, so the trace says
   1 1 2 2 and the scenario answers each second attempt. Attempts keyed by
   the URL instead of the logical request would say 1 2 3 4. */
static void test_interleaved_logical_requests(void) {
  e2e_server *s = e2e_start(
      "return scenario { name='two', provider = function(req)\n"
      "  if req.attempt == 1 then return fail { status = 503 } end\n"
      "  return chat { content = 'attempt ' .. req.attempt }\n"
      "end }", 1);
  static const char *const bodies[] = {"{\"q\":\"A\"}", "{\"q\":\"B\"}"};
  const char *ka[] = {"Idempotency-Key: key-A", NULL}, *kb[] = {"Idempotency-Key: key-B", NULL};
  const char *const *keys[] = {ka, kb};
  int status[8];
  for (int i = 0; i < 8; i++) { /* 4 by body, then 4 by key (one body) */
    e2e_resp r;
    e2e_request(s, "POST", CHAT, i < 4 ? bodies[i % 2] : "{}", i < 4 ? NULL : keys[i % 2], 5000,
                &r);
    status[i] = r.status;
    e2e_resp_clear(&r);
  }
  e2e_stop(s);
  static const int want_attempt[8] = {1, 1, 2, 2, 1, 1, 2, 2};
  static const int want_status[8] = {503, 503, 200, 200, 503, 503, 200, 200};
  for (int i = 0; i < 8; i++) {
    cJSON *a = e2e_event(s, "arrive", i);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(e2e_num(a, "attempt"), want_attempt[i]);
    CU_ASSERT_EQUAL(status[i], want_status[i]);
  }
  CU_ASSERT_STRING_NOT_EQUAL(e2e_str(e2e_event(s, "arrive", 0), "key"),
                             e2e_str(e2e_event(s, "arrive", 1), "key"));
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_event(s, "arrive", 4), "key"), "idem:key-A");
  e2e_free(s);
}

static void test_runtime_error_is_a_500(void) {
  e2e_server *s = e2e_start(
      "return scenario { name='t', provider = function(req)\n"
      "  if req.attempt == 1 then error('boom') end\n"
      "  if req.attempt == 2 then while true do end end\n"
      "  if req.attempt == 3 then return 42 end\n"
      "  return chat { content = 'still here' }\n"
      "end }", 1);
  e2e_resp r;
  e2e_chat(s, CHAT, 0, 5000, &r);
  CU_ASSERT_EQUAL(r.status, 500);
  CU_ASSERT(strstr(r.body, ":2: boom") != NULL);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 20000, &r);
  CU_ASSERT_EQUAL(r.status, 500);
  /* The instruction limit, or under valgrind the CPU limit that comes first. */
  CU_ASSERT(strstr(r.body, "instruction limit exceeded") != NULL ||
            strstr(r.body, "CPU time limit exceeded") != NULL);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 5000, &r);
  CU_ASSERT_EQUAL(r.status, 500);
  e2e_resp_clear(&r);
  e2e_chat(s, CHAT, 0, 5000, &r);
  CU_ASSERT_EQUAL(r.status, 200);
  CU_ASSERT(strstr(r.body, "still here") != NULL);
  e2e_resp_clear(&r);
  e2e_stop(s);
  CU_ASSERT_EQUAL(e2e_count(s, "error"), 3);
  CU_ASSERT(t_has(e2e_str(e2e_event(s, "error", 0), "message"), ":2: boom"));
  CU_ASSERT_STRING_EQUAL(e2e_str(e2e_end_of(s, 0), "how"), "error");
  e2e_free(s);
}

static void test_bad_scenario_does_not_start(void) {
  char path[] = "/tmp/fbx-bad-XXXXXX.lua";
  int fd = mkstemps(path, 4);
  const char *lua = "return scenario { name = 't', provider = { chat { bogus = 1 } } }";
  CU_ASSERT(write(fd, lua, strlen(lua)) > 0);
  close(fd);
  sim_server_opts o = {.scenario_path = path};
  sim_server *srv = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim_server_start(&o, &srv, err), SIM_ELOAD);
  CU_ASSERT(strstr(err, path) != NULL && strstr(err, ":1:") != NULL);
  unlink(path);
}

static void test_unwritable_trace(void) {
  char path[] = "/tmp/fbx-ok-XXXXXX.lua";
  int fd = mkstemps(path, 4);
  const char *lua = "return scenario { name = 't', provider = { chat {} } }";
  CU_ASSERT(write(fd, lua, strlen(lua)) > 0);
  close(fd);
  sim_server_opts o = {.scenario_path = path, .trace_path = "/nonexistent-dir/trace.jsonl"};
  sim_server *srv = NULL;
  char err[SIM_ERRLEN];
  CU_ASSERT_EQUAL(sim_server_start(&o, &srv, err), SIM_EIO);
  CU_ASSERT(strstr(err, "/nonexistent-dir/trace.jsonl") != NULL);
  unlink(path);
}

static int trace_errors;
static char trace_error_msg[SIM_ERRLEN];

static void count_trace_error(void *arg, const char *msg) {
  (void)arg;
  trace_errors++;
  snprintf(trace_error_msg, sizeof trace_error_msg, "%s", msg);
}

/* issue 11: a trace write that fails (the disk fills mid-session) is an
   error, told once, and sim_server_stop reports it; before, the writer
   went on silently and the session ended "fine" with a trace cut mid-line. */
static void test_full_disk_is_an_error(void) {
  char path[] = "/tmp/fbx-ok-XXXXXX.lua";
  int fd = mkstemps(path, 4);
  const char *lua = "return scenario { name = 't', provider = { chat {} } }";
  CU_ASSERT(write(fd, lua, strlen(lua)) > 0);
  close(fd);
  /* A "disk" of 1,000 bytes: the session line fits, a few attempts do not. */
  static char disk[1000];
  FILE *f = fmemopen(disk, sizeof disk, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  trace_errors = 0;
  sim_server_opts o = {.scenario_path = path, .trace_stream = f,
                       .on_trace_error = count_trace_error};
  e2e_server s = {0};
  char err[SIM_ERRLEN] = "";
  CU_ASSERT_EQUAL_FATAL(sim_server_start(&o, &s.srv, err), SIM_OK);
  s.port = sim_server_port(s.srv);
  for (int i = 0; i < 6; i++) {
    e2e_resp r;
    e2e_chat(&s, "/v1/chat/completions", 0, 3000, &r);
    CU_ASSERT_EQUAL(r.status, 200); /* the library keeps answering */
    e2e_resp_clear(&r);
  }
  CU_ASSERT_EQUAL(sim_server_stop(s.srv, err), SIM_EIO);
  CU_ASSERT_EQUAL(trace_errors, 1);
  CU_ASSERT(strstr(err, "cannot write trace") != NULL);
  CU_ASSERT(strstr(trace_error_msg, "cannot write trace") != NULL);
  fclose(f);

  /* /dev/full fails the first line: an error too, with the disk named. */
  sim_server_opts o2 = {.scenario_path = path, .trace_path = "/dev/full"};
  sim_server *srv = NULL;
  CU_ASSERT_EQUAL_FATAL(sim_server_start(&o2, &srv, err), SIM_OK);
  CU_ASSERT_EQUAL(sim_server_stop(srv, err), SIM_EIO);
  CU_ASSERT(strstr(err, "/dev/full: cannot write trace: No space left on device") != NULL);
  /* A whole trace stops cleanly. */
  sim_server_opts o3 = {.scenario_path = path};
  CU_ASSERT_EQUAL_FATAL(sim_server_start(&o3, &srv, err), SIM_OK);
  CU_ASSERT_EQUAL(sim_server_stop(srv, err), SIM_OK);
  CU_ASSERT_EQUAL(sim_server_stop(NULL, err), SIM_OK);
  unlink(path);
}

/* A client that has read its whole (delayed) answer may stop the server
   at once (exec does when the command exits): the request is traced as
   completed, not `shutdown`, though libmicrohttpd reports it complete a
   loop turn after the last byte went out (a slow machine, ASan or valgrind
   widens that turn). Many servers, each stopped the moment its answer is
   in. */
static void test_answer_delivered_before_stop(void) {
  for (int i = 0; i < 20; i++) {
    e2e_server *s = e2e_start("return scenario { name='t', provider = { delay { 0.02, chat {} } } }", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    e2e_resp r;
    e2e_chat(s, CHAT, 0, 5000, &r);
    CU_ASSERT_EQUAL(r.status, 200);
    CU_ASSERT_EQUAL(r.rc, CURLE_OK);
    e2e_resp_clear(&r);
    e2e_stop(s);
    const char *how = e2e_str(e2e_end_of(s, 0), "how");
    CU_ASSERT(how != NULL && strcmp(how, "complete") == 0);
    if (how == NULL || strcmp(how, "complete") != 0)
      fprintf(stderr, "\n  server %d: the delivered answer is traced how=%s\n", i, how ? how : "(none)");
    e2e_free(s);
  }
}

static size_t discard(char *p, size_t size, size_t n, void *arg) {
  (void)p;
  (void)arg;
  return size * n;
}

/* The arrive line's headers are remembered per keep-alive connection
   (sim/hdr_memo.c, issue 30). Five requests on one connection: the same
   headers twice (the second written from the memo: the same object, the
   secret still redacted), a changed value, a header sent twice (joined),
   and the first headers again. A memo keyed on less than every name and
   value, or kept before redaction, fails here. */
static void test_headers_remembered_per_connection(void) {
  e2e_server *s = e2e_start("return scenario { name='memo', provider = { chat{} } }", 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char url[128];
  snprintf(url, sizeof url, "http://127.0.0.1:%d%s", s->port, CHAT);
  CURL *h = curl_easy_init();
  CU_ASSERT_PTR_NOT_NULL_FATAL(h);
  const char *const sets[5][4] = {
      {"X-Api-Key: sk-ant-SECRET-789", "X-Turn: 1", NULL},
      {"X-Api-Key: sk-ant-SECRET-789", "X-Turn: 1", NULL},
      {"X-Api-Key: sk-ant-SECRET-789", "X-Turn: 2", NULL},
      {"X-Api-Key: sk-ant-SECRET-789", "X-Turn: 3", "X-Turn: 4", NULL},
      {"X-Api-Key: sk-ant-SECRET-789", "X-Turn: 1", NULL},
  };
  long reused = 0;
  for (int i = 0; i < 5; i++) {
    struct curl_slist *hl = curl_slist_append(NULL, "Content-Type: application/json");
    for (int k = 0; sets[i][k] != NULL; k++) hl = curl_slist_append(hl, sets[i][k]);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{\"model\":\"m\"}");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    CU_ASSERT_EQUAL(curl_easy_perform(h), CURLE_OK);
    long fresh = -1;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &fresh);
    if (i > 0 && fresh == 0) reused++;
    curl_slist_free_all(hl);
  }
  curl_easy_cleanup(h);
  CU_ASSERT_EQUAL(reused, 4); /* one connection throughout */
  e2e_stop(s);
  const char *turn[5] = {"1", "1", "2", "3, 4", "1"};
  char *first = NULL;
  for (int i = 0; i < 5; i++) {
    cJSON *hd = cJSON_GetObjectItem(e2e_event(s, "arrive", i), "headers");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hd);
    CU_ASSERT_STRING_EQUAL(e2e_str(hd, "x-api-key"), "[redacted]");
    CU_ASSERT_STRING_EQUAL(e2e_str(hd, "x-turn"), turn[i]);
    char *txt = cJSON_PrintUnformatted(hd);
    if (i == 0) first = txt;
    else {
      if (i == 1 || i == 4) CU_ASSERT_STRING_EQUAL(txt, first);
      free(txt);
    }
  }
  free(first);
  assert_no_secret(s);
  e2e_free(s);
}

int suite_trace(void) {
  CU_pSuite s = CU_add_suite("e2e_trace", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "session and done lines, secrets redacted", test_session_done_and_redaction);
  CU_add_test(s, "scenario errors at run time", test_runtime_error_is_a_500);
  CU_add_test(s, "a bad scenario does not start", test_bad_scenario_does_not_start);
  CU_add_test(s, "an unwritable trace is an error at start", test_unwritable_trace);
  CU_add_test(s, "a full disk is an error, told once", test_full_disk_is_an_error);
  CU_add_test(s, "an answer delivered just before stop is complete", test_answer_delivered_before_stop);
  CU_add_test(s, "two interleaved logical requests each count from attempt 1",
              test_interleaved_logical_requests);
  CU_add_test(s, "arrive headers remembered per keep-alive connection",
              test_headers_remembered_per_connection);
  return CU_get_error();
}
