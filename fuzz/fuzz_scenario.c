/*
 * fuzz_scenario.c - the scenario loader (sim__scenario_load: the preamble,
 * the sandboxed Lua state, scenario{} and the step constructors) and, when
 * the input loads, its decisions (sim__scenario_decide) for three attempts of
 * a fixed request at every provider and the effect endpoint, each step then
 * rendered as the server would answer with it. The tables a scenario carries
 * go where `fusebox check` and `serve` send them: the expect table to
 * rpt_expect_check, the ratelimit table to sim__ratelimit_new.
 *
 * sim__scenario_load takes a path, so the input is written to one file per
 * process, rewritten for every input.
 */
#include "fuzz_sim.h"
#include "reports/reports.h"

#include <stdint.h>

static char path[256];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  fz_temp_path(path, sizeof path, "scenario");
  atexit(remove_file);
  return 0;
}

static const char BODY[] =
    "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"max_tokens\":16,"
    "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]}";

static void decide_all(sim_scenario *sc) {
  static const sim_header headers[] = {{"content-type", "application/json"},
                                       {"authorization", "[redacted]"},
                                       {"idempotency-key", "fx-1"}};
  int np = sim__scenario_nproviders(sc);
  if (np < 0) abort();
  for (int p = -1; p < np && p < 4; p++) {
    if (p == -1 && !sim__scenario_has_effects(sc)) continue;
    if (p >= 0 && sim__scenario_provider_name(sc, p) == NULL) abort();
    sim_dialect d = p < 0 ? SIM_DIALECT_EFFECT : p % 2 ? SIM_DIALECT_ANTHROPIC
                                                       : SIM_DIALECT_OPENAI;
    for (int attempt = 1; attempt <= 3; attempt++) {
      sim_req req = {.attempt = attempt, .n = attempt, .method = "POST",
                     .path = p < 0 ? "/v1/effects/send" : "/v1/chat/completions",
                     .provider = p < 0 ? "effects" : sim__scenario_provider_name(sc, p),
                     .dialect = d, .headers = headers, .nheaders = 3, .body = BODY,
                     .body_len = sizeof BODY - 1, .stream = attempt != 2,
                     .t = 0.25 * attempt, .key = "hash:0123456789abcdef"};
      sim_step *step = NULL;
      char err[SIM_ERRLEN];
      int rc = sim__scenario_decide(sc, p, &req, &step, err);
      if (rc == SIM_OK) {
        if (step == NULL) abort();
        fz_render(step, d, "gpt-4o-mini", 0);
      } else if (step != NULL || err[0] == '\0') {
        abort(); /* an error gives no step and says why */
      }
      sim__step_free(step);
    }
  }
}

static void tables(sim_scenario *sc) {
  char err[RPT_ERRLEN];
  const char *expect = sim__scenario_expect_json(sc);
  const char *client = sim__scenario_client_json(sc);
  if (expect) rpt_expect_check(expect, client, err);
  const char *rl = sim__scenario_ratelimit_json(sc);
  if (rl) {
    sim_ratelimit *r = NULL;
    char serr[SIM_ERRLEN];
    if (sim__ratelimit_new(rl, 0.01, NULL, &r, serr) == SIM_OK) {
      for (int i = 0; i < 5; i++) {
        sim_rl_result res;
        memset(&res, 0, sizeof res);
        sim__ratelimit_take(r, 100 * i, &res);
        if (res.nheaders < 0 || res.nheaders > SIM_RL_HEADERS) abort();
      }
      sim__ratelimit_free(r);
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 64 * 1024) return 0;
  fz_write_file(path, data, size);
  sim_scenario *sc = NULL;
  char err[SIM_ERRLEN];
  int rc = sim__scenario_load(path, 42, &sc, err);
  if (rc != SIM_OK) {
    if (sc != NULL || err[0] == '\0' || memchr(err, '\0', sizeof err) == NULL) abort();
    return 0;
  }
  if (sc == NULL) abort();
  (void)sim__scenario_name(sc);
  (void)sim__scenario_doc(sc);
  for (int i = 0; i < sim__scenario_ntags(sc); i++)
    if (sim__scenario_tag(sc, i) == NULL) abort();
  (void)sim__scenario_idempotency_honoured(sc);
  (void)sim__scenario_ledger_up(sc);
  tables(sc);
  decide_all(sc);
  sim__scenario_free(sc);
  return 0;
}
