/*
 * fuzz_merge.c - `fusebox report --merge SHARD.json...` (reports/
 * report_merge.c): JSON reports, read through the secret rule as the
 * program reads them (rpt_run_set_redact with sim_redact_text), joined
 * into one run, which every writer then writes.
 *
 * Input layout: one to four reports, separated by the byte 0x1e (ASCII
 * record separator, never valid inside JSON text); each is written to its
 * own file and the files are merged in that order. More than four: the
 * rest is part of the fourth.
 *
 * Checks beyond no crash: a refusal has a message and a known code; a
 * merge that succeeds writes a JSON object whose every string is what the
 * secret rule leaves unchanged (no key from a shard reaches the output),
 * and its scenario count is what rpt_run_count says.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reports/reports.h"
#include "sim/sim.h"

#define MAX_SHARDS 4

static char paths[MAX_SHARDS][256];
static FILE *devnull;

static void remove_files(void) {
  for (int i = 0; i < MAX_SHARDS; i++) unlink(paths[i]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *dir = getenv("TMPDIR");
  for (int i = 0; i < MAX_SHARDS; i++)
    snprintf(paths[i], sizeof paths[i], "%s/fusebox-fuzz-merge-%ld-%d.json",
             dir && *dir ? dir : "/tmp", (long)getpid(), i);
  devnull = fopen("/dev/null", "w");
  if (devnull == NULL) abort();
  atexit(remove_files);
  return 0;
}

static void write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) abort();
  if (len > 0 && fwrite(data, 1, len, f) != len) abort();
  if (fclose(f) != 0) abort();
}

/* Aborts when a string of j is one the secret rule would still change. */
static void check_redacted(const cJSON *j, int depth) {
  if (j == NULL || depth > 200) return;
  const char *texts[2] = {j->string, cJSON_IsString(j) ? j->valuestring : NULL};
  for (int i = 0; i < 2; i++) {
    if (texts[i] == NULL) continue;
    size_t n = strlen(texts[i]);
    char *r = sim_redact_text(texts[i], n);
    if (r == NULL) continue; /* out of memory */
    if (strcmp(r, texts[i]) != 0) {
      fprintf(stderr, "a secret reached the merged report: %.200s\n", texts[i]);
      abort();
    }
    free(r);
  }
  for (const cJSON *c = j->child; c != NULL; c = c->next) check_redacted(c, depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256 * 1024) return 0;
  const char *p = (const char *)data, *end = p + size;
  int n = 0;
  while (n < MAX_SHARDS) {
    const char *rs = n < MAX_SHARDS - 1 ? memchr(p, 0x1e, (size_t)(end - p)) : NULL;
    const char *stop = rs ? rs : end;
    write_file(paths[n], p, (size_t)(stop - p));
    n++;
    if (rs == NULL) break;
    p = rs + 1;
  }
  const char *ps[MAX_SHARDS];
  for (int i = 0; i < n; i++) ps[i] = paths[i];

  rpt_run *run = rpt_run_new();
  if (run == NULL) return 0;
  rpt_run_set_redact(run, sim_redact_text);
  char err[RPT_ERRLEN];
  err[0] = '\0';
  int rc = rpt_run_merge_json(run, ps, n, err);
  if (rc != RPT_OK) {
    if (err[0] == '\0') abort();
    if (rc > 0) abort();
    rpt_run_free(run);
    return 0;
  }
  char *json = rpt_run_json_text(run, err);
  if (json != NULL) {
    cJSON *doc = cJSON_Parse(json);
    if (!cJSON_IsObject(doc)) {
      fprintf(stderr, "the merged report is not a JSON object: %.200s\n", json);
      abort();
    }
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(doc, "scenarios");
    if (!cJSON_IsNumber(sc) || sc->valuedouble != (double)rpt_run_count(run)) abort();
    check_redacted(doc, 0);
    cJSON_Delete(doc);
    free(json);
  }
  rpt_run_write_term(run, devnull, 1);
  rpt_run_write_junit(run, "/dev/null", err);
  rpt_run_write_html(run, "/dev/null", err);
  rpt_run_write_markdown(run, "/dev/null", err);
  rpt_run_free(run);
  return 0;
}
