/*
 * dialect_ollama.c - Ollama's native API: POST /api/chat ({message}) and
 * POST /api/generate ({response}), answered whole or, by default, streamed
 * as NDJSON (one JSON object a line, the last one "done":true with its
 * done_reason and counts); errors as {"error":"..."} with the status, and
 * the same object as one line inside a stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/dialect_int.h"

/* Nanoseconds Ollama reports per token evaluated (its *_duration fields):
   a plausible 20 ms, so a client computing tokens per second divides by
   no zero. */
#define NS_PER_TOKEN 20000000.0

/* The wall clock as Ollama writes created_at: RFC 3339 with nanoseconds
   ("2026-12-02T07:00:00.123456789Z"). */
void sim__ollama_created_at(char out[40]) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  gmtime_r(&ts.tv_sec, &tm);
  char day[32];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, 40, "%.19s.%09uZ", day, (unsigned)(ts.tv_nsec % 1000000000));
}

static const char *done_reason(const sim_step *s) {
  return s != NULL && s->finish == SIM_FINISH_LENGTH ? "length" : "stop";
}

/* "model", "created_at": the head of every object. */
static void head(sim_jw *w, const char *model, const char *created_at) {
  sim__jw_kstr(w, "model", model);
  sim__jw_kstr(w, "created_at", created_at);
}

/* "message":{role, content, tool_calls?} for /api/chat; calls [t0, t1) of
   s, each whole, its arguments an object. */
static void message(sim_jw *w, const char *text, const sim_step *s, int t0, int t1) {
  sim__jw_key(w, "message");
  sim__jw_open(w, '{');
  sim__jw_kstr(w, "role", "assistant");
  sim__jw_kstr(w, "content", text ? text : "");
  if (s != NULL && t1 > t0) {
    sim__jw_key(w, "tool_calls");
    sim__jw_open(w, '[');
    for (int i = t0; i < t1; i++) {
      const sim_tool_call *tc = &s->tool_calls[i];
      sim__jw_open(w, '{');
      sim__jw_kstr(w, "id", tc->id);
      sim__jw_key(w, "function");
      sim__jw_open(w, '{');
      sim__jw_knum(w, "index", i);
      sim__jw_kstr(w, "name", tc->name);
      sim__put_args(w, "arguments", tc);
      sim__jw_close(w, '}');
      sim__jw_close(w, '}');
    }
    sim__jw_close(w, ']');
  }
  sim__jw_close(w, '}');
}

/* The closing fields: done_reason, done, the counts and durations. */
static void finish(sim_jw *w, const sim_step *s, int tokens_in, int tokens_out) {
  sim__jw_kstr(w, "done_reason", done_reason(s));
  sim__jw_kbool(w, "done", 1);
  sim__jw_knum(w, "total_duration", ((double)tokens_in + tokens_out) * NS_PER_TOKEN);
  sim__jw_knum(w, "load_duration", 0);
  sim__jw_knum(w, "prompt_eval_count", tokens_in);
  sim__jw_knum(w, "prompt_eval_duration", tokens_in * NS_PER_TOKEN);
  sim__jw_knum(w, "eval_count", tokens_out);
  sim__jw_knum(w, "eval_duration", tokens_out * NS_PER_TOKEN);
}

/* The answer whole: /api/chat's {model, created_at, message, done...} or
   /api/generate's {model, created_at, response, done...} (generate has no
   tool calls: only the text is its). Owned by the caller. */
char *sim__ollama_body(int generate, const sim_step *s, const char *model,
                       const char *text, int tokens_in, int tokens_out) {
  char at[40];
  sim__ollama_created_at(at);
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  head(&w, model, at);
  if (generate) sim__jw_kstr(&w, "response", text ? text : "");
  else message(&w, text, s, 0, s ? s->ntool_calls : 0);
  finish(&w, s, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* {"error":"..."} (no newline): the body of every Ollama error. */
char *sim__ollama_error_body(int status, const char *message) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  sim__jw_kstr(&w, "error", sim__err_message(status, message));
  sim__jw_close(&w, '}');
  return sim__jw_take(&w);
}

/* One NDJSON line that goes on ("done":false): a text piece, or (tc_end >
   tc) calls [tc, tc_end) of s whole. */
static char *line(int generate, const sim_step *s, const char *model, const char *at,
                  const char *text, int tc, int tc_end) {
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  head(&w, model, at);
  if (generate) sim__jw_kstr(&w, "response", text ? text : "");
  else message(&w, text, s, tc, tc_end);
  sim__jw_kbool(&w, "done", 0);
  sim__jw_close(&w, '}');
  sim__jw_raw(&w, "\n", 1);
  return sim__jw_take(&w);
}

/* The NDJSON stream: one line per text piece, one per tool call (Ollama
   sends a call whole; /api/generate has none), then the end marker, the
   "done":true line with done_reason and counts (no_end: a stream without
   it). The in-stream error is {"error":"..."} on a line of its own. */
int sim__ollama_stream(int generate, const sim_step *s, const char *model, int tokens_in,
                       int tokens_out, char **texts, int ntexts, sim_sse *out) {
  char at[40];
  sim__ollama_created_at(at);
  out->pre = strdup("");
  int rc = SIM_OK;
  for (int i = 0; rc == SIM_OK && i < ntexts; i++)
    rc = sim__sse_push(out, line(generate, s, model, at, texts[i], 0, 0));
  for (int t = 0; rc == SIM_OK && !generate && t < s->ntool_calls; t++)
    rc = sim__sse_push(out, line(generate, s, model, at, "", t, t + 1));
  if (rc != SIM_OK) return rc;
  out->tail = strdup("");
  sim_jw w;
  sim__jw_init(&w, SIM__BODY_MAX);
  sim__jw_open(&w, '{');
  head(&w, model, at);
  if (generate) sim__jw_kstr(&w, "response", "");
  else message(&w, "", s, 0, 0);
  finish(&w, s, tokens_in, tokens_out);
  sim__jw_close(&w, '}');
  sim__jw_raw(&w, "\n", 1);
  out->marker = sim__jw_take(&w);
  char *e = sim__ollama_error_body(s->status ? s->status : 500, s->message);
  if (e != NULL) {
    size_t n = strlen(e);
    char *nl = realloc(e, n + 2);
    if (nl == NULL) {
      free(e);
    } else {
      nl[n] = '\n';
      nl[n + 1] = '\0';
      out->error = nl;
    }
  }
  return SIM_OK;
}
