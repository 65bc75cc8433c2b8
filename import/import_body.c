/*
 * import_body.c - what a response body says, in every API fusebox speaks
 * (OpenAI chat completions, OpenAI Responses, Anthropic messages, Gemini):
 * a provider error, or the answer whole (text, tool calls with their ids,
 * names and arguments, finish reason, usage, model), from a JSON body or
 * from an SSE stream (its text chunks, its tool calls as they were
 * streamed, an in-band error event, a missing end). Every reader of
 * `fusebox import` hands bodies here (imp__resp_body).
 */
#define _GNU_SOURCE /* strcasestr */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_int.h"

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_s(const cJSON *o, const char *k) {
  const cJSON *it = get(o, k);
  return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* Reads usage from OpenAI, Anthropic or Gemini field names. */
static void take_usage(imp_resp *r, const cJSON *u) {
  const char *in[] = {"prompt_tokens", "input_tokens", "promptTokenCount"};
  const char *out[] = {"completion_tokens", "output_tokens", "candidatesTokenCount"};
  for (int i = 0; i < 3; i++) {
    const cJSON *a = get(u, in[i]), *b = get(u, out[i]);
    if (cJSON_IsNumber(a) && a->valuedouble >= 0 && a->valuedouble < 2e9)
      r->usage_in = (int)a->valuedouble;
    if (cJSON_IsNumber(b) && b->valuedouble >= 0 && b->valuedouble < 2e9)
      r->usage_out = (int)b->valuedouble;
  }
}

static int take_model(imp_resp *r, const cJSON *j) {
  const char *m = get_s(j, "model");
  if (m == NULL) m = get_s(j, "modelVersion"); /* Gemini */
  if (m == NULL || m[0] == '\0') return SIM_OK;
  return imp__take_str(&r->model, get(j, get_s(j, "model") ? "model" : "modelVersion"));
}

/* The finish reason an API named, as the step's `incomplete`. */
static void take_finish(imp_resp *r, const char *reason) {
  if (reason == NULL) return;
  if (strcmp(reason, "length") == 0 || strcmp(reason, "max_tokens") == 0 ||
      strcmp(reason, "max_output_tokens") == 0 || strcmp(reason, "MAX_TOKENS") == 0)
    r->finish = IMP_FINISH_LENGTH;
  else if (strcmp(reason, "content_filter") == 0 || strcmp(reason, "refusal") == 0 ||
           strcmp(reason, "SAFETY") == 0)
    r->finish = IMP_FINISH_FILTER;
}

/* A provider error object; see import_int.h. */
int imp__resp_error_json(imp_resp *r, const cJSON *j, int *rc) {
  const cJSON *e = get(j, "error");
  *rc = SIM_OK;
  if (cJSON_IsString(e)) {
    *rc = imp__take_str(&r->message, e);
    return 1;
  }
  if (!cJSON_IsObject(e)) {
    /* The Responses stream's error event: {"type":"error","code":,"message":} */
    const char *ty = get_s(j, "type");
    if (ty == NULL || strcmp(ty, "error") != 0) return 0;
    e = j;
  }
  /* Google: {"code": 503, "status": "UNAVAILABLE"}: the status string is
     the code a fail step names (the number is the HTTP status). */
  const cJSON *code = get(e, "code");
  if (cJSON_IsNumber(code) && cJSON_IsString(get(e, "status"))) code = get(e, "status");
  if (*rc == SIM_OK) *rc = imp__take_str(&r->code, code);
  if (*rc == SIM_OK && e != j) *rc = imp__take_str(&r->type, get(e, "type"));
  if (*rc == SIM_OK) *rc = imp__take_str(&r->message, get(e, "message"));
  return 1;
}

static int append_text(char **dst, const char *s) {
  size_t a = *dst ? strlen(*dst) : 0, n = strlen(s);
  if (a + n > IMP_MAX_TEXT) n = a < IMP_MAX_TEXT ? IMP_MAX_TEXT - a : 0;
  char *p = realloc(*dst, a + n + 1);
  if (p == NULL) return SIM_ENOMEM;
  memcpy(p + a, s, n);
  p[a + n] = '\0';
  *dst = p;
  return SIM_OK;
}

/* Arguments given as a JSON value (Anthropic input, Gemini args): their
   text, as the server will write them again. */
static int tool_json(imp_resp *r, int key, const char *id, const char *name, const cJSON *v) {
  char *text = v ? cJSON_PrintUnformatted(v) : NULL;
  if (v != NULL && text == NULL) return SIM_ENOMEM;
  int rc = imp__resp_tool(r, key, id, name, text);
  free(text);
  return rc;
}

/* ------------------------------------------------------------ bodies */

/* OpenAI chat: choices[0].message {content, tool_calls}, finish_reason;
   legacy completions: choices[0].text. */
static int chat_body(imp_resp *r, const cJSON *ch) {
  int rc = SIM_OK;
  const cJSON *msg = get(ch, "message");
  const cJSON *c = get(msg, "content");
  if (!cJSON_IsString(c)) c = get(ch, "text");
  if (cJSON_IsString(c)) rc = imp__take_str(&r->content, c);
  take_finish(r, get_s(ch, "finish_reason"));
  const cJSON *tc;
  int i = 0;
  cJSON_ArrayForEach(tc, get(msg, "tool_calls")) {
    const cJSON *fn = get(tc, "function");
    if (rc == SIM_OK)
      rc = imp__resp_tool(r, i++, get_s(tc, "id"), get_s(fn, "name"), get_s(fn, "arguments"));
  }
  return rc;
}

/* Anthropic: content[] text and tool_use blocks, stop_reason. */
static int anthropic_body(imp_resp *r, const cJSON *blocks, const cJSON *j) {
  int rc = SIM_OK, i = 0;
  const cJSON *b;
  take_finish(r, get_s(j, "stop_reason"));
  cJSON_ArrayForEach(b, blocks) {
    const char *ty = get_s(b, "type");
    const char *t = get_s(b, "text");
    if (t != NULL && rc == SIM_OK) rc = append_text(&r->content, t);
    if (ty != NULL && strcmp(ty, "tool_use") == 0 && rc == SIM_OK)
      rc = tool_json(r, i++, get_s(b, "id"), get_s(b, "name"), get(b, "input"));
  }
  return rc;
}

/* Responses: output[] message items (output_text parts) and function_call
   items, status and incomplete_details. */
static int responses_body(imp_resp *r, const cJSON *output, const cJSON *j) {
  int rc = SIM_OK, i = 0;
  const cJSON *it;
  if (strcmp(get_s(j, "status") ? get_s(j, "status") : "", "incomplete") == 0)
    take_finish(r, get_s(get(j, "incomplete_details"), "reason"));
  cJSON_ArrayForEach(it, output) {
    const char *ty = get_s(it, "type");
    if (ty == NULL) continue;
    if (strcmp(ty, "message") == 0) {
      const cJSON *p;
      cJSON_ArrayForEach(p, get(it, "content")) {
        const char *t = get_s(p, "text");
        if (t != NULL && rc == SIM_OK) rc = append_text(&r->content, t);
      }
    } else if (strcmp(ty, "function_call") == 0 && rc == SIM_OK) {
      rc = imp__resp_tool(r, i++, get_s(it, "call_id"), get_s(it, "name"),
                          get_s(it, "arguments"));
    }
  }
  return rc;
}

/* Gemini: candidates[0].content.parts[] text and functionCall parts,
   finishReason. A streamed chunk is read the same way (text as a chunk). */
static int gemini_parts(imp_resp *r, const cJSON *cand, int chunked) {
  int rc = SIM_OK;
  const cJSON *p;
  take_finish(r, get_s(cand, "finishReason"));
  cJSON_ArrayForEach(p, get(get(cand, "content"), "parts")) {
    const char *t = get_s(p, "text");
    const cJSON *fc = get(p, "functionCall");
    if (t != NULL && rc == SIM_OK)
      rc = chunked ? (t[0] ? imp__resp_chunk(r, t, strlen(t)) : SIM_OK)
                   : append_text(&r->content, t);
    if (cJSON_IsObject(fc) && rc == SIM_OK)
      rc = tool_json(r, -1, get_s(fc, "id"), get_s(fc, "name"), get(fc, "args"));
  }
  return rc;
}

/* A whole answer of any API. */
static int take_completion(imp_resp *r, const cJSON *j) {
  const cJSON *u = get(j, "usage");
  if (!cJSON_IsObject(u)) u = get(j, "usageMetadata");
  if (cJSON_IsObject(u)) take_usage(r, u);
  int rc = take_model(r, j);
  if (rc != SIM_OK) return rc;
  const cJSON *ch = cJSON_GetArrayItem(get(j, "choices"), 0);
  if (ch != NULL) return chat_body(r, ch);
  const cJSON *cand = cJSON_GetArrayItem(get(j, "candidates"), 0);
  if (cand != NULL) return gemini_parts(r, cand, 0);
  if (cJSON_IsArray(get(j, "output"))) return responses_body(r, get(j, "output"), j);
  if (cJSON_IsArray(get(j, "content"))) return anthropic_body(r, get(j, "content"), j);
  return SIM_OK;
}

/* 1 if the body is made of SSE frames ("data:" or "event:" first). */
static int looks_like_sse(const char *s, size_t n) {
  size_t i = 0;
  while (i < n && isspace((unsigned char)s[i])) i++;
  return (n - i >= 5 && memcmp(s + i, "data:", 5) == 0) ||
         (n - i >= 6 && memcmp(s + i, "event:", 6) == 0) ||
         (n - i >= 1 && s[i] == ':');
}

/* ------------------------------------------------------------ streams */

/* What a stream showed so far. */
typedef struct sse_rd {
  int done;     /* its end marker ([DONE], message_stop, response.completed) */
  int finished; /* its finish chunk (finish_reason, stop_reason, finishReason) */
} sse_rd;

/* One frame of an OpenAI chat stream. */
static int chat_frame(imp_resp *r, sse_rd *s, const cJSON *j, const cJSON *ch) {
  int rc = SIM_OK;
  const cJSON *delta = get(ch, "delta");
  const cJSON *c = get(delta, "content");
  if (!cJSON_IsString(c)) c = get(ch, "text"); /* legacy completions */
  if (cJSON_IsString(c) && c->valuestring[0] != '\0')
    rc = imp__resp_chunk(r, c->valuestring, strlen(c->valuestring));
  const char *fr = get_s(ch, "finish_reason");
  if (fr != NULL) {
    s->finished = 1;
    take_finish(r, fr);
  }
  const cJSON *tc;
  cJSON_ArrayForEach(tc, get(delta, "tool_calls")) {
    const cJSON *idx = get(tc, "index"), *fn = get(tc, "function");
    int key = cJSON_IsNumber(idx) ? (int)idx->valuedouble : 0;
    if (rc == SIM_OK)
      rc = imp__resp_tool(r, key, get_s(tc, "id"), get_s(fn, "name"), get_s(fn, "arguments"));
  }
  const cJSON *u = get(j, "usage");
  if (cJSON_IsObject(u)) take_usage(r, u);
  if (rc == SIM_OK && r->model == NULL) rc = take_model(r, j);
  return rc;
}

/* One event of an Anthropic stream (ty: its "type"). */
static int anthropic_frame(imp_resp *r, sse_rd *s, const cJSON *j, const char *ty) {
  int rc = SIM_OK;
  const cJSON *idx = get(j, "index");
  int key = cJSON_IsNumber(idx) ? (int)idx->valuedouble : 0;
  if (strcmp(ty, "content_block_start") == 0) {
    const cJSON *cb = get(j, "content_block");
    const char *bt = get_s(cb, "type");
    if (bt != NULL && strcmp(bt, "tool_use") == 0)
      rc = imp__resp_tool(r, key, get_s(cb, "id"), get_s(cb, "name"), "");
  } else if (strcmp(ty, "content_block_delta") == 0) {
    const cJSON *d = get(j, "delta");
    const char *t = get_s(d, "text"), *pj = get_s(d, "partial_json");
    if (t != NULL && t[0] != '\0') rc = imp__resp_chunk(r, t, strlen(t));
    if (pj != NULL) rc = imp__resp_tool(r, key, NULL, NULL, pj);
  } else if (strcmp(ty, "message_start") == 0) {
    const cJSON *m = get(j, "message");
    const cJSON *u = get(m, "usage");
    if (cJSON_IsObject(u)) take_usage(r, u);
    rc = take_model(r, m);
  } else if (strcmp(ty, "message_delta") == 0) {
    const char *sr = get_s(get(j, "delta"), "stop_reason");
    if (sr != NULL) {
      s->finished = 1;
      take_finish(r, sr);
    }
    const cJSON *u = get(j, "usage");
    if (cJSON_IsObject(u)) take_usage(r, u);
  } else if (strcmp(ty, "message_stop") == 0) {
    s->done = 1;
  }
  return rc;
}

/* One event of a Responses stream (ty: its "type"). */
static int responses_frame(imp_resp *r, sse_rd *s, const cJSON *j, const char *ty) {
  int rc = SIM_OK;
  const cJSON *oi = get(j, "output_index");
  int key = cJSON_IsNumber(oi) ? (int)oi->valuedouble : 0;
  if (strcmp(ty, "response.output_text.delta") == 0) {
    const char *d = get_s(j, "delta");
    if (d != NULL && d[0] != '\0') rc = imp__resp_chunk(r, d, strlen(d));
  } else if (strcmp(ty, "response.output_item.added") == 0) {
    const cJSON *it = get(j, "item");
    const char *it_ty = get_s(it, "type");
    if (it_ty != NULL && strcmp(it_ty, "function_call") == 0)
      rc = imp__resp_tool(r, key, get_s(it, "call_id"), get_s(it, "name"), "");
  } else if (strcmp(ty, "response.function_call_arguments.delta") == 0) {
    const char *d = get_s(j, "delta");
    if (d != NULL) rc = imp__resp_tool(r, key, NULL, NULL, d);
  } else if (strcmp(ty, "response.created") == 0) {
    rc = take_model(r, get(j, "response"));
  } else if (strcmp(ty, "response.completed") == 0 ||
             strcmp(ty, "response.incomplete") == 0) {
    const cJSON *resp = get(j, "response");
    const cJSON *u = get(resp, "usage");
    if (cJSON_IsObject(u)) take_usage(r, u);
    if (strcmp(ty, "response.incomplete") == 0)
      take_finish(r, get_s(get(resp, "incomplete_details"), "reason"));
    s->done = s->finished = 1;
  }
  return rc;
}

/* Reads the chunks, tool calls, finish and errors of an SSE stream of
   any API. */
static int take_sse(imp_resp *r, const char *text, size_t n) {
  imp_lines it = {text, n, 0, 0};
  const char *line;
  size_t len;
  sse_rd s = {0, 0};
  int rc = SIM_OK, gemini = 0;
  r->stream = 1;
  while (rc == SIM_OK && imp__next_line(&it, &line, &len)) {
    if (len < 5 || memcmp(line, "data:", 5) != 0) continue;
    line += 5;
    len -= 5;
    if (len > 0 && line[0] == ' ') line++, len--;
    if (len == 6 && memcmp(line, "[DONE]", 6) == 0) {
      s.done = 1;
      continue;
    }
    cJSON *j = cJSON_ParseWithLength(line, len);
    if (j == NULL) continue;
    const char *ty = get_s(j, "type");
    if (ty == NULL) ty = "";
    const cJSON *ch = cJSON_GetArrayItem(get(j, "choices"), 0);
    const cJSON *cand = cJSON_GetArrayItem(get(j, "candidates"), 0);
    if (r->stream_error) {
      /* after the error (Responses' response.failed): nothing more */
    } else if (strcmp(ty, "error") == 0 ||
               (ch == NULL && cand == NULL && cJSON_IsObject(get(j, "error")))) {
      imp__resp_error_json(r, j, &rc);
      r->stream_error = 1;
    } else if (ch != NULL) {
      rc = chat_frame(r, &s, j, ch);
    } else if (cand != NULL) {
      gemini = 1;
      rc = gemini_parts(r, cand, 1);
      if (get_s(cand, "finishReason") != NULL) s.finished = s.done = 1;
      const cJSON *u = get(j, "usageMetadata");
      if (cJSON_IsObject(u)) take_usage(r, u);
      if (rc == SIM_OK && r->model == NULL) rc = take_model(r, j);
    } else if (strncmp(ty, "response.", 9) == 0) {
      rc = responses_frame(r, &s, j, ty);
    } else if (ty[0] != '\0') {
      rc = anthropic_frame(r, &s, j, ty);
    }
    cJSON_Delete(j);
  }
  if (gemini && r->api == NULL) r->api = "gemini";
  /* Without its end marker: with the finish chunk, only the terminator is
     missing; without it, the stream stopped before it. */
  if (!s.done && !r->stream_error) {
    if (s.finished) r->no_terminator = 1;
    else r->no_end = 1;
  }
  return rc;
}

/* Reads what a response body says; see import_int.h. */
int imp__resp_body(imp_resp *r, const char *body, size_t len, const cJSON *parsed, int sse) {
  int ok = r->status >= 200 && r->status < 300;
  if (parsed == NULL && body == NULL) return SIM_OK;
  if (parsed == NULL && (sse || looks_like_sse(body, len)) && ok)
    return take_sse(r, body, len);
  cJSON *own = NULL;
  if (parsed == NULL) {
    own = cJSON_ParseWithLength(body, len);
    parsed = own;
  }
  int rc = SIM_OK;
  if (cJSON_IsArray(parsed) && ok && cJSON_GetArrayItem(parsed, 0) != NULL &&
      cJSON_IsArray(get(cJSON_GetArrayItem(parsed, 0), "candidates"))) {
    /* Gemini's streamGenerateContent without alt=sse: a JSON array of
       chunks, read as the stream it was. */
    const cJSON *c;
    r->stream = 1;
    cJSON_ArrayForEach(c, parsed) {
      const cJSON *cand = cJSON_GetArrayItem(get(c, "candidates"), 0);
      if (cand != NULL && rc == SIM_OK) rc = gemini_parts(r, cand, 1);
      const cJSON *u = get(c, "usageMetadata");
      if (cJSON_IsObject(u)) take_usage(r, u);
    }
    cJSON_Delete(own);
    return rc;
  }
  if (!cJSON_IsObject(parsed)) {
    size_t i = 0;
    while (body && i < len && isspace((unsigned char)body[i])) i++;
    /* Not JSON. An excerpt that starts like JSON was only cut short. */
    if (ok && parsed == NULL && body != NULL && i < len && body[i] != '{' && body[i] != '[') {
      r->garbage = imp__dup_n(body, len);
      if (r->garbage == NULL) rc = SIM_ENOMEM;
    }
    cJSON_Delete(own);
    return rc;
  }
  if (!imp__resp_error_json(r, parsed, &rc) && ok) rc = take_completion(r, parsed);
  cJSON_Delete(own);
  return rc;
}

/* The API a request path names (docs/apis.md), or NULL. Static. */
const char *imp__api_of_path(const char *path) {
  if (path == NULL) return NULL;
  if (strstr(path, "/effects/")) return "effect";
  if (strstr(path, ":generateContent") || strstr(path, ":streamGenerateContent"))
    return "gemini";
  if (strstr(path, "/chat/completions")) return "openai-chat";
  if (strstr(path, "/responses")) return "openai-responses";
  if (strstr(path, "/messages")) return "anthropic";
  if (strstr(path, "/completions")) return "openai-completions";
  if (strstr(path, "/embeddings")) return "embeddings";
  return NULL;
}
