/*
 * fuzz_sim.h - what the scenario and request targets share: a scenario file
 * rewritten for each input, and a step rendered the way sim/play.c renders
 * it (bodies, stream frames, Retry-After values) without a server, each
 * rendered body checked to be JSON.
 */
#ifndef FUSEBOX_FUZZ_SIM_H
#define FUSEBOX_FUZZ_SIM_H

#include "sim/sim_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Writes len bytes to path (created or truncated); aborts when it cannot. */
static void fz_write_file(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) abort();
  if (len > 0 && fwrite(data, 1, len, f) != len) abort();
  if (fclose(f) != 0) abort();
}

/* A per-process file name in the temporary directory. */
static void fz_temp_path(char *out, size_t n, const char *what) {
  const char *dir = getenv("TMPDIR");
  snprintf(out, n, "%s/fusebox-fuzz-%s-%ld.lua", dir && *dir ? dir : "/tmp", what,
           (long)getpid());
}

/* Aborts unless s is a JSON object (or NULL, out of memory). */
static void fz_json_object(const char *s) {
  if (s == NULL) return;
  cJSON *o = cJSON_Parse(s);
  if (!cJSON_IsObject(o)) {
    fprintf(stderr, "not a JSON object: %.200s\n", s);
    abort();
  }
  cJSON_Delete(o);
}

/* Aborts unless every "data: " line of an SSE frame is JSON (or [DONE]). */
static void fz_sse_frames(const char *s) {
  if (s == NULL) return;
  const char *p = s;
  while ((p = strstr(p, "data: ")) != NULL) {
    p += 6;
    const char *eol = strchr(p, '\n');
    size_t n = eol ? (size_t)(eol - p) : strlen(p);
    if (!(n == 6 && memcmp(p, "[DONE]", 6) == 0)) {
      cJSON *o = cJSON_ParseWithLength(p, n);
      if (!cJSON_IsObject(o)) {
        fprintf(stderr, "SSE data is not a JSON object: %.200s\n", p);
        abort();
      }
      cJSON_Delete(o);
    }
    p += n;
  }
}

/* Renders a step (and the steps it wraps) as play.c would answer with it. */
static void fz_render(const sim_step *s, sim_dialect d, const char *model, int depth) {
  static const char DEFAULT_TEXT[] = "Hello from fusebox.";
  if (s == NULL || depth > 8) return;
  if (d == SIM_DIALECT_EFFECT) d = SIM_DIALECT_OPENAI;
  const char *m = s->model ? s->model : model;
  char buf[64];
  if (s->has_retry_after_ms) sim__format_seconds(s->retry_after_ms, buf);
  if (s->has_retry_after) sim__format_seconds(s->retry_after, buf);
  if (s->has_retry_after_date) {
    char date[40];
    sim__http_date(1.7e9, s->retry_after_date, date);
  }
  for (int i = 0; i < s->nheaders; i++)
    if (s->headers[i].name == NULL || s->headers[i].value == NULL) abort();
  switch (s->kind) {
  case SIM_STEP_FAIL: {
    char *b = sim__error_body(d, s->status ? s->status : 500, s->code, s->type, s->message);
    fz_json_object(b);
    free(b);
    break;
  }
  case SIM_STEP_CHAT: {
    const char *text = s->content ? s->content : DEFAULT_TEXT;
    char *b = sim__chat_body(d, "req_1", m, text, s->usage_in >= 0 ? s->usage_in : 7,
                             s->usage_out >= 0 ? s->usage_out : 3);
    fz_json_object(b);
    free(b);
    break;
  }
  case SIM_STEP_STREAM: {
    char **texts = NULL;
    int ntexts = 0;
    int rc;
    if (s->nchunks > 0) {
      texts = calloc((size_t)s->nchunks, sizeof *texts);
      if (texts == NULL) abort();
      for (int i = 0; i < s->nchunks; i++) {
        if (s->chunks[i] == NULL) abort();
        texts[i] = strdup(s->chunks[i]);
      }
      ntexts = s->nchunks;
      rc = SIM_OK;
    } else {
      rc = sim__split_words(s->content ? s->content : DEFAULT_TEXT, &texts, &ntexts);
    }
    if (rc == SIM_OK) {
      sim_sse sse;
      if (sim__sse_build(d, s, "req_1", m, s->usage_in >= 0 ? s->usage_in : 7, texts,
                         ntexts, &sse) == SIM_OK) {
        fz_sse_frames(sse.pre);
        for (int i = 0; i < sse.nchunks; i++) fz_sse_frames(sse.chunk[i]);
        fz_sse_frames(sse.tail);
        fz_sse_frames(sse.marker);
        fz_sse_frames(sse.error);
        sim__sse_clear(&sse);
      }
    }
    for (int i = 0; i < ntexts; i++) free(texts[i]);
    free(texts);
    break;
  }
  case SIM_STEP_DELAY:
  case SIM_STEP_TRUNCATE:
  case SIM_STEP_EFFECT:
    fz_render(s->next, d, model, depth + 1);
    break;
  default:
    break;
  }
}

#endif
