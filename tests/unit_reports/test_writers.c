/*
 * test_writers.c - the terminal table and progress line, the JSON document,
 * JUnit XML (well-formed, checked by python3's XML parser when present) and
 * the HTML page (self-contained, hostile text escaped), on rt_sample_run.
 */
#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpt_test.h"

/* Runs a writer into a temporary file and returns what it wrote. */
typedef int (*writer_fn)(const rpt_run *, const char *, char *);
static char *write_with(writer_fn fn, const char *suffix, char **path_out) {
  rpt_run *run = rt_sample_run();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  char *path = rt_tmppath(suffix), err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(fn(run, path, err), 0);
  rpt_run_free(run);
  char *text = rt_slurp(path, NULL);
  CU_ASSERT_PTR_NOT_NULL(text);
  if (path_out) *path_out = path;
  else {
    unlink(path);
    free(path);
  }
  return text;
}

static char *term_text(int color) {
  rpt_run *run = rt_sample_run();
  CU_ASSERT_PTR_NOT_NULL_FATAL(run);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CU_ASSERT_EQUAL(rpt_run_write_term(run, f, color), 0);
  fclose(f);
  rpt_run_free(run);
  return buf;
}

static void test_term_table(void) {
  char *t = term_text(0);
  CU_ASSERT(rt_has(t, "SCENARIO"));
  CU_ASSERT(rt_has(t, "PASS  429 then ok [guard]"));
  CU_ASSERT(rt_has(t, "FAIL  expired key retried"));
  CU_ASSERT(rt_has(t, "no_retry_after: attempt 2 of request hash:0000000000000021 arrived 998 ms"));
  CU_ASSERT(rt_has(t, "ERROR broken <scenario>"));
  CU_ASSERT(rt_has(t, "scenarios/broken.lua:3: unexpected symbol"));
  CU_ASSERT(rt_has(t, "4 scenarios: 1 passed, 2 failed, 1 error; 10/13 verdicts hold, 2 n/a"));
  CU_ASSERT(rt_has(t, "1234 ms")); /* wall time given by the caller */
  CU_ASSERT(!rt_has(t, "\x1b"));   /* no colour, and the trace's escapes neutralised */
  CU_ASSERT(!rt_has(t, "\x07"));
  CU_ASSERT(rt_has(t, "?[31mred"));
  free(t);
  t = term_text(1);
  CU_ASSERT(rt_has(t, "\x1b[32mPASS"));
  CU_ASSERT(rt_has(t, "\x1b[31mFAIL"));
  CU_ASSERT(!rt_has(t, "\x1b[31mred")); /* only our own colours */
  free(t);
}

static void test_progress(void) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  rpt_progress(f, 3, 10, 2, 1, 0);
  fflush(f);
  CU_ASSERT_EQUAL(len, 0);
  rpt_progress(f, 3, 10, 2, 1, 1);
  rpt_progress_clear(f, 1);
  fclose(f);
  CU_ASSERT_STRING_EQUAL(buf, "\r3/10 scenarios, 2 passed, 1 failed\x1b[K\r\x1b[K");
  free(buf);
}

static void test_json(void) {
  char *t = write_with(rpt_run_write_json, ".json", NULL);
  cJSON *doc = cJSON_Parse(t);
  CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(doc, "scenarios")->valueint, 4);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(doc, "verdicts_failed")->valueint, 3);
  cJSON *res = cJSON_GetObjectItem(doc, "results");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(res), 4);
  cJSON *r1 = cJSON_GetArrayItem(res, 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r1, "status")->valuestring, "fail");
  cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(r1, "verdicts"), 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(v, "name")->valuestring, "no_retry_after");
  CU_ASSERT(rt_has(cJSON_GetObjectItem(v, "evidence")->valuestring, "after a 401"));
  cJSON *a0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(res, 0), "attempts"), 0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(a0, "retry_after_ms")->valueint, 2000);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(a0, "class")->valuestring, "transient");
  cJSON *r2 = cJSON_GetArrayItem(res, 2);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r2, "name")->valuestring, RT_HOSTILE_NAME);
  /* Invalid UTF-8 from the trace comes out as U+FFFD, so the document is valid. */
  cJSON *a = cJSON_GetArrayItem(cJSON_GetObjectItem(r2, "attempts"), 0);
  CU_ASSERT(rt_has(cJSON_GetObjectItem(a, "key")->valuestring, "\xEF\xBF\xBD\xEF\xBF\xBD"));
  cJSON *r3 = cJSON_GetArrayItem(res, 3);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(r3, "status")->valuestring, "error");
  cJSON_Delete(doc);
  free(t);
}

/* python3's strict XML parser, when it is there (exit 77 = not there). */
static int python_xml_check(const char *path) {
  char cmd[4600];
  snprintf(cmd, sizeof cmd,
           "command -v python3 >/dev/null 2>&1 || exit 77; "
           "python3 -c 'import xml.dom.minidom,sys; xml.dom.minidom.parse(sys.argv[1])' '%s'",
           path);
  int st = system(cmd);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_junit(void) {
  char *path = NULL;
  char *t = write_with(rpt_run_write_junit, ".xml", &path);
  CU_ASSERT(rt_has(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
  CU_ASSERT(rt_has(t, "<testsuite name=\"fusebox\" tests=\"4\" failures=\"2\" errors=\"1\""));
  CU_ASSERT(rt_has(t, "<testcase classname=\"fusebox.ratelimit\" name=\"429 then ok [guard]\""));
  /* one failure per testcase, naming every failed verdict, evidence in its text */
  CU_ASSERT(rt_has(t, "<failure message=\"1 verdict failed: no_retry_after\" type=\"verdict\">"
                      "no_retry_after: attempt 2 of request"));
  CU_ASSERT(rt_has(t, "<failure message=\"2 verdicts failed: attempts, outcome\""));
  CU_ASSERT(rt_has(t, "<error message=\"scenarios/broken.lua:3: unexpected symbol near &#39;&lt;&#39;\""));
  CU_ASSERT(rt_has(t, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39;"));
  CU_ASSERT(!rt_has(t, "<script>"));
  CU_ASSERT(!rt_has(t, "\x1b"));
  CU_ASSERT(!rt_has(t, "\xff"));
  int rc = python_xml_check(path);
  if (rc == 77)
    fprintf(stderr, "\n  (python3 missing: XML well-formedness not checked)\n");
  else
    CU_ASSERT_EQUAL(rc, 0);
  unlink(path);
  free(path);
  free(t);
}

static void test_html(void) {
  char *path = NULL;
  char *t = write_with(rpt_run_write_html, ".html", &path);
  CU_ASSERT(rt_has(t, "<!DOCTYPE html>"));
  CU_ASSERT(rt_has(t, "Content-Security-Policy"));
  /* Hostile text is escaped everywhere: no injected script or markup; the
     one script is the summary's filter, allowed by its hash alone. */
  const char *sc = strstr(t, "<script");
  CU_ASSERT(sc != NULL && strncmp(sc, "<script>(function(){var W=", 26) == 0);
  CU_ASSERT(sc != NULL && strstr(sc + 1, "<script") == NULL);
  CU_ASSERT(rt_has(t, "script-src 'sha256-"));
  CU_ASSERT(!rt_has(t, "<svg onload"));
  CU_ASSERT(!rt_has(t, "<img"));
  CU_ASSERT(!rt_has(t, "idem:<b>"));
  CU_ASSERT(rt_has(t, "&lt;img src=x&gt;"));
  CU_ASSERT(rt_has(t, "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"));
  CU_ASSERT(rt_has(t, "&quot;&gt;&lt;svg onload=alert(1)&gt;"));
  CU_ASSERT(!rt_has(t, "\x1b"));
  CU_ASSERT(!rt_has(t, "\xff"));
  /* Self-contained: no fetched resource. */
  CU_ASSERT(!rt_has(t, "src=\""));
  CU_ASSERT(!rt_has(t, "href=\"http"));
  CU_ASSERT(!rt_has(t, "url("));
  CU_ASSERT(!rt_has(t, "@import"));
  /* Timelines: bars by class, a Retry-After window, the deadline, effects. */
  CU_ASSERT(rt_has(t, "<svg class=\"tl\""));
  CU_ASSERT(rt_has(t, "<rect class=\"transient\""));
  CU_ASSERT(rt_has(t, "<rect class=\"ok\""));
  CU_ASSERT(rt_has(t, "<rect class=\"ra\""));
  /* The deadline far past the activity is marked at the axis' edge. */
  CU_ASSERT(rt_has(t, "beyond the axis"));
  CU_ASSERT(rt_has(t, "<polygon class=\"fx-applied\""));
  /* Triage: failed first, the failed verdicts named, counted across the run. */
  const char *f1 = strstr(t, "<tr data-st=\"failed\""), *p1 = strstr(t, "<tr data-st=\"passed\"");
  CU_ASSERT(f1 != NULL && p1 != NULL && f1 < p1);
  CU_ASSERT(rt_has(t, "<td class=\"fv\">no_retry_after</td>"));
  CU_ASSERT(rt_has(t, "<b>no_retry_after</b> failed in 1 scenario:"));
  CU_ASSERT(rt_has(t, "<li class=\"v-fail\"><b>no_retry_after</b>"));
  unlink(path);
  free(path);
  free(t);
}

/* Writers report a path they cannot write. */
static void test_write_errors(void) {
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN];
  CU_ASSERT_EQUAL(rpt_run_write_json(run, "/nonexistent/dir/r.json", err), RPT_EIO);
  CU_ASSERT(rt_has(err, "/nonexistent/dir/r.json"));
  CU_ASSERT_EQUAL(rpt_run_write_junit(run, "/nonexistent/dir/r.xml", err), RPT_EIO);
  CU_ASSERT_EQUAL(rpt_run_write_html(run, "/nonexistent/dir/r.html", err), RPT_EIO);
  /* An empty run still writes valid documents. */
  char *p = rt_tmppath(".xml");
  CU_ASSERT_EQUAL(rpt_run_write_junit(run, p, err), 0);
  int rc = python_xml_check(p);
  if (rc != 77) CU_ASSERT_EQUAL(rc, 0);
  unlink(p);
  free(p);
  rpt_run_free(run);
}

/* issue 11: the page does not grow with attempts: a request retried
   20,000 times draws its first and last 20 attempts and one band for the
   rest (before, 20,000 bars with a title each: several megabytes). */
static void test_html_many_attempts(void) {
  size_t cap = 4u << 20, len = 0;
  char *trace = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(trace);
  len += (size_t)snprintf(trace + len, cap - len,
                          "{\"ev\":\"session\",\"t\":0,\"scenario\":\"storm\",\"time_scale\":1,"
                          "\"expect\":{\"attempts\":{\"max\":3}}}\n");
  int n = 20000;
  for (int i = 1; i <= n && len + 256 < cap; i++)
    len += (size_t)snprintf(trace + len, cap - len,
                            "{\"ev\":\"arrive\",\"t\":%d,\"id\":%d,\"key\":\"hash:ab12ab12ab12ab12\","
                            "\"attempt\":%d,\"method\":\"POST\",\"path\":\"/v1/chat/completions\"}\n"
                            "{\"ev\":\"end\",\"t\":%d,\"id\":%d,\"step\":\"fail\",\"status\":503,"
                            "\"how\":\"complete\"}\n",
                            2 * i, i, i, 2 * i + 1, i);
  len += (size_t)snprintf(trace + len, cap - len, "{\"ev\":\"done\",\"t\":%d}\n", 2 * n + 2);
  char *tpath = rt_tmpfile(trace, len);
  free(trace);
  CU_ASSERT_PTR_NOT_NULL_FATAL(tpath);
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN];
  rpt_input in = {.file = "storm.lua", .client = "guard", .trace_path = tpath};
  CU_ASSERT_EQUAL(rpt_run_add(run, &in, err), RPT_OK);
  char *hpath = rt_tmppath(".html");
  CU_ASSERT_EQUAL(rpt_run_write_html(run, hpath, err), RPT_OK);
  size_t hlen = 0;
  char *html = rt_slurp(hpath, &hlen);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  if (hlen >= 200000) fprintf(stderr, "\n  HTML of %zu bytes for %d attempts\n", hlen, n);
  CU_ASSERT(hlen < 200000);
  CU_ASSERT(rt_has(html, "attempts 21 to 19980 (19960) not drawn one by one"));
  CU_ASSERT(rt_has(html, "attempt 20000"));
  free(html);
  unlink(hpath);
  unlink(tpath);
  free(hpath);
  free(tpath);
  rpt_run_free(run);
}

/* A trace of n concurrent calls (issue 24): call i's first attempt from
   t = i to 1000 + i is a 429, its retry from 2000 to 2010 is ok. */
static char *herd_trace(int n, size_t *len) {
  size_t cap = 1u << 20;
  char *t = malloc(cap);
  if (t == NULL) return NULL;
  *len = (size_t)snprintf(t, cap, "{\"ev\":\"session\",\"t\":0,\"scenario\":\"herd\","
                                  "\"time_scale\":1,\"expect\":{\"outcome\":\"ok\"}}\n");
  for (int i = 0; i < n && *len + 1024 < cap; i++)
    *len += (size_t)snprintf(
        t + *len, cap - *len,
        "{\"ev\":\"arrive\",\"t\":%d,\"id\":%d,\"key\":\"hash:%04d\",\"attempt\":1,"
        "\"method\":\"POST\",\"path\":\"/v1/chat/completions\"}\n"
        "{\"ev\":\"end\",\"t\":%d,\"id\":%d,\"step\":\"fail\",\"status\":429,\"how\":\"complete\"}\n"
        "{\"ev\":\"arrive\",\"t\":2000,\"id\":%d,\"key\":\"hash:%04d\",\"attempt\":2,"
        "\"method\":\"POST\",\"path\":\"/v1/chat/completions\"}\n"
        "{\"ev\":\"end\",\"t\":2010,\"id\":%d,\"step\":\"chat\",\"status\":200,\"how\":\"complete\"}\n"
        "{\"ev\":\"client\",\"t\":2010,\"call\":%d,\"outcome\":\"ok\",\"total_ms\":%d,"
        "\"attempts\":2}\n",
        i, 2 * i + 1, i, 1000 + i, 2 * i + 1, 2 * i + 2, i, 2 * i + 2, i, 2010 - i);
  *len += (size_t)snprintf(t + *len, cap - *len, "{\"ev\":\"done\",\"t\":2020}\n");
  return t;
}

/* The HTML page of a herd of n calls; NULL on failure. */
static char *herd_html(int n) {
  size_t len = 0;
  char *trace = herd_trace(n, &len);
  if (trace == NULL) return NULL;
  char *tpath = rt_tmpfile(trace, len);
  free(trace);
  rpt_run *run = rpt_run_new();
  char err[RPT_ERRLEN], *html = NULL;
  rpt_input in = {.file = "herd.lua", .client = "naive", .trace_path = tpath};
  char *hpath = rt_tmppath(".html");
  if (tpath && run && rpt_run_add(run, &in, err) == RPT_OK &&
      rpt_run_write_html(run, hpath, err) == RPT_OK) {
    size_t hlen;
    html = rt_slurp(hpath, &hlen);
  }
  unlink(hpath);
  if (tpath) unlink(tpath);
  free(hpath);
  free(tpath);
  rpt_run_free(run);
  return html;
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

/* issue 24: 100 concurrent calls are one band with their count and the
   most in flight at once, not 100 rows; 10 calls stay rows, each named by
   its own call (concurrent spans overlap: the best-matching one). */
static void test_html_herd_band(void) {
  char *html = herd_html(100);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT_EQUAL(count_of(html, "<g class=\"band\" data-calls=\"100\">"), 1);
  CU_ASSERT(rt_has(html, ">100 calls \xC2\xB7 primary</text>"));
  CU_ASSERT(rt_has(html, ">200 attempts \xC2\xB7 peak 100 in flight</text>"));
  CU_ASSERT(rt_has(html, "100 attempts began (100 ok)"));
  CU_ASSERT_EQUAL(count_of(html, ">call "), 0);
  free(html);
  html = herd_html(10);
  CU_ASSERT_PTR_NOT_NULL_FATAL(html);
  CU_ASSERT_EQUAL(count_of(html, "class=\"band\""), 0);
  char want[64];
  for (int i = 0; i < 10; i++) {
    snprintf(want, sizeof want, ">call %d \xC2\xB7 primary</text>", i);
    CU_ASSERT_EQUAL(count_of(html, want), 1);
  }
  free(html);
}

#define ADD(s, name, fn)                                        \
  if (CU_add_test(s, name, fn) == NULL) return CU_get_error()

int suite_writer_term(void) {
  CU_pSuite s = CU_add_suite("writer_term", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "table, evidence, colours, escapes", test_term_table);
  ADD(s, "progress line", test_progress);
  return 0;
}

int suite_writer_json(void) {
  CU_pSuite s = CU_add_suite("writer_json", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "one document per run", test_json);
  ADD(s, "unwritable paths, empty run", test_write_errors);
  return 0;
}

int suite_writer_junit(void) {
  CU_pSuite s = CU_add_suite("writer_junit", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "well-formed, one failure per verdict", test_junit);
  return 0;
}

int suite_writer_html(void) {
  CU_pSuite s = CU_add_suite("writer_html", NULL, NULL);
  if (s == NULL) return CU_get_error();
  ADD(s, "self-contained, escaped, timelines", test_html);
  ADD(s, "bounded for many attempts", test_html_many_attempts);
  ADD(s, "a herd is one band with its count", test_html_herd_band);
  return 0;
}
