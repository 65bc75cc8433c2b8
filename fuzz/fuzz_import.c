/*
 * fuzz_import.c - the importer (imp_buffer: JSON Lines, HAR and
 * fusebox traces turned into a scenario) on hostile logs, in every format
 * and with detection. What it promises is checked on every scenario it
 * writes: at most IMP_MAX_OUTPUT bytes, and a file that loads
 * (sim__scenario_load; every string a valid Lua literal whatever the input
 * held), whose providers then answer a request.
 *
 * The first byte picks the format (and raw dates); the rest is the log.
 */
#include "fuzz_sim.h"
#include "import/import.h"

#include <stdint.h>

static char path[256];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fz_temp_path(path, sizeof path, "import");
  atexit(remove_file);
  return 0;
}

/* Loads the scenario the importer wrote and asks each provider once. */
static void load_and_ask(const char *lua, const char *input, size_t input_len) {
  fz_write_file(path, lua, strlen(lua));
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  if (sim__scenario_load(path, 1, &sc, err) != SIM_OK) {
    fprintf(stderr, "the importer wrote a scenario that does not load: %s\n"
                    "---- input (%zu bytes) ----\n%.*s\n---- scenario ----\n%s\n",
            err, input_len, (int)(input_len < 4096 ? input_len : 4096), input, lua);
    abort();
  }
  static const char body[] = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  int np = sim__scenario_nproviders(sc);
  for (int p = sim__scenario_has_effects(sc) ? -1 : 0; p < np && p < 4; p++) {
    for (int attempt = 1; attempt <= 2; attempt++) {
      sim_req req = {.attempt = attempt, .n = attempt, .method = "POST",
                     .path = "/v1/chat/completions",
                     .provider = p < 0 ? "effects" : sim__scenario_provider_name(sc, p),
                     .dialect = p < 0 ? SIM_DIALECT_EFFECT : SIM_DIALECT_OPENAI,
                     .body = body, .body_len = sizeof body - 1,
                     .key = "hash:0000000000000001"};
      sim_step *step = NULL;
      if (sim__scenario_decide(sc, p, &req, &step, err) == SIM_OK)
        fz_render(step, req.dialect, "m", 0);
      sim__step_free(step);
    }
  }
  sim__scenario_free(sc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 256 * 1024) return 0;
  static const imp_format FORMATS[4] = {IMP_AUTO, IMP_JSONL, IMP_HAR, IMP_TRACE};
  imp_opts opts = {.format = FORMATS[data[0] & 3], .source = "fuzz.log",
                          .name = NULL, .date = "2026-01-01",
                          .raw_dates = (data[0] >> 2) & 1};
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  char *lua = NULL;
  imp_stats stats;
  char err[SIM_ERRLEN];
  int rc = imp_buffer(text, len, &opts, &lua, &stats, err);
  if (rc == SIM_OK) {
    if (lua == NULL) abort();
    if (strlen(lua) > IMP_MAX_OUTPUT) abort();
    if (stats.attempts < 0 || stats.providers < 0 || stats.requests < 0) abort();
    (void)imp_format_name(stats.format);
    load_and_ask(lua, text, len);
  } else {
    if (lua != NULL) abort();
    if (err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) abort();
  }
  free(lua);
  return 0;
}
