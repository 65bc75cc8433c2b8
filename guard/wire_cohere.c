/*
 * wire_cohere.c - Cohere's v2 Chat API (POST /v2/chat) on the guard's
 * side: the request body, the whole answer and the typed SSE events
 * (message-start ... message-end). A stream is whole only with its
 * message-end; a message-end with finish_reason ERROR and an error, or an
 * error event, ends it failed.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <string.h>

/* {"model","messages","stream","max_tokens","tools"?}. */
cJSON *guard__cohere_body(const char *model, const guard_chat_request *req, int max_tokens) {
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = guard__wire_messages(req);
  int ok = root && msgs && cJSON_AddStringToObject(root, "model", model ? model : "");
  if (ok && cJSON_AddItemToObject(root, "messages", msgs))
    msgs = NULL; /* root's now */
  else
    ok = 0;
  ok = ok && cJSON_AddBoolToObject(root, "stream", req->stream ? 1 : 0) &&
       cJSON_AddNumberToObject(root, "max_tokens", max_tokens) &&
       guard__wire_fn_tools(root, req) == 0;
  cJSON_Delete(msgs);
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* usage.tokens (else usage.billed_units) {input_tokens, output_tokens}. */
static void usage(const cJSON *o, guard__answer *a) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "usage");
  const cJSON *t = cJSON_IsObject(u) ? cJSON_GetObjectItemCaseSensitive(u, "tokens") : NULL;
  if (!cJSON_IsObject(t) && cJSON_IsObject(u)) t = cJSON_GetObjectItemCaseSensitive(u, "billed_units");
  if (!cJSON_IsObject(t)) return;
  a->tokens_in = guard__jlong(t, "input_tokens");
  a->tokens_out = guard__jlong(t, "output_tokens");
}

/* An ERROR finish without an error (ERROR_TOXIC, the filter): a refusal. */
static int refused(const char *finish) {
  return finish && strncmp(finish, "ERROR", 5) == 0;
}

/* Reads a whole v2 answer. */
guard__body guard__cohere_parse(const cJSON *root, guard__answer *a) {
  const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "message");
  const char *finish = guard__jstr(root, "finish_reason");
  usage(root, a);
  if (refused(finish)) {
    a->refusal = 1;
    return GUARD__BODY_REFUSAL;
  }
  if (!cJSON_IsObject(msg) || finish == NULL) return GUARD__BODY_MISSING;
  const char *plan = guard__jstr(msg, "tool_plan"); /* the text of a turn that calls tools */
  if (plan && guard__add_text(a, plan) != 0) return GUARD__BODY_TOO_LARGE;
  const cJSON *part;
  cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(msg, "content")) {
    const char *type = guard__jstr(part, "type");
    const char *t = type && strcmp(type, "text") == 0 ? guard__jstr(part, "text") : NULL;
    if (t && guard__add_text(a, t) != 0) return GUARD__BODY_TOO_LARGE;
  }
  const cJSON *tc;
  cJSON_ArrayForEach(tc, cJSON_GetObjectItemCaseSensitive(msg, "tool_calls")) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tc, "function");
    guard_tool_call *c = cJSON_IsObject(fn) ? guard__tc_at(a, a->ntc, 1) : NULL;
    if (c == NULL) continue;
    guard__tc_names(c, guard__jstr(tc, "id"), guard__jstr(fn, "name"));
    const char *args = guard__jstr(fn, "arguments");
    guard__tc_append(c, args ? args : "");
  }
  return GUARD__BODY_OK;
}

/* delta.message.KEY of an event, or NULL. */
static const cJSON *delta_message(const cJSON *root, const char *key) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
  const cJSON *m = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, "message") : NULL;
  return cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, key) : NULL;
}

/* message-end: the finish, its error (a failed stream) and the usage. */
static void message_end(guard__answer *a, const cJSON *root) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
  const char *finish = cJSON_IsObject(d) ? guard__jstr(d, "finish_reason") : NULL;
  const cJSON *err = cJSON_IsObject(d) ? cJSON_GetObjectItemCaseSensitive(d, "error") : NULL;
  if (cJSON_IsObject(d)) usage(d, a);
  if (err != NULL && !cJSON_IsNull(err)) {
    /* Cohere names no type: a failure while generating. */
    a->error = 1;
    guard__strlcpy(a->err_type, "stream_error", sizeof a->err_type);
    return;
  }
  if (refused(finish)) a->refusal = 1;
  a->done = 1;
}

/* Applies one typed SSE event to *a. */
void guard__cohere_event(guard__answer *a, const char *event, const cJSON *root) {
  const char *type = guard__jstr(root, "type");
  if (type == NULL) type = event;
  int index = (int)guard__jlong(root, "index");
  if (strcmp(type, "content-delta") == 0) {
    const cJSON *c = delta_message(root, "content");
    const char *t = cJSON_IsObject(c) ? guard__jstr(c, "text") : NULL;
    if (t == NULL) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    else guard__add_text(a, t);
  } else if (strcmp(type, "tool-plan-delta") == 0) {
    const cJSON *p = delta_message(root, "tool_plan");
    if (cJSON_IsString(p)) guard__add_text(a, p->valuestring);
  } else if (strcmp(type, "tool-call-start") == 0) {
    const cJSON *tc = delta_message(root, "tool_calls");
    const cJSON *fn = cJSON_IsObject(tc) ? cJSON_GetObjectItemCaseSensitive(tc, "function") : NULL;
    guard_tool_call *c = cJSON_IsObject(tc) ? guard__tc_at(a, index, 1) : NULL;
    if (c) guard__tc_names(c, guard__jstr(tc, "id"), cJSON_IsObject(fn) ? guard__jstr(fn, "name") : NULL);
  } else if (strcmp(type, "tool-call-delta") == 0) {
    const cJSON *tc = delta_message(root, "tool_calls");
    const cJSON *fn = cJSON_IsObject(tc) ? cJSON_GetObjectItemCaseSensitive(tc, "function") : NULL;
    const char *args = cJSON_IsObject(fn) ? guard__jstr(fn, "arguments") : NULL;
    guard_tool_call *c = args ? guard__tc_at(a, index, 0) : NULL;
    if (c) guard__tc_append(c, args);
  } else if (strcmp(type, "message-end") == 0) {
    message_end(a, root);
  } else if (strcmp(type, "error") == 0) {
    a->error = 1;
    guard__strlcpy(a->err_type, "stream_error", sizeof a->err_type);
  }
  /* message-start, content-start/end, tool-call-end, citations and unknown
     events change nothing. */
}
