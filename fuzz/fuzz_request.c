/*
 * fuzz_request.c - the server's request path after libmicrohttpd has framed
 * a request: the logical-request key (sim_request_key), the fingerprint,
 * secret-header redaction, the body as server.c reads it with cJSON (model,
 * stream), the model echoed into a rendered answer, and the request handed
 * to a scenario: req.headers and req.body turned into Lua tables
 * (sim__lua_push_json_value) for provider functions that walk them.
 *
 * Input layout, '\n'-separated: method, path, Idempotency-Key (empty line =
 * none), then "name: value" header lines up to an empty line, then the body
 * (the rest of the input, any bytes).
 */
#include "fuzz_sim.h"

#include <stdint.h>

/* A scenario whose providers read every part of the request. */
static const char SCENARIO[] =
    "local function walk(v, depth, acc)\n"
    "  acc.n = acc.n + 1\n"
    "  if acc.n > 5000 or depth > 80 then return end\n"
    "  if type(v) == 'table' then\n"
    "    for k, x in pairs(v) do walk(k, depth + 1, acc); walk(x, depth + 1, acc) end\n"
    "  elseif type(v) == 'string' then acc.len = acc.len + #v\n"
    "  elseif type(v) == 'number' then acc.sum = acc.sum + (v == v and 1 or 0)\n"
    "  end\n"
    "end\n"
    "local function look(req)\n"
    "  local acc = { n = 0, len = 0, sum = 0 }\n"
    "  walk(req.body, 0, acc)\n"
    "  walk(req.headers, 0, acc)\n"
    "  local model = type(req.body) == 'table' and req.body.model or nil\n"
    "  if type(model) ~= 'string' then model = nil end\n"
    "  local msgs = type(req.body) == 'table' and req.body.messages or nil\n"
    "  local text = 'n=' .. acc.n .. ' len=' .. acc.len .. ' ' .. req.method .. ' ' .. req.path\n"
    "  if type(msgs) == 'table' and type(msgs[1]) == 'table' and\n"
    "     type(msgs[1].content) == 'string' then\n"
    "    text = text .. ' ' .. msgs[1].content:sub(1, 200)\n"
    "  end\n"
    "  local h = req.headers['x-fuzz'] or ''\n"
    "  if req.stream then\n"
    "    return stream { content = text, model = model, interval = 0 }\n"
    "  elseif h:find('fail', 1, true) then\n"
    "    return fail { status = 429, message = text:sub(1, 100), retry_after = 1.5 }\n"
    "  end\n"
    "  return chat { content = text, model = model }\n"
    "end\n"
    "return scenario {\n"
    "  name = 'fuzz request',\n"
    "  providers = {\n"
    "    { name = 'primary', fn = look },\n"
    "    { name = 'backup', chat {}, fail { status = 503 } },\n"
    "  },\n"
    "  effects = function(req) look(req); return effect { apply = true } end,\n"
    "}\n";

static char scenario_path[256];

static void remove_file(void) { unlink(scenario_path); }

/* The scenario is loaded afresh for every input: a state kept across inputs
 * would make libFuzzer's leak check scan the heap after every one of them
 * (its garbage looks like a leak until collected), and a crash would depend
 * on the inputs before it. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fz_temp_path(scenario_path, sizeof scenario_path, "request");
  fz_write_file(scenario_path, SCENARIO, sizeof SCENARIO - 1);
  atexit(remove_file);
  return 0;
}

#define MAX_HEADERS 32

/* Cuts the next '\n'-ended line off [*p, end) as a NUL-terminated copy. */
static char *take_line(const char **p, const char *end) {
  const char *nl = memchr(*p, '\n', (size_t)(end - *p));
  size_t n = nl ? (size_t)(nl - *p) : (size_t)(end - *p);
  char *s = strndup(*p, n); /* stops at a NUL byte, as MHD's strings would */
  if (s == NULL) abort();
  *p = nl ? nl + 1 : end;
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 256 * 1024) return 0;
  const char *p = (const char *)data, *end = p + size;
  char *method = take_line(&p, end);
  char *path = take_line(&p, end);
  char *idem = take_line(&p, end);
  sim_header headers[MAX_HEADERS];
  int nheaders = 0;
  while (p < end && *p != '\n' && nheaders < MAX_HEADERS) {
    char *line = take_line(&p, end);
    char *colon = strchr(line, ':');
    if (colon != NULL) {
      *colon = '\0';
      const char *v = colon + 1;
      while (*v == ' ') v++;
      /* server.c: lower-case names, secrets redacted */
      for (char *c = line; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
      headers[nheaders].name = strdup(line);
      headers[nheaders].value = strdup(sim__header_is_secret(line) ? "[redacted]" : v);
      if (!headers[nheaders].name || !headers[nheaders].value) abort();
      nheaders++;
    }
    free(line);
  }
  if (p < end && *p == '\n') p++;
  const char *body = p;
  size_t body_len = (size_t)(end - p);

  /* The logical request key, into buffers of several sizes. */
  static const size_t CAPS[] = {96, 32, 22, 8, 1};
  for (size_t i = 0; i < sizeof CAPS / sizeof CAPS[0]; i++) {
    char key[96];
    memset(key, 'x', sizeof key);
    int rc = sim_request_key(idem[0] ? idem : NULL, method, path, body, body_len, key,
                             CAPS[i]);
    if (memchr(key, '\0', CAPS[i]) == NULL) abort(); /* always terminated */
    if (rc == SIM_OK && strncmp(key, idem[0] ? "idem:" : "hash:", CAPS[i] < 6 ? 0 : 5) != 0)
      abort();
    /* server.c falls back to the hash when the Idempotency-Key is too long */
    if (rc != SIM_OK && CAPS[i] >= 22 &&
        sim_request_key(NULL, method, path, body, body_len, key, CAPS[i]) != SIM_OK)
      abort();
  }
  char fp[17];
  sim__fingerprint(body, body_len, fp);
  if (strlen(fp) != 16) abort();

  /* server.c parse_body: the model and the stream flag. */
  cJSON *j = body_len ? cJSON_ParseWithLength(body, body_len) : NULL;
  cJSON *jm = cJSON_GetObjectItemCaseSensitive(j, "model");
  char *model = strdup(cJSON_IsString(jm) ? jm->valuestring : "fusebox-1");
  int stream = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "stream"));
  cJSON_Delete(j);
  if (model == NULL) abort();
  char *b = sim__chat_body(SIM_DIALECT_ANTHROPIC, "req_1", model, "hi", 1, 1);
  fz_json_object(b);
  free(b);

  /* The request as the scenario sees it, at each provider. */
  sim_scenario *sc = NULL;
  char lerr[SIM_ERRLEN];
  if (sim__scenario_load(scenario_path, 7, &sc, lerr) != SIM_OK) {
    fprintf(stderr, "fuzz_request: %s\n", lerr);
    abort();
  }
  char key[96];
  sim_request_key(NULL, method, path, body, body_len, key, sizeof key);
  for (int prov = -1; prov < 2; prov++) {
    sim_dialect d = prov < 0 ? SIM_DIALECT_EFFECT : prov ? SIM_DIALECT_ANTHROPIC
                                                         : SIM_DIALECT_OPENAI;
    sim_req req = {.attempt = 1, .n = 1, .method = method, .path = path,
                   .provider = NULL, .dialect = d, .headers = headers,
                   .nheaders = nheaders, .body = body, .body_len = body_len,
                   .stream = stream, .t = 0.5, .key = key};
    sim_step *step = NULL;
    char err[SIM_ERRLEN];
    int rc = sim__scenario_decide(sc, prov, &req, &step, err);
    if (rc == SIM_OK) {
      if (step == NULL) abort();
      fz_render(step, d, model, 0);
    } else if (step != NULL || err[0] == '\0') {
      abort();
    }
    sim__step_free(step);
  }

  sim__scenario_free(sc);
  free(model);
  for (int i = 0; i < nheaders; i++) {
    free(headers[i].name);
    free(headers[i].value);
  }
  free(method);
  free(path);
  free(idem);
  return 0;
}
