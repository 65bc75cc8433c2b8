/*
 * wire.c - the wire dialects: request bodies for OpenAI chat completions,
 * Anthropic messages, the OpenAI Responses API and Gemini, and reading
 * their answers, errors and stream events; Bedrock, Ollama and Cohere have
 * files of their own (wire_bedrock.c, wire_ollama.c, wire_cohere.c), which
 * this one dispatches to. Reading only says what a body is (guard__body);
 * classify.c decides what that means.
 */
#include "guard/guard_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

/* Parses JSON text; *oom when cJSON ran out of memory (see guard_int.h). */
cJSON *guard__json_parse(const char *text, size_t len, int *oom) {
  if (text == NULL) return NULL;
  int saved = errno;
  errno = 0;
  cJSON *root = cJSON_ParseWithLength(text, len);
  if (root == NULL && errno == ENOMEM) *oom = 1;
  errno = saved;
  return root;
}

/* Prepares an empty answer for a dialect. */
void guard__answer_init(guard__answer *a, guard_dialect d, size_t max_text) {
  memset(a, 0, offsetof(guard__answer, tc_slot)); /* tool calls: zeroed as made */
  a->dialect = d;
  guard__buf_init(&a->text, max_text);
  a->tokens_in = -1;
  a->tokens_out = -1;
  a->bad = GUARD__BODY_OK;
}

/* Moves an answer, copying only the tool calls it holds; see guard_int.h. */
void guard__answer_move(guard__answer *dst, const guard__answer *src) {
  memcpy(dst, src, offsetof(guard__answer, tc_slot));
  memcpy(dst->tc_slot, src->tc_slot, (size_t)src->ntc * sizeof src->tc_slot[0]);
  memcpy(dst->tc, src->tc, (size_t)src->ntc * sizeof src->tc[0]);
}

/* Releases an answer's memory. */
void guard__answer_free(guard__answer *a) { guard__buf_free(&a->text); }

/* The Responses API body: input messages, instructions, max_output_tokens;
   Gemini's: contents with parts, systemInstruction, generationConfig. */
static cJSON *body_new_apis(guard_dialect d, const char *model,
                            const guard_chat_request *req, int max_tokens) {
  cJSON *root = cJSON_CreateObject();
  if (root == NULL) return NULL;
  int ok = 1;
  cJSON *tools = req->ntools > 0 ? cJSON_AddArrayToObject(root, "tools") : NULL;
  cJSON *decls = NULL;
  if (tools && d == GUARD_GEMINI) {
    cJSON *t = cJSON_CreateObject();
    cJSON_AddItemToArray(tools, t);
    decls = t ? cJSON_AddArrayToObject(t, "functionDeclarations") : NULL;
  }
  for (int i = 0; tools && i < req->ntools; i++) {
    cJSON *t = cJSON_CreateObject();
    if (t == NULL) break;
    cJSON_AddItemToArray(d == GUARD_GEMINI ? decls : tools, t);
    if (d == GUARD_RESPONSES) cJSON_AddStringToObject(t, "type", "function");
    cJSON_AddStringToObject(t, "name", req->tools[i]);
    cJSON *params = cJSON_AddObjectToObject(t, "parameters");
    if (params) cJSON_AddStringToObject(params, "type", "object");
  }
  if (d == GUARD_RESPONSES) {
    ok = cJSON_AddStringToObject(root, "model", model ? model : "") != NULL;
    if (ok && req->system) ok = cJSON_AddStringToObject(root, "instructions", req->system) != NULL;
    cJSON *in = ok ? cJSON_AddArrayToObject(root, "input") : NULL;
    ok = in != NULL;
    for (int i = 0; ok && i < req->nmessages; i++) {
      cJSON *m = cJSON_CreateObject();
      ok = m != NULL && cJSON_AddItemToArray(in, m) &&
           cJSON_AddStringToObject(m, "role", req->messages[i].role) &&
           cJSON_AddStringToObject(m, "content", req->messages[i].content);
    }
    ok = ok && cJSON_AddNumberToObject(root, "max_output_tokens", max_tokens) &&
         (!req->stream || cJSON_AddBoolToObject(root, "stream", 1));
  } else {
    cJSON *contents = cJSON_AddArrayToObject(root, "contents");
    ok = contents != NULL;
    for (int i = 0; ok && i < req->nmessages; i++) {
      cJSON *m = cJSON_CreateObject();
      const char *role = strcmp(req->messages[i].role, "assistant") == 0 ? "model" : "user";
      cJSON *parts = m ? cJSON_AddArrayToObject(m, "parts") : NULL;
      cJSON *part = cJSON_CreateObject();
      ok = m != NULL && cJSON_AddItemToArray(contents, m) && parts && part &&
           cJSON_AddItemToArray(parts, part) && cJSON_AddStringToObject(m, "role", role) &&
           cJSON_AddStringToObject(part, "text", req->messages[i].content);
      if (!ok && part && !parts) cJSON_Delete(part);
    }
    if (ok && req->system) {
      cJSON *si = cJSON_AddObjectToObject(root, "systemInstruction");
      cJSON *parts = si ? cJSON_AddArrayToObject(si, "parts") : NULL;
      cJSON *part = parts ? cJSON_CreateObject() : NULL;
      ok = part && cJSON_AddItemToArray(parts, part) &&
           cJSON_AddStringToObject(part, "text", req->system);
    }
    cJSON *gc = ok ? cJSON_AddObjectToObject(root, "generationConfig") : NULL;
    ok = gc && cJSON_AddNumberToObject(gc, "maxOutputTokens", max_tokens);
  }
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* The chat messages, the system text first; see guard_int.h. */
cJSON *guard__wire_messages(const guard_chat_request *req) {
  cJSON *msgs = cJSON_CreateArray();
  int ok = msgs != NULL;
  for (int i = -1; ok && i < req->nmessages; i++) {
    if (i < 0 && req->system == NULL) continue;
    cJSON *m = cJSON_CreateObject();
    ok = m != NULL && cJSON_AddItemToArray(msgs, m) &&
         cJSON_AddStringToObject(m, "role", i < 0 ? "system" : req->messages[i].role) &&
         cJSON_AddStringToObject(m, "content", i < 0 ? req->system : req->messages[i].content);
  }
  if (!ok) {
    cJSON_Delete(msgs);
    return NULL;
  }
  return msgs;
}

/* OpenAI-style function tools; see guard_int.h. */
int guard__wire_fn_tools(cJSON *root, const guard_chat_request *req) {
  if (req->ntools <= 0) return 0;
  cJSON *tools = cJSON_AddArrayToObject(root, "tools");
  if (tools == NULL) return -1;
  for (int i = 0; i < req->ntools; i++) {
    cJSON *t = cJSON_CreateObject();
    if (t == NULL || !cJSON_AddItemToArray(tools, t)) {
      cJSON_Delete(t);
      return -1;
    }
    cJSON *fn = cJSON_AddStringToObject(t, "type", "function") ? cJSON_AddObjectToObject(t, "function") : NULL;
    cJSON *params = fn && cJSON_AddStringToObject(fn, "name", req->tools[i])
                        ? cJSON_AddObjectToObject(fn, "parameters") : NULL;
    if (params == NULL || !cJSON_AddStringToObject(params, "type", "object")) return -1;
  }
  return 0;
}

/* Ollama streams NDJSON, Bedrock AWS's event stream, the rest SSE. */
guard__framing guard__wire_framing(guard_dialect d) {
  if (d == GUARD_OLLAMA) return GUARD__FRAME_NDJSON;
  if (d == GUARD_BEDROCK) return GUARD__FRAME_ES;
  return GUARD__FRAME_SSE;
}

/* Builds the request body of a chat call. */
int guard__wire_body(guard_dialect d, const char *model,
                     const guard_chat_request *req, char **out, size_t *len) {
  *out = NULL;
  *len = 0;
  if (req == NULL || req->messages == NULL || req->nmessages < 1 ||
      req->max_tokens < 0)
    return GUARD_EINVAL;
  for (int i = 0; i < req->nmessages; i++)
    if (req->messages[i].role == NULL || req->messages[i].content == NULL)
      return GUARD_EINVAL;
  if (req->ntools < 0 || req->ntools > 64 || (req->ntools > 0 && req->tools == NULL))
    return GUARD_EINVAL;
  for (int i = 0; i < req->ntools; i++)
    if (req->tools[i] == NULL || req->tools[i][0] == '\0' || strlen(req->tools[i]) >= 64)
      return GUARD_EINVAL;
  int max_tokens = req->max_tokens > 0 ? req->max_tokens : 1024;

  if (d == GUARD_RESPONSES || d == GUARD_GEMINI || d == GUARD_BEDROCK ||
      d == GUARD_OLLAMA || d == GUARD_COHERE) {
    cJSON *r = d == GUARD_BEDROCK  ? guard__bedrock_body(req, max_tokens)
               : d == GUARD_OLLAMA ? guard__ollama_body(model, req, max_tokens)
               : d == GUARD_COHERE ? guard__cohere_body(model, req, max_tokens)
                                   : body_new_apis(d, model, req, max_tokens);
    if (r == NULL) return GUARD_ENOMEM;
    char *s = cJSON_PrintUnformatted(r);
    cJSON_Delete(r);
    if (s == NULL) return GUARD_ENOMEM;
    if (strlen(s) > GUARD__MAX_REQUEST) {
      free(s);
      return GUARD_EINVAL;
    }
    *out = s;
    *len = strlen(s);
    return GUARD_OK;
  }

  cJSON *root = cJSON_CreateObject();
  cJSON *msgs = NULL;
  if (root == NULL) return GUARD_ENOMEM;
  if (!cJSON_AddStringToObject(root, "model", model ? model : "")) goto nomem;
  if (d == GUARD_ANTHROPIC) {
    if (!cJSON_AddNumberToObject(root, "max_tokens", max_tokens)) goto nomem;
    if (req->system && !cJSON_AddStringToObject(root, "system", req->system))
      goto nomem;
  }
  msgs = cJSON_AddArrayToObject(root, "messages");
  if (msgs == NULL) goto nomem;
  if (d == GUARD_OPENAI && req->system) {
    cJSON *m = cJSON_CreateObject();
    if (m == NULL) goto nomem;
    cJSON_AddItemToArray(msgs, m);
    if (!cJSON_AddStringToObject(m, "role", "system") ||
        !cJSON_AddStringToObject(m, "content", req->system))
      goto nomem;
  }
  for (int i = 0; i < req->nmessages; i++) {
    cJSON *m = cJSON_CreateObject();
    if (m == NULL) goto nomem;
    cJSON_AddItemToArray(msgs, m);
    if (!cJSON_AddStringToObject(m, "role", req->messages[i].role) ||
        !cJSON_AddStringToObject(m, "content", req->messages[i].content))
      goto nomem;
  }
  if (d == GUARD_OPENAI &&
      !cJSON_AddNumberToObject(root, "max_tokens", max_tokens))
    goto nomem;
  if (req->ntools > 0) {
    cJSON *tools = cJSON_AddArrayToObject(root, "tools");
    if (tools == NULL) goto nomem;
    for (int i = 0; i < req->ntools; i++) {
      cJSON *t = cJSON_CreateObject();
      if (t == NULL) goto nomem;
      cJSON_AddItemToArray(tools, t);
      cJSON *schema = cJSON_CreateObject();
      if (schema == NULL || !cJSON_AddStringToObject(schema, "type", "object")) {
        cJSON_Delete(schema);
        goto nomem;
      }
      if (d == GUARD_ANTHROPIC) {
        cJSON_AddStringToObject(t, "name", req->tools[i]);
        cJSON_AddItemToObject(t, "input_schema", schema);
      } else {
        cJSON_AddStringToObject(t, "type", "function");
        cJSON *fn = cJSON_AddObjectToObject(t, "function");
        if (fn == NULL) {
          cJSON_Delete(schema);
          goto nomem;
        }
        cJSON_AddStringToObject(fn, "name", req->tools[i]);
        cJSON_AddItemToObject(fn, "parameters", schema);
      }
    }
  }
  if (req->stream) {
    if (!cJSON_AddBoolToObject(root, "stream", 1)) goto nomem;
    if (d == GUARD_OPENAI) {
      cJSON *so = cJSON_AddObjectToObject(root, "stream_options");
      if (so == NULL || !cJSON_AddBoolToObject(so, "include_usage", 1))
        goto nomem;
    }
  }
  char *s = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (s == NULL) return GUARD_ENOMEM;
  if (strlen(s) > GUARD__MAX_REQUEST) {
    free(s);
    return GUARD_EINVAL;
  }
  *out = s;
  *len = strlen(s);
  return GUARD_OK;
nomem:
  cJSON_Delete(root);
  return GUARD_ENOMEM;
}

/* A string member of o, or NULL. */
const char *guard__jstr(const cJSON *o, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A number member of o from 0 to 1e15, or -1. */
long guard__jlong(const cJSON *o, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15)
    return -1;
  return (long)v->valuedouble;
}

/* Reads {"error": {"type":..., "code":...}} (both dialects put it there). */
static int read_error(const cJSON *root, guard__answer *a) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
  if (e == NULL || cJSON_IsNull(e)) return 0; /* Responses: "error": null */
  a->error = 1;
  if (cJSON_IsObject(e)) {
    const char *t = guard__jstr(e, "type");
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
    if (t == NULL) t = guard__jstr(e, "status"); /* Google: "RESOURCE_EXHAUSTED" */
    if (t) guard__strlcpy(a->err_type, t, sizeof a->err_type);
    if (cJSON_IsString(c)) guard__strlcpy(a->err_code, c->valuestring, sizeof a->err_code);
    /* Google advises the wait in details[].retryDelay ("2s", "1.5s"). */
    const cJSON *det;
    cJSON_ArrayForEach(det, cJSON_GetObjectItemCaseSensitive(e, "details")) {
      const char *rd = guard__jstr(det, "retryDelay");
      size_t n = rd ? strlen(rd) : 0;
      if (n >= 2 && n < sizeof a->retry_delay && rd[n - 1] == 's') {
        memcpy(a->retry_delay, rd, n - 1);
        a->retry_delay[n - 1] = '\0';
      }
    }
  }
  return 1;
}

/* Adds text to the answer; -1 when full (the answer is then too large) or
   out of memory (a->oom). */
int guard__add_text(guard__answer *a, const char *s) {
  int rc = guard__buf_adds(&a->text, s);
  if (rc == GUARD_ENOMEM) a->oom = 1; /* ours, not the answer's */
  if (rc != GUARD_OK) {
    if (a->bad == GUARD__BODY_OK) a->bad = GUARD__BODY_TOO_LARGE;
    return -1;
  }
  return 0;
}

/* The tool call at the stream's index slot; created when absent (NULL when
   full or not to be created). */
guard_tool_call *guard__tc_at(guard__answer *a, int slot, int create) {
  for (int i = 0; i < a->ntc; i++)
    if (a->tc_slot[i] == slot) return &a->tc[i];
  if (!create || a->ntc >= GUARD_MAX_TOOL_CALLS) return NULL;
  a->tc_slot[a->ntc] = slot;
  guard_tool_call *t = &a->tc[a->ntc++];
  memset(t, 0, sizeof *t);
  return t;
}

/* Names a tool call: its id (else its name) and name, when given. */
void guard__tc_names(guard_tool_call *t, const char *id, const char *name) {
  if (name) guard__strlcpy(t->name, name, sizeof t->name);
  if (id) guard__strlcpy(t->id, id, sizeof t->id);
  else if (!t->id[0] && name) guard__strlcpy(t->id, name, sizeof t->id);
}

/* Appends argument text to a tool call, marking it too_long when it fills. */
void guard__tc_append(guard_tool_call *t, const char *s) {
  size_t have = strlen(t->arguments), n = strlen(s);
  if (have + n >= sizeof t->arguments) {
    t->too_long = 1;
    n = sizeof t->arguments - 1 - have;
  }
  memcpy(t->arguments + have, s, n);
  t->arguments[have + n] = '\0';
}

/* Arguments given as a JSON value (Anthropic input, Gemini args). */
void guard__tc_value(guard_tool_call *t, const cJSON *v) {
  char *s = v ? cJSON_PrintUnformatted(v) : NULL;
  t->arguments[0] = '\0';
  guard__tc_append(t, s ? s : "{}");
  cJSON_free(s);
}

static guard__body parse_openai(const cJSON *root, guard__answer *a) {
  const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
  const cJSON *c0 = cJSON_IsArray(choices) ? cJSON_GetArrayItem(choices, 0) : NULL;
  const cJSON *msg = cJSON_IsObject(c0) ? cJSON_GetObjectItemCaseSensitive(c0, "message") : NULL;
  if (!cJSON_IsObject(msg)) return GUARD__BODY_MISSING;
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
  const char *fr = guard__jstr(c0, "finish_reason");
  if (guard__jstr(msg, "refusal") != NULL || (fr && strcmp(fr, "content_filter") == 0))
    a->refusal = 1;
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
  if (cJSON_IsObject(usage)) {
    a->tokens_in = guard__jlong(usage, "prompt_tokens");
    a->tokens_out = guard__jlong(usage, "completion_tokens");
  }
  if (a->refusal) return GUARD__BODY_REFUSAL;
  const cJSON *tcs = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
  const cJSON *t;
  int i = 0;
  cJSON_ArrayForEach(t, tcs) {
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(t, "function");
    guard_tool_call *c = guard__tc_at(a, i++, 1);
    if (c == NULL || !cJSON_IsObject(fn)) continue;
    guard__tc_names(c, guard__jstr(t, "id"), guard__jstr(fn, "name"));
    const char *args = guard__jstr(fn, "arguments");
    guard__tc_append(c, args ? args : "");
  }
  if (!cJSON_IsString(content)) return a->ntc > 0 ? GUARD__BODY_OK : GUARD__BODY_MISSING;
  if (guard__add_text(a, content->valuestring) != 0) return GUARD__BODY_TOO_LARGE;
  return GUARD__BODY_OK;
}

static guard__body parse_anthropic(const cJSON *root, guard__answer *a) {
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(root, "content");
  if (!cJSON_IsArray(content)) return GUARD__BODY_MISSING;
  const char *sr = guard__jstr(root, "stop_reason");
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
  if (cJSON_IsObject(usage)) {
    a->tokens_in = guard__jlong(usage, "input_tokens");
    a->tokens_out = guard__jlong(usage, "output_tokens");
  }
  if (sr && strcmp(sr, "refusal") == 0) {
    a->refusal = 1;
    return GUARD__BODY_REFUSAL;
  }
  const cJSON *block;
  int bi = 0;
  cJSON_ArrayForEach(block, content) {
    const char *type = guard__jstr(block, "type");
    if (type == NULL) return GUARD__BODY_MISSING;
    if (strcmp(type, "tool_use") == 0) {
      guard_tool_call *c = guard__tc_at(a, bi, 1);
      if (c) {
        guard__tc_names(c, guard__jstr(block, "id"), guard__jstr(block, "name"));
        guard__tc_value(c, cJSON_GetObjectItemCaseSensitive(block, "input"));
      }
    }
    bi++;
    if (strcmp(type, "text") != 0) continue;
    const char *t = guard__jstr(block, "text");
    if (t == NULL) return GUARD__BODY_MISSING;
    if (guard__add_text(a, t) != 0) return GUARD__BODY_TOO_LARGE;
  }
  return GUARD__BODY_OK;
}

/* Responses: output items of type message with output_text parts; status
   "incomplete" for content_filter is a refusal, "failed" an error. */
static guard__body parse_responses(const cJSON *root, guard__answer *a) {
  const cJSON *output = cJSON_GetObjectItemCaseSensitive(root, "output");
  const char *status = guard__jstr(root, "status");
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
  if (cJSON_IsObject(usage)) {
    a->tokens_in = guard__jlong(usage, "input_tokens");
    a->tokens_out = guard__jlong(usage, "output_tokens");
  }
  if (status && strcmp(status, "failed") == 0) return GUARD__BODY_ERROR;
  const cJSON *inc = cJSON_GetObjectItemCaseSensitive(root, "incomplete_details");
  const char *reason = cJSON_IsObject(inc) ? guard__jstr(inc, "reason") : NULL;
  if (reason && strcmp(reason, "content_filter") == 0) {
    a->refusal = 1;
    return GUARD__BODY_REFUSAL;
  }
  if (!cJSON_IsArray(output) || status == NULL) return GUARD__BODY_MISSING;
  const cJSON *item;
  cJSON_ArrayForEach(item, output) {
    const char *type = guard__jstr(item, "type");
    if (type == NULL) return GUARD__BODY_MISSING;
    if (strcmp(type, "function_call") == 0) {
      guard_tool_call *c = guard__tc_at(a, a->ntc, 1);
      if (c) {
        guard__tc_names(c, guard__jstr(item, "call_id"), guard__jstr(item, "name"));
        const char *args = guard__jstr(item, "arguments");
        guard__tc_append(c, args ? args : "");
      }
    }
    if (strcmp(type, "message") != 0) continue;
    const cJSON *part;
    cJSON_ArrayForEach(part, cJSON_GetObjectItemCaseSensitive(item, "content")) {
      const char *pt = guard__jstr(part, "type");
      if (pt && strcmp(pt, "refusal") == 0) {
        a->refusal = 1;
        return GUARD__BODY_REFUSAL;
      }
      const char *t = pt && strcmp(pt, "output_text") == 0 ? guard__jstr(part, "text") : NULL;
      if (t && guard__add_text(a, t) != 0) return GUARD__BODY_TOO_LARGE;
    }
  }
  return GUARD__BODY_OK;
}

/* Gemini: candidates[0].content.parts[].text; finishReason SAFETY (and the
   other blocks) is a refusal; *finished when finishReason is present. */
static guard__body parse_gemini(const cJSON *root, guard__answer *a, int *finished) {
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usageMetadata");
  if (cJSON_IsObject(usage)) {
    a->tokens_in = guard__jlong(usage, "promptTokenCount");
    a->tokens_out = guard__jlong(usage, "candidatesTokenCount");
  }
  const cJSON *cands = cJSON_GetObjectItemCaseSensitive(root, "candidates");
  const cJSON *c0 = cJSON_IsArray(cands) ? cJSON_GetArrayItem(cands, 0) : NULL;
  if (!cJSON_IsObject(c0)) return GUARD__BODY_MISSING;
  const char *fr = guard__jstr(c0, "finishReason");
  if (finished) *finished = fr != NULL;
  if (fr && (strcmp(fr, "SAFETY") == 0 || strcmp(fr, "RECITATION") == 0 ||
             strcmp(fr, "PROHIBITED_CONTENT") == 0 || strcmp(fr, "BLOCKLIST") == 0)) {
    a->refusal = 1;
    return GUARD__BODY_REFUSAL;
  }
  const cJSON *content = cJSON_GetObjectItemCaseSensitive(c0, "content");
  const cJSON *parts = cJSON_IsObject(content) ? cJSON_GetObjectItemCaseSensitive(content, "parts")
                                               : NULL;
  if (parts == NULL) return fr ? GUARD__BODY_OK : GUARD__BODY_MISSING;
  const cJSON *part;
  cJSON_ArrayForEach(part, parts) {
    const char *t = guard__jstr(part, "text");
    if (t && guard__add_text(a, t) != 0) return GUARD__BODY_TOO_LARGE;
    const cJSON *fc = cJSON_GetObjectItemCaseSensitive(part, "functionCall");
    guard_tool_call *c = cJSON_IsObject(fc) ? guard__tc_at(a, a->ntc, 1) : NULL;
    if (c) {
      guard__tc_names(c, guard__jstr(fc, "id"), guard__jstr(fc, "name"));
      guard__tc_value(c, cJSON_GetObjectItemCaseSensitive(fc, "args"));
    }
  }
  return GUARD__BODY_OK;
}

/* Parses a complete non-stream 2xx body; returns what it was. */
guard__body guard__wire_parse(const char *body, size_t len, guard__answer *a) {
  cJSON *root = guard__json_parse(body, len, &a->oom);
  if (root == NULL) {
    /* JSON that starts but does not end was cut short. */
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\n' || body[i] == '\r' || body[i] == '\t')) i++;
    return i < len && (body[i] == '{' || body[i] == '[') ? GUARD__BODY_TRUNCATED
                                                          : GUARD__BODY_NOT_JSON;
  }
  guard__body r;
  if (!cJSON_IsObject(root))
    r = GUARD__BODY_MISSING;
  else if (read_error(root, a))
    r = GUARD__BODY_ERROR;
  else if (a->dialect == GUARD_ANTHROPIC)
    r = parse_anthropic(root, a);
  else if (a->dialect == GUARD_RESPONSES)
    r = parse_responses(root, a);
  else if (a->dialect == GUARD_GEMINI)
    r = parse_gemini(root, a, NULL);
  else if (a->dialect == GUARD_BEDROCK)
    r = guard__bedrock_parse(root, a);
  else if (a->dialect == GUARD_OLLAMA)
    r = guard__ollama_parse(root, a);
  else if (a->dialect == GUARD_COHERE)
    r = guard__cohere_parse(root, a);
  else
    r = parse_openai(root, a);
  cJSON_Delete(root);
  return r;
}

/* Reads the structured error of an error body; 1 when one was found. */
int guard__wire_error(const char *body, size_t len, guard__answer *a) {
  cJSON *root = guard__json_parse(body, len, &a->oom);
  int found = cJSON_IsObject(root) && read_error(root, a);
  cJSON_Delete(root);
  return found;
}

/* Keeps the first problem a stream showed. */
void guard__stream_bad(guard__answer *a, guard__body why) {
  if (a->bad == GUARD__BODY_OK) a->bad = why;
}

static void openai_chunk(guard__answer *a, const cJSON *root) {
  const cJSON *choices = cJSON_GetObjectItemCaseSensitive(root, "choices");
  const cJSON *usage = cJSON_GetObjectItemCaseSensitive(root, "usage");
  if (cJSON_IsObject(usage)) {
    a->tokens_in = guard__jlong(usage, "prompt_tokens");
    a->tokens_out = guard__jlong(usage, "completion_tokens");
  }
  if (!cJSON_IsArray(choices)) {
    if (!cJSON_IsObject(usage)) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    return;
  }
  const cJSON *c;
  cJSON_ArrayForEach(c, choices) {
    const cJSON *idx = cJSON_GetObjectItemCaseSensitive(c, "index");
    if (cJSON_IsNumber(idx) && idx->valuedouble != 0) continue;
    const cJSON *delta = cJSON_GetObjectItemCaseSensitive(c, "delta");
    const char *fr = guard__jstr(c, "finish_reason");
    if (fr && strcmp(fr, "content_filter") == 0) a->refusal = 1;
    if (!cJSON_IsObject(delta)) {
      if (fr == NULL) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
      continue;
    }
    if (guard__jstr(delta, "refusal")) a->refusal = 1;
    const char *t = guard__jstr(delta, "content");
    if (t) guard__add_text(a, t);
    const cJSON *tcd;
    cJSON_ArrayForEach(tcd, cJSON_GetObjectItemCaseSensitive(delta, "tool_calls")) {
      const cJSON *ix = cJSON_GetObjectItemCaseSensitive(tcd, "index");
      const cJSON *fn = cJSON_GetObjectItemCaseSensitive(tcd, "function");
      guard_tool_call *c = guard__tc_at(a, cJSON_IsNumber(ix) ? (int)ix->valuedouble : 0, 1);
      if (c == NULL) continue;
      guard__tc_names(c, guard__jstr(tcd, "id"), cJSON_IsObject(fn) ? guard__jstr(fn, "name") : NULL);
      const char *args = cJSON_IsObject(fn) ? guard__jstr(fn, "arguments") : NULL;
      if (args) guard__tc_append(c, args);
    }
  }
}

static void anthropic_event(guard__answer *a, const char *event,
                            const cJSON *root) {
  const char *type = guard__jstr(root, "type");
  if (type == NULL) type = event;
  if (strcmp(type, "message_start") == 0) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "message");
    const cJSON *u = cJSON_IsObject(m) ? cJSON_GetObjectItemCaseSensitive(m, "usage") : NULL;
    if (!cJSON_IsObject(m)) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    if (cJSON_IsObject(u)) {
      a->tokens_in = guard__jlong(u, "input_tokens");
      long out = guard__jlong(u, "output_tokens");
      if (out >= 0) a->tokens_out = out;
    }
  } else if (strcmp(type, "content_block_start") == 0) {
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(root, "content_block");
    const char *bt = cJSON_IsObject(b) ? guard__jstr(b, "type") : NULL;
    if (bt && strcmp(bt, "tool_use") == 0) {
      guard_tool_call *c = guard__tc_at(a, (int)guard__jlong(root, "index"), 1);
      if (c) guard__tc_names(c, guard__jstr(b, "id"), guard__jstr(b, "name"));
    }
  } else if (strcmp(type, "content_block_delta") == 0) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
    if (!cJSON_IsObject(d)) {
      guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
      return;
    }
    const char *dt = guard__jstr(d, "type");
    if (dt && strcmp(dt, "input_json_delta") == 0) {
      guard_tool_call *c = guard__tc_at(a, (int)guard__jlong(root, "index"), 0);
      const char *pj = guard__jstr(d, "partial_json");
      if (c && pj) guard__tc_append(c, pj);
    }
    if (dt && strcmp(dt, "text_delta") == 0) {
      const char *t = guard__jstr(d, "text");
      if (t == NULL)
        guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
      else
        guard__add_text(a, t);
    }
  } else if (strcmp(type, "message_delta") == 0) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "delta");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(root, "usage");
    const char *sr = cJSON_IsObject(d) ? guard__jstr(d, "stop_reason") : NULL;
    if (sr && strcmp(sr, "refusal") == 0) a->refusal = 1;
    if (cJSON_IsObject(u)) {
      long out = guard__jlong(u, "output_tokens");
      if (out >= 0) a->tokens_out = out;
    }
  } else if (strcmp(type, "message_stop") == 0) {
    a->done = 1;
  }
  /* ping, content_block_start/stop and unknown events change nothing. */
}

/* One Responses API stream event: text deltas count, the response's own
   ending decides (completed, incomplete, failed). */
static void responses_event(guard__answer *a, const char *event, const cJSON *root) {
  const char *type = guard__jstr(root, "type");
  if (type == NULL) type = event;
  if (strcmp(type, "response.output_text.delta") == 0) {
    const char *t = guard__jstr(root, "delta");
    if (t == NULL) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    else guard__add_text(a, t);
  } else if (strcmp(type, "response.refusal.delta") == 0) {
    a->refusal = 1;
  } else if (strcmp(type, "response.output_item.added") == 0) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "item");
    const char *it_type = cJSON_IsObject(it) ? guard__jstr(it, "type") : NULL;
    if (it_type && strcmp(it_type, "function_call") == 0) {
      guard_tool_call *c = guard__tc_at(a, (int)guard__jlong(root, "output_index"), 1);
      if (c) guard__tc_names(c, guard__jstr(it, "call_id"), guard__jstr(it, "name"));
    }
  } else if (strcmp(type, "response.function_call_arguments.delta") == 0) {
    guard_tool_call *c = guard__tc_at(a, (int)guard__jlong(root, "output_index"), 0);
    const char *d = guard__jstr(root, "delta");
    if (c && d) guard__tc_append(c, d);
  } else if (strcmp(type, "response.completed") == 0 ||
             strcmp(type, "response.incomplete") == 0) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "response");
    const cJSON *u = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "usage") : NULL;
    if (cJSON_IsObject(u)) {
      a->tokens_in = guard__jlong(u, "input_tokens");
      a->tokens_out = guard__jlong(u, "output_tokens");
    }
    const cJSON *inc = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "incomplete_details")
                                         : NULL;
    const char *reason = cJSON_IsObject(inc) ? guard__jstr(inc, "reason") : NULL;
    if (reason && strcmp(reason, "content_filter") == 0) a->refusal = 1;
    a->done = 1;
  } else if (strcmp(type, "response.failed") == 0) {
    a->error = 1;
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(root, "response");
    const cJSON *e = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "error") : NULL;
    const char *code = cJSON_IsObject(e) ? guard__jstr(e, "code") : NULL;
    if (code) guard__strlcpy(a->err_code, code, sizeof a->err_code);
  }
}

/* Applies one SSE event of the answer's dialect to *a. */
int guard__wire_stream_event(guard__answer *a, const char *event,
                             const char *data, size_t len) {
  if (a->done || a->error) return 0; /* nothing after the end counts */
  if (a->dialect == GUARD_OPENAI && len == 6 && memcmp(data, "[DONE]", 6) == 0) {
    a->done = 1;
    return 0;
  }
  cJSON *root = guard__json_parse(data, len, &a->oom);
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    return 0;
  }
  const char *type = guard__jstr(root, "type");
  if (a->dialect == GUARD_COHERE) {
    guard__cohere_event(a, event, root); /* its errors are typed events */
  } else if (read_error(root, a) || (type && strcmp(type, "error") == 0) ||
      strcmp(event, "error") == 0) {
    a->error = 1;
    const char *code = guard__jstr(root, "code"); /* Responses: the code is top-level */
    if (code && !a->err_code[0]) guard__strlcpy(a->err_code, code, sizeof a->err_code);
  } else if (a->dialect == GUARD_ANTHROPIC) {
    anthropic_event(a, event, root);
  } else if (a->dialect == GUARD_RESPONSES) {
    responses_event(a, event, root);
  } else if (a->dialect == GUARD_GEMINI) {
    int finished = 0;
    guard__body b = parse_gemini(root, a, &finished);
    if (b == GUARD__BODY_MISSING) guard__stream_bad(a, GUARD__BODY_BAD_CHUNK);
    if (finished) a->done = 1;
  } else {
    openai_chunk(a, root);
  }
  cJSON_Delete(root);
  return 0;
}

/* What a stream that ended cleanly at the transport level was. */
guard__body guard__wire_stream_end(const guard__answer *a) {
  if (a->error) return GUARD__BODY_ERROR;
  if (a->bad != GUARD__BODY_OK) return a->bad;
  if (a->refusal) return GUARD__BODY_REFUSAL;
  if (!a->done) return GUARD__BODY_NO_END;
  return GUARD__BODY_OK;
}
