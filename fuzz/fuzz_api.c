/*
 * fuzz_api.c - what the server reads of a request to the newer APIs
 * (Responses, Gemini, Anthropic Messages, and the OpenAI ones beside them)
 * before a scenario sees it: sim__request_read (sim/server.c: the route a
 * path selects, with Azure deployments and Gemini's
 * /models/{model}:generateContent, then the body's model, stream flag,
 * offered tools and input count), then what follows from it: the answer in
 * the routed dialect with the model read (body and stream frames, as
 * fuzz_sim.h renders them) and the `end` event's tool calls
 * (sim__trace_tools) for a step that calls the first offered tool.
 *
 * Input layout, '\n'-separated: method, path, then the body (the rest of
 * the input, any bytes). The scenario has the providers "primary" and
 * "backup" (a path under /backup/ selects the second).
 *
 * Checks beyond no crash: a model is always read (body, path or the
 * default), a Gemini route has a path model under its bound and the stream
 * flag of its verb; the input count is 1..2048; the offered list is
 * "\n"-framed (or "" when the tools offered have no name); every answer
 * body and stream frame is JSON; a tool the request offered is marked
 * offered in the trace, one it did not is not.
 */
#include "fuzz_sim.h"
#include "sim/server_int.h"

#include <stdint.h>

static const char SCENARIO[] =
    "return scenario {\n"
    "  name = 'fuzz api',\n"
    "  providers = {\n"
    "    { name = 'primary', chat {} },\n"
    "    { name = 'backup', chat {} },\n"
    "  },\n"
    "}\n";

static char scenario_path[256];
static sim_scenario *sc;

static void cleanup(void) {
  sim__scenario_free(sc);
  unlink(scenario_path);
}

/* The scenario is only read (its provider names), so it is loaded once. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fz_temp_path(scenario_path, sizeof scenario_path, "api");
  fz_write_file(scenario_path, SCENARIO, sizeof SCENARIO - 1);
  char err[SIM_ERRLEN];
  if (sim__scenario_load(scenario_path, 7, &sc, err) != SIM_OK) {
    fprintf(stderr, "fuzz_api: %s\n", err);
    abort();
  }
  atexit(cleanup);
  return 0;
}

static char *take_line(const char **p, const char *end) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
  char *s = strndup(*p, n); /* stops at a NUL byte, as MHD's strings would */
  if (s == NULL) abort();
  *p = nl ? nl + 1 : end;
  return s;
}

/* The first name of an offered list "\nname\n...", or NULL. */
static char *first_offered(const char *offered) {
  if (offered == NULL || offered[0] != '\n') return NULL;
  const char *e = strchr(offered + 1, '\n');
  return e ? strndup(offered + 1, (size_t)(e - offered - 1)) : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256 * 1024) return 0;
  const char *p = (const char *)data, *end = p + size;
  char *method = take_line(&p, end);
  char *url = take_line(&p, end);
  size_t body_len = (size_t)(end - p);
  char *body = malloc(body_len + 1);
  if (body == NULL) abort();
  memcpy(body, p, body_len);
  body[body_len] = '\0';

  sim_server srv;
  memset(&srv, 0, sizeof srv);
  srv.sc = sc;
  sim_conn *c = calloc(1, sizeof *c);
  if (c == NULL) abort();
  c->srv = &srv;
  c->body = body;
  c->body_len = body_len;
  c->body_cap = body_len + 1;
  sim__request_read(c, method, url);

  if (c->provider < -2 || c->provider > 1) abort();
  if (c->provider == -1 && c->dialect != SIM_DIALECT_EFFECT) abort();
  if (c->dialect != SIM_DIALECT_EFFECT) {
    if (c->model == NULL) abort();
    if (c->ninputs < 1 || c->ninputs > 2048) abort();
  }
  if (c->provider >= 0 && c->dialect == SIM_DIALECT_GEMINI) {
    size_t ml = strlen(c->path_model);
    if (ml == 0 || ml >= sizeof c->path_model) abort();
    static const char VERB[] = ":streamGenerateContent";
    size_t ul = strlen(url), vl = sizeof VERB - 1;
    if (c->path_stream != (ul >= vl && strcmp(url + ul - vl, VERB) == 0)) abort();
    if (c->path_stream && !c->stream_req) abort();
  }
  if (c->offered != NULL) {
    size_t n = strlen(c->offered);
    /* "" when the tools offered have no name */
    if (n == 1 || (n > 1 && (c->offered[0] != '\n' || c->offered[n - 1] != '\n'))) abort();
  }

  if (c->provider >= 0) {
    /* The answer, in the routed dialect, with the model the request named. */
    sim_step *s = sim__step_new(c->stream_req ? SIM_STEP_STREAM : SIM_STEP_CHAT);
    if (s == NULL) abort();
    char *tool = first_offered(c->offered);
    s->tool_calls = calloc(2, sizeof *s->tool_calls);
    if (s->tool_calls == NULL) abort();
    s->ntool_calls = 2;
    s->tool_calls[0].id = strdup("call_1");
    s->tool_calls[0].name = strdup(tool ? tool : "offered_nowhere");
    s->tool_calls[0].arguments = strndup(body, 300);
    s->tool_calls[1].id = strdup("call_2");
    s->tool_calls[1].name = strdup("\x01never offered\x01");
    s->tool_calls[1].arguments = strdup("{\"a\":1}");
    for (int i = 0; i < 2; i++)
      if (!s->tool_calls[i].id || !s->tool_calls[i].name || !s->tool_calls[i].arguments)
        abort();
    if (c->dialect != SIM_DIALECT_MODELS && c->dialect != SIM_DIALECT_EMBEDDINGS)
      fz_render(s, c->dialect, c->model, 0);

    c->cur = s;
    c->status = 200;
    c->chunks = 1000;
    cJSON *calls = sim__trace_tools(c);
    if (calls != NULL) {
      const cJSON *a = cJSON_GetArrayItem(calls, 0), *b = cJSON_GetArrayItem(calls, 1);
      int offered0 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(a, "offered"));
      int offered1 = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(b, "offered"));
      if (a != NULL && offered0 != (tool != NULL)) {
        fprintf(stderr, "tool '%s' offered=%d, the request %s it\n", tool ? tool : "",
                offered0, tool ? "offered" : "did not offer");
        abort();
      }
      /* the second is offered exactly when the list holds it, framed */
      const char *n1 = s->tool_calls[1].name;
      char framed[64];
      snprintf(framed, sizeof framed, "\n%s\n", n1);
      if (b != NULL && offered1 != (c->offered != NULL && strstr(c->offered, framed) != NULL))
        abort();
      char *text = cJSON_PrintUnformatted(calls);
      if (text != NULL) {
        cJSON *back = cJSON_Parse(text);
        if (!cJSON_IsArray(back)) abort();
        cJSON_Delete(back);
      }
      free(text);
      cJSON_Delete(calls);
    }
    c->cur = NULL;
    sim__step_free(s);
    free(tool);
  }

  if (c->model != c->model_small) free(c->model); /* a short one is in the conn */
  free(c->offered);
  free(c->lookup_key);
  free(c);
  free(body);
  free(method);
  free(url);
  return 0;
}
