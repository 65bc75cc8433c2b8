/* test_end_state.c - the terminal state of an attempt (sim/end_state.c),
   without a server: what the player sent and how the connection ended,
   side by side with the state the trace must say; the spelling of every
   state (agreed with reports/); and each dialect's word on its answer. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_int.h"

/* Shorthands for the table: the step, the status, then what went out. */
#define CHAT SIM_STEP_CHAT
#define STREAM SIM_STEP_STREAM
#define INC SIM_STATE_INCOMPLETE /* the dialect's word: Responses' "incomplete" */

static const struct {
  const char *name;
  sim_sent sent; /* kind, status, stream, short_body, error_event, end_marker, stalling, done */
  sim_end_how how;
  const char *state;
} CASES[] = {
    /* bodies */
    {"chat body", {CHAT, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "complete"},
    {"chat body, ended clean", {CHAT, 200, 0, 0, 0, 0, 0, 0}, SIM_END_CLEAN, "complete"},
    {"Responses incomplete body", {CHAT, 200, 0, 0, 0, 0, 0, INC}, SIM_END_OPEN, "incomplete"},
    {"stream step as one body (embeddings)", {STREAM, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN,
     "complete"},
    {"effect answer", {SIM_STEP_EFFECT, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "complete"},
    {"ledger conflict", {SIM_STEP_EFFECT, 409, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "error_status"},
    {"fail 429", {SIM_STEP_FAIL, 429, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "error_status"},
    {"fail 500, client left mid-body", {SIM_STEP_FAIL, 500, 0, 0, 0, 0, 0, 0},
     SIM_END_PEER_LEFT, "aborted"},
    {"unserved 404", {SIM_STEP_FAIL, 404, 0, 0, 0, 0, 0, 0}, SIM_END_CLEAN, "error_status"},
    {"garbage 200", {SIM_STEP_GARBAGE, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "unparsable"},
    {"garbage 502", {SIM_STEP_GARBAGE, 502, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "error_status"},
    {"bare delay: {}", {SIM_STEP_DELAY, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "unparsable"},
    {"truncate short-body", {CHAT, 200, 0, 1, 0, 0, 0, 0}, SIM_END_OPEN, "unparsable"},
    {"truncate past the end", {CHAT, 200, 0, 0, 0, 0, 0, 0}, SIM_END_OPEN, "complete"},
    {"truncate short-body of a fail", {SIM_STEP_FAIL, 500, 0, 1, 0, 0, 0, 0}, SIM_END_OPEN,
     "error_status"},
    {"truncate early-close", {CHAT, 200, 0, 1, 0, 0, 0, 0}, SIM_END_CUT, "cut"},
    {"truncate early-close of a fail", {SIM_STEP_FAIL, 500, 0, 1, 0, 0, 0, 0}, SIM_END_CUT, "cut"},
    /* no status line */
    {"drop", {SIM_STEP_DROP, 0, 0, 0, 0, 0, 0, 0}, SIM_END_CUT, "no_response"},
    {"reset", {SIM_STEP_RESET, 0, 0, 0, 0, 0, 0, 0}, SIM_END_CUT, "no_response"},
    {"hang, client left", {SIM_STEP_HANG, 0, 0, 0, 0, 0, 0, 0}, SIM_END_PEER_LEFT, "no_response"},
    {"hang, shutdown", {SIM_STEP_HANG, 0, 0, 0, 0, 0, 0, 0}, SIM_END_SHUTDOWN, "no_response"},
    {"delay, client left", {SIM_STEP_DELAY, 0, 0, 0, 0, 0, 0, 0}, SIM_END_PEER_LEFT,
     "no_response"},
    {"drop_after at an API that never streams", {STREAM, 0, 0, 0, 0, 0, 0, 0}, SIM_END_CUT,
     "no_response"},
    /* streams */
    {"stream whole", {STREAM, 200, 1, 0, 0, 1, 0, 0}, SIM_END_OPEN, "complete"},
    {"chat asked to stream", {CHAT, 200, 1, 0, 0, 1, 0, 0}, SIM_END_OPEN, "complete"},
    {"Responses stream: response.incomplete", {STREAM, 200, 1, 0, 0, 1, 0, INC}, SIM_END_OPEN,
     "incomplete"},
    {"stream no_end / no_terminator", {STREAM, 200, 1, 0, 0, 0, 0, 0}, SIM_END_OPEN, "no_end"},
    {"Responses no_end: incomplete never said", {STREAM, 200, 1, 0, 0, 0, 0, INC}, SIM_END_OPEN,
     "no_end"},
    {"stream drop_after", {STREAM, 200, 1, 0, 0, 0, 0, 0}, SIM_END_CUT, "cut"},
    {"stream error_after", {STREAM, 200, 1, 0, 1, 0, 0, 0}, SIM_END_OPEN, "error_event"},
    {"stream error_after, then the client left", {STREAM, 200, 1, 0, 1, 0, 0, 0},
     SIM_END_PEER_LEFT, "error_event"},
    {"stream error_after, then shutdown", {STREAM, 200, 1, 0, 1, 0, 0, 0}, SIM_END_SHUTDOWN,
     "error_event"},
    {"stall forever, client gave up", {STREAM, 200, 1, 0, 0, 0, 1, 0}, SIM_END_PEER_LEFT,
     "stalled"},
    {"stall forever, server stopped", {STREAM, 200, 1, 0, 0, 0, 1, 0}, SIM_END_SHUTDOWN,
     "stalled"},
    {"stall resumed to its end", {STREAM, 200, 1, 0, 0, 1, 0, 0}, SIM_END_OPEN, "complete"},
    {"slow stream, client left between chunks", {STREAM, 200, 1, 0, 0, 0, 0, 0},
     SIM_END_PEER_LEFT, "aborted"},
    {"slow stream, server stopped between chunks", {STREAM, 200, 1, 0, 0, 0, 0, 0},
     SIM_END_SHUTDOWN, "cut"},
};

static void test_cases(void) {
  for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
    const char *got = sim__end_state_name(sim__end_state(&CASES[i].sent, CASES[i].how));
    if (strcmp(got, CASES[i].state) != 0)
      fprintf(stderr, "\n  %s: got %s, want %s\n", CASES[i].name, got, CASES[i].state);
    CU_ASSERT_STRING_EQUAL(got, CASES[i].state);
  }
}

/* The names are a contract with reports/: pinned, in order, and nothing
   out of range passes for one of them. */
static void test_names(void) {
  static const char *const want[SIM_STATE_COUNT] = {
      "complete", "error_status", "error_event", "incomplete",  "no_end",
      "cut",      "stalled",      "unparsable",  "no_response", "aborted"};
  for (int i = 0; i < SIM_STATE_COUNT; i++)
    CU_ASSERT_STRING_EQUAL(sim__end_state_name((sim_end_state)i), want[i]);
  CU_ASSERT_STRING_EQUAL(sim__end_state_name((sim_end_state)SIM_STATE_COUNT), "unknown");
  CU_ASSERT_STRING_EQUAL(sim__end_state_name((sim_end_state)-1), "unknown");
}

/* Each dialect's word on its answer, body and stream alike: only the
   Responses API calls a finished answer incomplete. */
static void test_dialect_word(void) {
  static const struct {
    sim_dialect d;
    int finish;
    sim_end_state want;
  } rows[] = {
      {SIM_DIALECT_OPENAI, SIM_FINISH_STOP, SIM_STATE_COMPLETE},
      {SIM_DIALECT_OPENAI, SIM_FINISH_LENGTH, SIM_STATE_COMPLETE},
      {SIM_DIALECT_ANTHROPIC, SIM_FINISH_LENGTH, SIM_STATE_COMPLETE},
      {SIM_DIALECT_GEMINI, SIM_FINISH_FILTER, SIM_STATE_COMPLETE},
      {SIM_DIALECT_COMPLETIONS, SIM_FINISH_LENGTH, SIM_STATE_COMPLETE},
      {SIM_DIALECT_RESPONSES, SIM_FINISH_STOP, SIM_STATE_COMPLETE},
      {SIM_DIALECT_RESPONSES, SIM_FINISH_LENGTH, SIM_STATE_INCOMPLETE},
      {SIM_DIALECT_RESPONSES, SIM_FINISH_FILTER, SIM_STATE_INCOMPLETE},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sim_step *s = sim__step_new(SIM_STEP_STREAM);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->finish = rows[i].finish;
    CU_ASSERT_EQUAL(sim__answer_done(rows[i].d, s), rows[i].want);
    char *texts[] = {"a", " b"};
    sim_sse sse;
    CU_ASSERT_EQUAL(sim__sse_build(rows[i].d, s, "id1", "m1", 3, texts, 2, &sse), SIM_OK);
    if (sse.done != rows[i].want)
      fprintf(stderr, "\n  %s finish %d: stream says %d\n", sim__dialect_name(rows[i].d),
              rows[i].finish, (int)sse.done);
    CU_ASSERT_EQUAL(sse.done, rows[i].want);
    sim__sse_clear(&sse);
    sim__step_free(s);
  }
  CU_ASSERT_EQUAL(sim__answer_done(SIM_DIALECT_RESPONSES, NULL), SIM_STATE_COMPLETE);
  CU_ASSERT_EQUAL(sim__answer_done(SIM_DIALECT_EMBEDDINGS, NULL), SIM_STATE_COMPLETE);
}

int suite_end_state(void) {
  CU_pSuite s = CU_add_suite("end_state", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "what was sent and how it ended -> state", test_cases);
  CU_add_test(s, "state names, pinned", test_names);
  CU_add_test(s, "each dialect's word on its answer", test_dialect_word);
  return CU_get_error();
}
