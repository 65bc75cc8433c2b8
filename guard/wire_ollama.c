/*
 * wire_ollama.c - Ollama's native /api/chat on the guard's side: the
 * request body, the whole answer and the NDJSON stream's lines (ndjson.c
 * cuts them). A stream is whole only with its "done":true line; an
 * {"error":"..."} line ends it failed.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <string.h>

/* {"model","messages","stream","options":{"num_predict"},"tools"?}. */
cJSON *guard__ollama_body(const char *model, const guard_chat_request *req, int max_tokens) {
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = guard__wire_messages(req);
  int ok = root && msgs && cJSON_AddStringToObject(root, "model", model ? model : "");
  if (ok && cJSON_AddItemToObject(root, "messages", msgs))
    msgs = NULL; /* root's now */
  else
    ok = 0;
  ok = ok && cJSON_AddBoolToObject(root, "stream", req->stream ? 1 : 0);
  cJSON *opt = ok ? cJSON_AddObjectToObject(root, "options") : NULL;
  ok = opt && cJSON_AddNumberToObject(opt, "num_predict", max_tokens) &&
       guard__wire_fn_tools(root, req) == 0;
  cJSON_Delete(msgs);
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* The counts of a done object. */
static void counts(const cJSON *root, guard__answer *a) {
  long in = guard__jlong(root, "prompt_eval_count"), out = guard__jlong(root, "eval_count");
  if (in >= 0) a->tokens_in = in;
  if (out >= 0) a->tokens_out = out;
}

/* message.content and message.tool_calls (each call whole, arguments an
   object); 0, or -1 when the message is missing. */
static int message(const cJSON *root, guard__answer *a) {
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "message");
  if (!cJSON_IsObject(msg)) return -1;
  const char *t = guard__jstr(msg, "content");
  if (t) guard__add_text(a, t);
  const cJSON *tc;
  cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls")) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
    guard_tool_call *c = cJSON_IsObject(fn) ? guard__tc_at(a, a->ntc, 1) : NULL;
    if (c == NULL) continue;
    guard__tc_names(c, guard__jstr(tc, "id"), guard__jstr(fn, "name"));
    guard__tc_value(c, cJSON_GetObjectItemCaseSensitive(fn, "arguments"));
  }
  return 0;
}

/* Reads a whole /api/chat answer: a message and "done":true. */
guard__body guard__ollama_parse(const cJSON *root, guard__answer *a) {
  if (message(root, a) != 0 || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done")))
    return GUARD__BODY_MISSING;
  counts(root, a);
  return a->bad == GUARD__BODY_TOO_LARGE ? GUARD__BODY_TOO_LARGE : GUARD__BODY_OK;
}

/* Applies one NDJSON line of a stream to *a. */
int guard__ollama_line(guard__answer *a, const char *line, size_t len) {
  if (a->done || a->error) return 0; /* nothing after the end counts */
  cJSON *root = guard__json_parse(line, len, &a->oom);
  const cJSON *err = cJSON_GetObjectItemCaseSensitive(root, "error");
  if (!cJSON_IsObject(root)) {
    guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
  } else if (err != NULL && !cJSON_IsNull(err)) {
    /* Ollama's error line names no type: a failure while generating. */
    a->error = 1;
    guard__strlcpy(a->err_type, "stream_error", sizeof a->err_type);
  } else {
    if (message(root, a) != 0) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "done"))) {
      a->done = 1;
      counts(root, a);
    }
  }
  cJSON_Delete(root);
  return 0;
}
