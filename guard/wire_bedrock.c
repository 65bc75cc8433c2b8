/*
 * wire_bedrock.c - Amazon Bedrock's Converse API on the guard's side: the
 * request body (POST /model/{id}/converse, or /converse-stream), the whole
 * answer, the ConverseStream messages of the event stream (eventstream.c
 * cuts and checks them) and the x-amzn-errortype header. Reading only says
 * what came; classify.c decides what it means.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

/* One {"text": s} block in a new array under key of o; 0, or -1 (no memory). */
static int text_blocks(cJSON *o, const char *key, const char *s) {
  cJSON *arr = cJSON_AddArrayToObject(o, key);
  cJSON *b = arr ? cJSON_CreateObject() : NULL;
  if (b == NULL) return -1;
  cJSON_AddItemToArray(arr, b);
  return cJSON_AddStringToObject(b, "text", s) ? 0 : -1;
}

/* {"messages":[{"role","content":[{"text"}]}], "system":[{"text"}],
   "inferenceConfig":{"maxTokens"}, "toolConfig":{"tools":[{"toolSpec"}]}}. */
cJSON *guard__bedrock_body(const guard_chat_request *req, int max_tokens) {
  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = root ? cJSON_AddArrayToObject(root, "messages") : NULL;
  int ok = msgs != NULL;
  for (int i = 0; ok && i < req->nmessages; i++) {
    cJSON *m = cJSON_CreateObject();
    ok = m != NULL && cJSON_AddItemToArray(msgs, m) &&
         cJSON_AddStringToObject(m, "role", req->messages[i].role) &&
         text_blocks(m, "content", req->messages[i].content) == 0;
  }
  if (ok && req->system) ok = text_blocks(root, "system", req->system) == 0;
  cJSON *ic = ok ? cJSON_AddObjectToObject(root, "inferenceConfig") : NULL;
  ok = ic && cJSON_AddNumberToObject(ic, "maxTokens", max_tokens);
  if (ok && req->ntools > 0) {
    cJSON *tc = cJSON_AddObjectToObject(root, "toolConfig");
    cJSON *tools = tc ? cJSON_AddArrayToObject(tc, "tools") : NULL;
    ok = tools != NULL;
    for (int i = 0; ok && i < req->ntools; i++) {
      cJSON *t = cJSON_CreateObject();
      cJSON *spec = t && cJSON_AddItemToArray(tools, t) ? cJSON_AddObjectToObject(t, "toolSpec") : NULL;
      cJSON *schema = spec && cJSON_AddStringToObject(spec, "name", req->tools[i])
                          ? cJSON_AddObjectToObject(spec, "inputSchema") : NULL;
      cJSON *json = schema ? cJSON_AddObjectToObject(schema, "json") : NULL;
      ok = json && cJSON_AddStringToObject(json, "type", "object");
    }
  }
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

static void usage(const cJSON *o, guard__answer *a) {
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(o, "usage");
  if (!cJSON_IsObject(u)) return;
  a->tokens_in = guard__jlong(u, "inputTokens");
  a->tokens_out = guard__jlong(u, "outputTokens");
}

/* stopReason content_filtered / guardrail_intervened: the model refused. */
static int refused(const char *stop) {
  return stop && (strcmp(stop, "content_filtered") == 0 ||
                  strcmp(stop, "guardrail_intervened") == 0);
}

/* Reads a whole Converse answer. */
guard__body guard__bedrock_parse(const cJSON *root, guard__answer *a) {
  const cJSON *out = cJSON_GetObjectItemCaseSensitive(root, "output");
  const cJSON *msg = cJSON_IsObject(out) ? cJSON_GetObjectItemCaseSensitive(out, "message") : NULL;
  const cJSON *content = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "content") : NULL;
  const char *stop = guard__jstr(root, "stopReason");
  usage(root, a);
  if (refused(stop)) {
    a->refusal = 1;
    return GUARD__BODY_REFUSAL;
  }
  if (!cJSON_IsArray(content) || stop == NULL) return GUARD__BODY_MISSING;
  const cJSON *block;
  cJSON_ArrayForEach(block, content) {
    const char *t = guard__jstr(block, "text");
    if (t && guard__add_text(a, t) != 0) return GUARD__BODY_TOO_LARGE;
    const cJSON *tu = cJSON_GetObjectItemCaseSensitive(block, "toolUse");
    guard_tool_call *c = cJSON_IsObject(tu) ? guard__tc_at(a, a->ntc, 1) : NULL;
    if (c) {
      guard__tc_names(c, guard__jstr(tu, "toolUseId"), guard__jstr(tu, "name"));
      guard__tc_value(c, cJSON_GetObjectItemCaseSensitive(tu, "input"));
    }
  }
  return GUARD__BODY_OK;
}

/* One ConverseStream event: text and tool input deltas by block index,
   messageStop the end, metadata the usage (which follows messageStop). */
static void converse_event(guard__answer *a, const char *type, const cJSON *root) {
  int index = (int)guard__jlong(root, "contentBlockIndex");
  if (strcmp(type, "contentBlockStart") == 0) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "start");
    const cJSON *tu = cJSON_IsObject(st) ? cJSON_GetObjectItemCaseSensitive(st, "toolUse") : NULL;
    guard_tool_call *c = cJSON_IsObject(tu) ? guard__tc_at(a, index, 1) : NULL;
    if (c) guard__tc_names(c, guard__jstr(tu, "toolUseId"), guard__jstr(tu, "name"));
  } else if (strcmp(type, "contentBlockDelta") == 0) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
    if (!cJSON_IsObject(d)) {
      guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
      return;
    }
    const char *t = guard__jstr(d, "text");
    if (t) guard__add_text(a, t);
    const cJSON *tu = cJSON_GetObjectItemCaseSensitive(d, "toolUse");
    const char *in = cJSON_IsObject(tu) ? guard__jstr(tu, "input") : NULL;
    guard_tool_call *c = in ? guard__tc_at(a, index, 0) : NULL;
    if (c) guard__tc_append(c, in);
  } else if (strcmp(type, "messageStop") == 0) {
    if (refused(guard__jstr(root, "stopReason"))) a->refusal = 1;
    a->done = 1;
  } else if (strcmp(type, "metadata") == 0) {
    usage(root, a);
  }
  /* messageStart, contentBlockStop and unknown events change nothing. */
}

/* Applies one event stream message of ConverseStream to *a. */
int guard__bedrock_message(guard__answer *a, const guard__es_msg *m) {
  if (a->error) return 0; /* nothing after a failure counts */
  if (strcmp(m->message_type, "exception") == 0 || strcmp(m->message_type, "error") == 0) {
    a->error = 1;
    guard__strlcpy(a->err_type, m->exception_type, sizeof a->err_type);
    guard__strlcpy(a->err_code, m->error_code, sizeof a->err_code);
    return 0;
  }
  if (strcmp(m->message_type, "event") != 0 || m->event_type[0] == '\0') {
    guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    return 0;
  }
  if (a->done && strcmp(m->event_type, "metadata") != 0) return 0;
  cJSON *root = guard__json_parse(m->payload, m->payload_len, &a->oom);
  if (!cJSON_IsObject(root))
    guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
  else
    converse_event(a, m->event_type, root);
  cJSON_Delete(root);
  return 0;
}

/* Keeps the error name of an x-amzn-errortype header. */
void guard__bedrock_error_type(guard__answer *a, const char *header) {
  size_t n = strcspn(header, ":");
  if (n == 0) return;
  if (n >= sizeof a->err_type) n = sizeof a->err_type - 1;
  memcpy(a->err_type, header, n);
  a->err_type[n] = '\0';
}

/* The model id escaped for one path segment: unreserved bytes as they are,
   every other one %XX. */
int guard__bedrock_model_path(const char *model, char *out, size_t n) {
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)model; *p; p++) {
    int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~';
    if (o + (plain ? 1 : 3) >= n) return -1;
    if (plain) out[o++] = (char)*p;
    else o += (size_t)snprintf(out + o, n - o, "%%%02X", *p);
  }
  out[o] = '\0';
  return 0;
}
