/*
 * test_lua_util.h - helpers for the Lua engine tests: scenario text in a
 * temporary file, loading it, and checking "file:line: message" errors.
 */
#ifndef FUSEBOX_TEST_LUA_UTIL_H
#define FUSEBOX_TEST_LUA_UTIL_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

/* Writes text to a fresh /tmp/fusebox_lua_XXXXXX.lua; returns its path
   (owned by the caller, free + unlink with tl_remove) or NULL. */
char *tl_write(const char *text);
/* Unlinks and frees a path from tl_write; NULL is a no-op. */
void tl_remove(char *path);

/* Loads text as a scenario (seed 1). Returns the load's code; *path gets
   the file's path (release with tl_remove). */
int tl_load(const char *text, sim_scenario **sc, char **path,
            char err[SIM_ERRLEN]);

/* A scenario with `provider = <provider>` and nothing else. Caller frees
   the result. */
char *tl_provider_text(const char *provider);

/*
 * Loads text, expects it to fail, and checks the message: "path:line: msg"
 * (line > 0) or "path: msg" (line 0). A msg ending in '*' matches as a
 * prefix. Returns 1 when it holds (and prints both otherwise).
 */
int tl_load_fails(const char *text, int line, const char *msg);

/* Checks err against "path:line: msg" as tl_load_fails does. */
int tl_err_is(const char *err, const char *path, int line, const char *msg);

/* A request for attempt `attempt` with a small OpenAI chat body. */
sim_req tl_req(int attempt);

/* Loads text, asks provider `provider` about attempt `attempt`, frees the
   scenario; returns the step (caller frees) or NULL with err set. */
sim_step *tl_decide_once(const char *text, int provider, int attempt,
                         char err[SIM_ERRLEN]);

#define TL_ASSERT_STR(actual, expected)                                      \
  do {                                                                       \
    const char *tl_a_ = (actual), *tl_e_ = (expected);                       \
    int tl_ok_ = tl_a_ != NULL && tl_e_ != NULL && strcmp(tl_a_, tl_e_) == 0; \
    if (!tl_ok_)                                                             \
      fprintf(stderr, "\n  %s:%d: got \"%s\", want \"%s\"\n", __FILE__,     \
              __LINE__, tl_a_ ? tl_a_ : "(null)", tl_e_ ? tl_e_ : "(null)"); \
    CU_ASSERT(tl_ok_);                                                       \
  } while (0)

#endif
