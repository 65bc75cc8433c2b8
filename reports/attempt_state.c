/*
 * attempt_state.c - how an attempt ended, as one word: the trace's
 * `end.state` (docs/trace.md), or for a trace that has none (older traces,
 * hand-written ones) the word derived from the fields it has. Every verdict
 * that asks "did this attempt deliver a whole answer?" asks here, and the
 * words for people ("503", "drop", "whose stream ended in an error event")
 * come from the same table.
 */
#include <stdio.h>
#include <string.h>

#include "reports/reports_int.h"

static int is(const char *s, const char *w) { return s != NULL && strcmp(s, w) == 0; }

/*
 * The state of an attempt from the fields an `end` without `state` has,
 * in the order the server decides it (docs/trace.md): no status line sent;
 * an in-band error (`error_event`); a connection that did not end as the
 * step made it (`how`: cut, a stall never resumed, an answer the client
 * left); then the answer sent whole, by its status, its stream markers
 * (`end_marker`, `finish`) and its body (`step`). An old trace without
 * `error_event` cannot tell a stream that ended in an in-band error from a
 * complete one (both are a 200 sent to the end): it gives `complete` there.
 * Returns a static word.
 */
const char *rpt__state_derive(const rpt__arrival *a) {
  if (!a->has_end) return RPT__STATE_OPEN;
  const char *how = a->how ? a->how : "complete";
  if (a->status == 0) return "no_response";
  if (a->error_event) return "error_event";
  if (is(how, "dropped") || is(how, "reset") || is(how, "early_close")) return "cut";
  if (is(how, "shutdown")) return a->stalled ? "stalled" : "cut";
  if (!is(how, "complete") && !is(how, "error")) return a->stalled ? "stalled" : "aborted";
  if (a->status < 200 || a->status >= 300) return "error_status";
  if (is(a->step, "stream")) return a->no_end_marker || a->no_finish ? "no_end" : "complete";
  if (is(a->step, "garbage") || is(a->step, "truncate") || is(a->step, "delay"))
    return "unparsable";
  return a->no_end_marker || a->no_finish ? "no_end" : "complete";
}

/* 1 when state is `complete`: a 2xx answer its API calls finished. */
int rpt__state_complete(const char *state) { return is(state, "complete"); }

/*
 * A few words for a list of attempts ("503", "drop", "error event"): what
 * the attempt ended with. Returns out.
 */
const char *rpt__state_label(const rpt__arrival *a, char *out, size_t n) {
  const char *s = a->state;
  if (is(s, "error_status")) {
    snprintf(out, n, "%d%s", a->status, is(a->how, "error") ? " (scenario error)" : "");
  } else if (is(s, "no_response")) {
    const char *w = is(a->how, "dropped") ? "drop" : is(a->how, "reset") ? "reset"
                    : is(a->step, "hang") ? "hang" : "no response";
    snprintf(out, n, "%s", w);
  } else if (is(s, "cut")) {
    if (is(a->step, "stream")) snprintf(out, n, "stream cut after %d chunk%s", a->chunks,
                                        a->chunks == 1 ? "" : "s");
    else snprintf(out, n, "body cut");
  } else if (is(s, "unparsable")) {
    snprintf(out, n, "%s", is(a->step, "garbage") ? "garbage" : is(a->step, "truncate")
                                                                    ? "short body"
                                                                    : "unparsable");
  } else if (is(s, "error_event")) {
    snprintf(out, n, "error event");
  } else if (is(s, "no_end")) {
    snprintf(out, n, "no end marker");
  } else if (is(s, RPT__STATE_OPEN)) {
    snprintf(out, n, "no end event");
  } else {
    snprintf(out, n, "%s", s ? s : "?"); /* complete, incomplete, stalled, aborted, new words */
  }
  return out;
}

/*
 * What was wrong with an attempt whose text a client kept, as a relative
 * clause ("whose stream ended in an error event"). Returns out.
 */
const char *rpt__state_clause(const rpt__arrival *a, char *out, size_t n) {
  const char *s = a->state;
  const char *what = is(a->step, "stream") || a->stream ? "stream" : "answer";
  if (is(s, "complete")) snprintf(out, n, "which completed");
  else if (is(s, "error_event")) snprintf(out, n, "whose %s ended in an error event", what);
  else if (is(s, "no_end")) snprintf(out, n, "whose %s ended without its end marker", what);
  else if (is(s, "cut")) snprintf(out, n, "whose %s was cut after %d chunk%s", what, a->chunks,
                                  a->chunks == 1 ? "" : "s");
  else if (is(s, "stalled")) snprintf(out, n, "whose %s stalled and never finished", what);
  else if (is(s, "incomplete")) snprintf(out, n, "which the API marked incomplete");
  else if (is(s, "unparsable")) snprintf(out, n, "whose body could not be parsed");
  else if (is(s, "aborted")) snprintf(out, n, "which was aborted before it finished");
  else if (is(s, "error_status")) snprintf(out, n, "which answered %d", a->status);
  else if (is(s, "no_response")) snprintf(out, n, "which got no response");
  else if (is(s, RPT__STATE_OPEN)) snprintf(out, n, "which had not ended when the trace stopped");
  else snprintf(out, n, "which ended %s", s ? s : "?");
  return out;
}
