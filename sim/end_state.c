/*
 * end_state.c - the terminal state of an attempt: the one rule that turns
 * what the player sent (sim_sent, filled in play.c with each dialect's own
 * word on its answer) and how the connection ended into the `state` of the
 * trace's `end` event. An attempt is complete only when its API would call
 * it complete.
 */
#include "sim/sim_int.h"

/* As the trace spells them, in sim_end_state's order. */
static const char *const NAMES[SIM_STATE_COUNT] = {
    "complete", "error_status", "error_event", "incomplete",  "no_end",
    "cut",      "stalled",      "unparsable",  "no_response", "aborted",
};

/* The state's name; see sim_int.h. */
const char *sim__end_state_name(sim_end_state st) {
  return (unsigned)st < SIM_STATE_COUNT ? NAMES[st] : "unknown";
}

/* The state of one attempt; see sim_int.h. In order: nothing sent; an
   in-band error (it stays the answer whatever came after); a connection
   that did not end as the player made it (cut, a stall never resumed, a
   live answer the client left); then the answer sent whole, judged by its
   status, its stream markers and its body. */
sim_end_state sim__end_state(const sim_sent *s, sim_end_how how) {
  if (s->status == 0) return SIM_STATE_NO_RESPONSE;
  if (s->error_event) return SIM_STATE_ERROR_EVENT;
  switch (how) {
  case SIM_END_CUT: return SIM_STATE_CUT;
  case SIM_END_SHUTDOWN: return s->stalling ? SIM_STATE_STALLED : SIM_STATE_CUT;
  case SIM_END_PEER_LEFT: return s->stalling ? SIM_STATE_STALLED : SIM_STATE_ABORTED;
  case SIM_END_OPEN:
  case SIM_END_CLEAN: break;
  }
  if (s->status < 200 || s->status > 299) return SIM_STATE_ERROR_STATUS;
  if (s->stream) return s->end_marker ? (sim_end_state)s->done : SIM_STATE_NO_END;
  /* a body: a page, a bare {} (a delay with nothing after it) or one cut
     short is not the API's JSON, however well it was framed */
  if (s->short_body || s->kind == SIM_STEP_GARBAGE || s->kind == SIM_STEP_DELAY)
    return SIM_STATE_UNPARSABLE;
  return (sim_end_state)s->done;
}
