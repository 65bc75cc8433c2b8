/*
 * tools_trace.c - what the trace says about tool calls: the tools a request
 * offered, and for each tool call an answer carried, whether its arguments
 * reached the client whole (a stream or body cut inside them: "cut"), were
 * JSON ("invalid" when not), and named an offered tool. reports/ judges
 * tool_integrity from these lines alone.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/server_int.h"

#define MAX_OFFERED 2048 /* bytes of offered tool names kept per request */
#define TRACE_ARGS_MAX 4096 /* bytes of a tool call's arguments in the trace */

static void add_name(char *buf, const char *name) {
  size_t len = strlen(buf), n = strlen(name);
  if (len + n + 2 > MAX_OFFERED) return;
  if (len == 0) buf[len++] = '\n';
  memcpy(buf + len, name, n);
  buf[len + n] = '\n';
  buf[len + n + 1] = '\0';
}

/* Records the tool names the request body offers (OpenAI chat
   tools[].function.name, Responses and Anthropic tools[].name, Gemini
   tools[].functionDeclarations[].name). c->offered stays NULL when the
   body offers none. */
void sim__offered_tools(sim_conn *c, const cJSON *body) {
  const cJSON *tools = cJSON_GetObjectItemCaseSensitive(body, "tools");
  if (!cJSON_IsArray(tools)) return;
  char *buf = calloc(1, MAX_OFFERED);
  if (buf == NULL) return;
  const cJSON *t;
  cJSON_ArrayForEach(t, tools) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(t, "name");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(t, "function");
    if (!cJSON_IsString(n) && cJSON_IsObject(fn)) n = cJSON_GetObjectItemCaseSensitive(fn, "name");
    if (cJSON_IsString(n)) add_name(buf, n->valuestring);
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(t, "functionDeclarations")) {
      const cJSON *dn = cJSON_GetObjectItemCaseSensitive(d, "name");
      if (cJSON_IsString(dn)) add_name(buf, dn->valuestring);
    }
  }
  c->offered = buf;
}

static int offered(const sim_conn *c, const char *name) {
  if (c->offered == NULL) return 0;
  size_t n = strlen(name);
  /* a name that starts with '\n' (a scenario may give one) matches at the
     list's first byte, which has no byte before it: fuzz_api found it */
  for (const char *p = c->offered; (p = strstr(p, name)) != NULL; p++)
    if (p > c->offered && p[-1] == '\n' && p[n] == '\n') return 1;
  return 0;
}

/* One tool call entry; see server_int.h. */
cJSON *sim__trace_tool_entry(const sim_conn *c, const char *id, const char *name,
                             const char *args, const char *arguments, size_t sent) {
  cJSON *o = cJSON_CreateObject();
  if (o == NULL) return NULL;
  if (id != NULL) cJSON_AddStringToObject(o, "id", id);
  cJSON_AddStringToObject(o, "name", name ? name : "");
  cJSON_AddStringToObject(o, "args", args);
  size_t alen = strlen(arguments);
  char *red = sim_redact_text(arguments, alen > TRACE_ARGS_MAX ? TRACE_ARGS_MAX : alen);
  if (red != NULL) cJSON_AddStringToObject(o, "arguments", red);
  free(red);
  char fp[17];
  sim__fingerprint(arguments, sent <= alen ? sent : alen, fp);
  cJSON_AddStringToObject(o, "args_fingerprint", fp);
  cJSON_AddBoolToObject(o, "offered", name != NULL && offered(c, name));
  return o;
}

/* Stream chunks one tool call's arguments take (see the dialect files). */
static int arg_chunks(sim_dialect d, const sim_tool_call *tc) {
  if (sim__dialect_tool_form(d) == 1) return 1;
  size_t len = tc->arguments ? strlen(tc->arguments) : 0;
  return len ? (int)((len + 7) / 8) : 1;
}

/* The end event's "tool_calls": [{id, name, args: "valid"|"invalid"|"cut",
   args_fingerprint, arguments, offered}] when the step played answered with tool calls, else NULL.
   Owned by the caller. */
cJSON *sim__trace_tools(const sim_conn *c) {
  if (c->up != NULL) return sim__upplay_tools(c);
  const sim_step *s = c->cur;
  int truncated = 0;
  if (s != NULL && s->kind == SIM_STEP_TRUNCATE) {
    truncated = 1;
    s = s->next;
  }
  if (s == NULL || (s->kind != SIM_STEP_CHAT && s->kind != SIM_STEP_STREAM) ||
      s->ntool_calls == 0 || c->status != 200 || sim__dialect_tool_form(c->dialect) == 0)
    return NULL;
  int streamed = s->kind == SIM_STEP_STREAM || c->stream_req;
  int need = c->player_ntexts;
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr != NULL && i < s->ntool_calls; i++) {
    const sim_tool_call *tc = &s->tool_calls[i];
    need += arg_chunks(c->dialect, tc);
    cJSON *o = cJSON_CreateObject();
    if (o == NULL) return arr;
    cJSON_AddStringToObject(o, "id", tc->id);
    cJSON_AddStringToObject(o, "name", tc->name);
    const char *text = tc->arguments ? tc->arguments : "";
    cJSON *j = cJSON_Parse(text);
    const char *args = j ? "valid" : "invalid";
    cJSON_Delete(j);
    /* Where arguments travel as a JSON object (Gemini, Ollama; Anthropic's
       whole message), text that is not JSON went out as {}: valid, and empty. */
    if (j == NULL && (sim__dialect_tool_form(c->dialect) == 1 ||
                      ((c->dialect == SIM_DIALECT_ANTHROPIC ||
                        c->dialect == SIM_DIALECT_BEDROCK_INVOKE) && !streamed))) {
      text = "{}";
      args = "valid";
    }
    size_t sent = strlen(text);
    if (truncated || (streamed && c->chunks < need)) {
      args = "cut";
      int pieces = c->chunks - (need - arg_chunks(c->dialect, tc));
      if (pieces < 0 || truncated) pieces = 0;
      if (sim__dialect_tool_form(c->dialect) != 1 && (size_t)pieces * 8 < sent)
        sent = (size_t)pieces * 8;
    }
    cJSON_AddStringToObject(o, "args", args);
    /* The argument text the step answered with (what `fusebox import`
       replays), through the redaction rule, at most TRACE_ARGS_MAX bytes. */
    size_t alen = strlen(tc->arguments ? tc->arguments : "");
    if (alen > TRACE_ARGS_MAX) alen = TRACE_ARGS_MAX;
    char *red = sim_redact_text(tc->arguments ? tc->arguments : "", alen);
    if (red != NULL) cJSON_AddStringToObject(o, "arguments", red);
    free(red);
    /* The arguments as the client received them, as the effect event
       fingerprints a payload: an execution of exactly these is traceable. */
    char fp[17];
    sim__fingerprint(text, sent, fp);
    cJSON_AddStringToObject(o, "args_fingerprint", fp);
    cJSON_AddBoolToObject(o, "offered", offered(c, tc->name));
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}
