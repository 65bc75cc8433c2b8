/* rpt_test.c - helpers of the unit_reports tests (see rpt_test.h). */
#include "rpt_test.h"

#include <CUnit/CUnit.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The folder of the data traces (no trailing slash). */
const char *rt_data_dir(void) {
  static char dir[4096];
  if (dir[0]) return dir;
  const char *src = getenv("FUSEBOX_SRC");
  if (src && *src) {
    snprintf(dir, sizeof dir, "%s/tests/data/traces", src);
  } else {
    /* This file is tests/unit_reports/rpt_test.c: go up one folder. */
    snprintf(dir, sizeof dir, "%s", __FILE__);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, "tests");
    strncat(dir, "/data/traces", sizeof dir - strlen(dir) - 1);
  }
  return dir;
}

/* The full path of data trace name into out; returns out. */
const char *rt_data_path(const char *name, char *out, size_t n) {
  int w = snprintf(out, n, "%s/%s", rt_data_dir(), name);
  if (w < 0 || (size_t)w >= n) out[0] = '\0'; /* a cut path would name another file */
  return out;
}

/* A temporary path that does not exist yet (caller frees and unlinks). */
char *rt_tmppath(const char *suffix) {
  char tmpl[] = "/tmp/rpt_test_XXXXXX";
  int fd = mkstemp(tmpl);
  if (fd < 0) return NULL;
  close(fd);
  unlink(tmpl);
  size_t n = strlen(tmpl) + strlen(suffix) + 1;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s%s", tmpl, suffix);
  return p;
}

/* Writes text to a new temporary file; returns its path (caller frees and unlinks). */
char *rt_tmpfile(const char *text, size_t len) {
  char *p = rt_tmppath(".jsonl");
  if (p == NULL) return NULL;
  FILE *f = fopen(p, "wb");
  if (f == NULL) {
    free(p);
    return NULL;
  }
  fwrite(text, 1, len, f);
  fclose(f);
  return p;
}

/* Reads a whole file (caller frees); NULL on failure. */
char *rt_slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

/* 1 when haystack contains needle. */
int rt_has(const char *haystack, const char *needle) {
  return haystack && needle && strstr(haystack, needle) != NULL;
}

/* The status of the named verdict, or -1 when absent. */
int rt_status(const rpt_judgement *j, const char *name) {
  const rpt_verdict *v = rpt_judgement_find(j, name);
  return v ? (int)v->status : -1;
}

/* The evidence of the named verdict, or "". */
const char *rt_evidence(const rpt_judgement *j, const char *name) {
  const rpt_verdict *v = rpt_judgement_find(j, name);
  return v && v->evidence ? v->evidence : "";
}

static int status_of(const char *word) {
  if (strcmp(word, "pass") == 0) return RPT_PASS;
  if (strcmp(word, "fail") == 0) return RPT_FAIL;
  if (strcmp(word, "skip") == 0 || strcmp(word, "n/a") == 0) return RPT_NA;
  if (strcmp(word, "absent") == 0) return -1; /* no such verdict (rt_status) */
  return -2;
}

static const char *word_of(int st) {
  return st == RPT_PASS ? "pass" : st == RPT_FAIL ? "fail" : st == RPT_NA ? "n/a" : "absent";
}

/* The x_test object of a data trace's first line (caller deletes). */
static cJSON *read_case(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *line = NULL;
  size_t cap = 0;
  cJSON *c = NULL;
  if (getline(&line, &cap, f) > 0) {
    cJSON *s = cJSON_Parse(line);
    cJSON *x = cJSON_DetachItemFromObject(s, "x_test");
    cJSON_Delete(s);
    c = x;
  }
  free(line);
  fclose(f);
  return c;
}

/* Checks one data trace against its x_test. */
int rt_check_data_file(const char *path, char *why, size_t n) {
  cJSON *x = read_case(path);
  if (!cJSON_IsObject(x)) {
    snprintf(why, n, "no x_test in the session line");
    cJSON_Delete(x);
    return 0;
  }
  char err[RPT_ERRLEN] = "";
  rpt_judgement *j = NULL;
  int ok = 1;
  int rc = rpt_judge_trace_file(path, NULL, NULL, NULL, &j, err);
  const cJSON *want_err = cJSON_GetObjectItem(x, "error");
  if (cJSON_IsString(want_err)) {
    if (rc != RPT_EEXPECT || !rt_has(err, want_err->valuestring)) {
      snprintf(why, n, "wanted error containing \"%s\", got %d \"%s\"", want_err->valuestring, rc,
               err);
      ok = 0;
    }
    goto out;
  }
  if (rc != 0) {
    snprintf(why, n, "judging failed: %s", err);
    ok = 0;
    goto out;
  }
  const cJSON *it;
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(x, "verdicts")) {
    int want = cJSON_IsString(it) ? status_of(it->valuestring) : -2;
    int got = rt_status(j, it->string);
    if (want != got) {
      const rpt_verdict *v = rpt_judgement_find(j, it->string);
      snprintf(why, n, "%s: wanted %s, got %s (%s)", it->string,
               cJSON_IsString(it) ? it->valuestring : "?", word_of(got), v ? v->evidence : "");
      ok = 0;
      goto out;
    }
  }
  cJSON_ArrayForEach(it, cJSON_GetObjectItem(x, "evidence")) {
    const rpt_verdict *v = rpt_judgement_find(j, it->string);
    if (!cJSON_IsString(it) || v == NULL || !rt_has(v->evidence, it->valuestring)) {
      snprintf(why, n, "%s: evidence \"%s\" lacks \"%s\"", it->string, v ? v->evidence : "(none)",
               cJSON_IsString(it) ? it->valuestring : "?");
      ok = 0;
      goto out;
    }
  }
  const cJSON *count = cJSON_GetObjectItem(x, "count");
  if (cJSON_IsNumber(count) && count->valueint != rpt_judgement_count(j)) {
    snprintf(why, n, "wanted %d verdicts, got %d", count->valueint, rpt_judgement_count(j));
    ok = 0;
    goto out;
  }
  /* "scenario": the scenario's status word in a run ("pass", "fail", "n/a"). */
  const cJSON *scen = cJSON_GetObjectItem(x, "scenario");
  if (cJSON_IsString(scen)) {
    rpt_run *run = rpt_run_new();
    rpt_input in = {.trace_path = path};
    rpt_result res = {0};
    if (run == NULL || rpt_run_add(run, &in, err) != 0 || rpt_run_result(run, 0, &res) != 0 ||
        strcmp(res.status, scen->valuestring) != 0) {
      snprintf(why, n, "scenario: wanted %s, got %s %s", scen->valuestring,
               res.status ? res.status : "nothing", err);
      ok = 0;
    }
    rpt_run_free(run);
    if (!ok) goto out;
  }
  const cJSON *complete = cJSON_GetObjectItem(x, "complete");
  if (cJSON_IsBool(complete)) {
    rpt_trace *tr = NULL;
    if (rpt_trace_read_file(path, &tr, err) != 0 ||
        rpt_trace_complete(tr) != cJSON_IsTrue(complete)) {
      snprintf(why, n, "completeness differs");
      ok = 0;
    }
    rpt_trace_free(tr);
  }
out:
  rpt_judgement_free(j);
  cJSON_Delete(x);
  return ok;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Runs rt_check_data_file on every data trace whose name starts with prefix. */
void rt_check_prefix(const char *prefix) {
  DIR *d = opendir(rt_data_dir());
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  char *names[512];
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL && n < 512) {
    size_t len = strlen(de->d_name);
    if (strncmp(de->d_name, prefix, strlen(prefix)) == 0 && len > 6 &&
        strcmp(de->d_name + len - 6, ".jsonl") == 0)
      names[n++] = strdup(de->d_name);
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  CU_ASSERT(n > 0);
  for (int i = 0; i < n; i++) {
    char path[4096], why[600] = "", msg[900];
    rt_data_path(names[i], path, sizeof path);
    int ok = rt_check_data_file(path, why, sizeof why);
    snprintf(msg, sizeof msg, "%s: %s", names[i], why);
    if (!ok) fprintf(stderr, "\n  data case %s\n", msg);
    CU_assertImplementation(ok ? CU_TRUE : CU_FALSE, __LINE__, msg, __FILE__, "", CU_FALSE);
    free(names[i]);
  }
}

/* Judges a trace given as text. The caller frees the judgement. */
rpt_judgement *rt_judge_text(const char *trace, const char *expect, const char *client, int *rc,
                             char err[RPT_ERRLEN]) {
  rpt_trace *tr = NULL;
  rpt_judgement *j = NULL;
  *rc = rpt_trace_read_mem(trace, strlen(trace), "inline", &tr, err);
  if (*rc == 0) *rc = rpt_judge(tr, expect, client, NULL, &j, err);
  rpt_trace_free(tr);
  return j;
}

/* A trace whose every string is hostile. */
static const char hostile[] =
    "{\"ev\":\"session\",\"t\":0,\"scenario\":\"<script>alert(\\\"x\\\")</script> & 'q' "
    "\\u001b[31mred\",\"file\":\"scenarios/<evil>/x.lua\",\"time_scale\":1,"
    "\"expect\":{\"attempts\":1,\"outcome\":\"ok\"},\"client\":{\"deadline\":1}}\n"
    "{\"ev\":\"arrive\",\"t\":1,\"id\":1,\"key\":\"idem:<b>&amp;]]>\xff\xfe\",\"attempt\":1,"
    "\"provider\":\"\\\"><svg onload=alert(1)>\",\"method\":\"POST\",\"path\":\"/v1/<x>\"}\n"
    "{\"ev\":\"end\",\"t\":2,\"id\":1,\"status\":429,\"how\":\"complete\",\"retry_after_ms\":50,"
    "\"code\":\"<i>\\u0000</i>\"}\n"
    "{\"ev\":\"arrive\",\"t\":80,\"id\":2,\"key\":\"idem:<b>&amp;]]>\xff\xfe\",\"attempt\":2,"
    "\"provider\":\"\\\"><svg onload=alert(1)>\",\"method\":\"POST\",\"path\":\"/v1/<x>\"}\n"
    "{\"ev\":\"effect\",\"t\":81,\"id\":2,\"name\":\"<img src=x>\",\"key\":\"k\",\"action\":\"applied\",\"count\":1}\n"
    "{\"ev\":\"end\",\"t\":90,\"id\":2,\"status\":200,\"how\":\"complete\"}\n"
    "{\"ev\":\"client\",\"t\":95,\"call\":0,\"outcome\":\"error\",\"reason\":\"</td><script>\\u0007\",\"total_ms\":94}\n"
    "{\"ev\":\"done\",\"t\":100}\n";

/* A run of four scenarios (see rpt_test.h). The caller frees it. */
rpt_run *rt_sample_run(void) {
  rpt_run *run = rpt_run_new();
  char path[4096], err[RPT_ERRLEN];
  rpt_input in = {0};
  in.trace_path = rt_data_path("attempts_pass_exact.jsonl", path, sizeof path);
  in.client = "guard";
  if (rpt_run_add(run, &in, err) != 0) goto fail;
  in = (rpt_input){0};
  in.trace_path = rt_data_path("nra_fail_401.jsonl", path, sizeof path);
  in.wall_ms = 1234;
  if (rpt_run_add(run, &in, err) != 0) goto fail;
  in = (rpt_input){0};
  if (rpt_trace_read_mem(hostile, sizeof hostile - 1, "hostile", &in.trace, err) != 0) goto fail;
  in.client = "naive\x1b]0;pwned\x07";
  if (rpt_run_add(run, &in, err) != 0) goto fail;
  if (rpt_run_add_error(run, "broken <scenario>", "scenarios/broken.lua",
                        "scenarios/broken.lua:3: unexpected symbol near '<'") != 0)
    goto fail;
  return run;
fail:
  fprintf(stderr, "\n  rt_sample_run: %s\n", err);
  rpt_run_free(run);
  return NULL;
}
