/*
 * verdict_answer.c - `answer`, judged for every client in every scenario
 * (no expect key asks for it): the answer a client accepted must be one
 * fusebox served.
 *
 *   1. exit 0 (an external command) or a built-in call's `ok` needs at
 *      least one attempt that completed (attempt_state.c);
 *   2. the answer text (stdout, or the built-in account's final text) must
 *      be the text of ONE complete attempt (answer_match.c); printing
 *      nothing is allowed, and the rule applies only when some attempt
 *      carried answer text;
 *   3. n/a when the situation never arose: no request, no client account,
 *      a scenario that expects the call to fail, no answer accepted.
 * A degraded built-in call (a fallback answer) is held to neither rule.
 */
#include <stdio.h>
#include <string.h>

#include "reports/reports_int.h"

#define NAME "answer"
#define LIST_MAX 8 /* attempts named in a list before "..." */

/* 1 when expect.outcome is given and does not accept "ok". */
static int expects_failure(const cJSON *expect, char *want, size_t n) {
  const cJSON *o = expect ? cJSON_GetObjectItemCaseSensitive(expect, "outcome") : NULL;
  if (o == NULL) return 0;
  if (cJSON_IsString(o)) {
    snprintf(want, n, "%s", o->valuestring);
    return strcmp(o->valuestring, "ok") != 0;
  }
  size_t off = 0;
  const cJSON *it;
  want[0] = '\0';
  cJSON_ArrayForEach(it, o) {
    if (!cJSON_IsString(it)) continue;
    if (strcmp(it->valuestring, "ok") == 0) return 0;
    if (off < n) off += (size_t)snprintf(want + off, n - off, "%s%s", off ? " or " : "",
                                         it->valuestring);
  }
  return 1;
}

/* 1 when the call accepted an answer: exit 0, or a built-in `ok`. */
static int accepted(const rpt__client_ev *ce) {
  if (ce->external)
    return !ce->timed_out &&
           (ce->exit_code >= 0 ? ce->exit_code == 0 : strcmp(ce->outcome, "ok") == 0);
  return strcmp(ce->outcome, "ok") == 0;
}

/* Why no call accepted an answer (the n/a evidence). */
static int none_accepted(rpt__ctx *c) {
  const rpt__client_ev *ce = &c->tr->cli[0];
  if (ce->external && ce->timed_out)
    return rpt__verdict_add(c, NAME, RPT_NA, "the command was %s: it accepted no answer "
                            "(`outcome` judges that)",
                            ce->reason && ce->reason[0] ? ce->reason : "killed by --timeout");
  if (ce->external)
    return rpt__verdict_add(c, NAME, RPT_NA, "the command exited %d: it accepted no answer "
                            "(`outcome` judges that)", ce->exit_code);
  return rpt__verdict_add(c, NAME, RPT_NA, "no call ended ok (call %d ended %s): no answer "
                          "accepted (`outcome` judges that)", ce->call, ce->outcome);
}

/* "503, drop, 503": how each attempt ended, in arrival order. */
static void list_attempts(const rpt_trace *tr, char *out, size_t n) {
  size_t off = 0;
  out[0] = '\0';
  for (int k = 0; k < tr->narr && off < n; k++) {
    char w[64];
    if (k == LIST_MAX) {
      snprintf(out + off, n - off, ", \xE2\x80\xA6");
      return;
    }
    off += (size_t)snprintf(out + off, n - off, "%s%s", k ? ", " : "",
                            rpt__state_label(&tr->arr[k], w, sizeof w));
  }
}

/* Who accepted: "exited 0", "call 2 ended ok", "3 calls ended ok". */
static const char *who(const rpt__client_ev *ce, int naccepted, char *out, size_t n) {
  if (ce->external) snprintf(out, n, "exited 0");
  else if (naccepted == 1) snprintf(out, n, "call %d ended ok", ce->call);
  else snprintf(out, n, "%d calls ended ok", naccepted);
  return out;
}

/* Rule 1: as many complete attempts as calls that accepted an answer. */
static int rule_complete(rpt__ctx *c, const rpt__client_ev *first, int naccepted, int *done) {
  const rpt_trace *tr = c->tr;
  int ncomplete = 0;
  for (int k = 0; k < tr->narr; k++)
    if (rpt__state_complete(tr->arr[k].state)) ncomplete++;
  *done = 0;
  if (ncomplete >= naccepted) return 0;
  *done = 1;
  char list[300], w[48], what[300] = "";
  list_attempts(tr, list, sizeof list);
  who(first, naccepted, w, sizeof w);
  /* Where the text it kept came from, when it kept one. */
  rpt__answer m;
  if (rpt__served_answer(tr, first->text, &m) != RPT__ANS_EMPTY) {
    what[0] = ';';
    what[1] = ' ';
    rpt__answer_describe(tr, first, &m, what + 2, sizeof what - 2);
  }
  if (ncomplete == 0)
    return rpt__verdict_add(c, NAME, RPT_FAIL, "%s but no attempt completed: %d attempt%s ended "
                            "%s%s", w, tr->narr, tr->narr == 1 ? "" : "s", list, what);
  return rpt__verdict_add(c, NAME, RPT_FAIL, "%s but only %d attempt%s completed: %d attempt%s "
                          "ended %s%s", w, ncomplete, ncomplete == 1 ? "" : "s", tr->narr,
                          tr->narr == 1 ? "" : "s", list, what);
}

/* The failure of one call's text (rule 2). */
static int text_fails(rpt__ctx *c, const rpt__client_ev *ce, const rpt__answer *m, int bad,
                      int naccepted) {
  const rpt_trace *tr = c->tr;
  char what[300], more[48] = "", s1[64];
  if (bad > 1) snprintf(more, sizeof more, " (%d of %d calls)", bad, naccepted);
  rpt__answer_describe(tr, ce, m, what, sizeof what);
  if (m->kind != RPT__ANS_NONE)
    return rpt__verdict_add(c, NAME, RPT_FAIL, "%s%s", what, more);
  const rpt__arrival *served = NULL;
  for (int k = 0; k < tr->narr && !served; k++)
    if (rpt__state_complete(tr->arr[k].state) && tr->arr[k].text && tr->arr[k].text[0])
      served = &tr->arr[k];
  if (served)
    return rpt__verdict_add(c, NAME, RPT_FAIL, "%s (attempt %d completed with \"%s\")%s", what,
                            served->attempt, rpt__snippet(served->text, s1, sizeof s1), more);
  return rpt__verdict_add(c, NAME, RPT_FAIL, "%s (no attempt that completed sent text)%s", what,
                          more);
}

/* The pass evidence. */
static int passes(rpt__ctx *c, const rpt__client_ev *ce, int naccepted, int ntexts,
                  const rpt__answer *last, int texts_judged) {
  const rpt_trace *tr = c->tr;
  const rpt__arrival *done = NULL;
  for (int k = 0; k < tr->narr; k++)
    if (rpt__state_complete(tr->arr[k].state)) done = &tr->arr[k];
  char w[48], note[96] = "";
  who(ce, naccepted, w, sizeof w);
  const rpt__arrival *m = last && last->first >= 0 ? &tr->arr[last->first] : done;
  if (m && m->state_derived && (m->stream || (m->step && strcmp(m->step, "stream") == 0)))
    snprintf(note, sizeof note, "; state derived: the trace has no end.state, so an error event "
             "would not show");
  if (!texts_judged)
    return rpt__verdict_add(c, NAME, RPT_PASS, "%s after attempt %d completed (no answer text "
                            "to compare)%s", w, done->attempt, note);
  if (ntexts == 0)
    return rpt__verdict_add(c, NAME, RPT_PASS, "%s after attempt %d completed; no text was "
                            "kept%s", w, done->attempt, note);
  if (naccepted > 1)
    return rpt__verdict_add(c, NAME, RPT_PASS, "%s, %d with text, each the text of an attempt "
                            "that completed%s", w, ntexts, note);
  return rpt__verdict_add(c, NAME, RPT_PASS, "%s with %sthe text of attempt %d, which "
                          "completed%s", w, last->in_json ? "a response body holding " : "",
                          m->attempt, note);
}

/* Adds `answer` to c->j; see the top of the file. */
int rpt__answer_verdict(rpt__ctx *c, const cJSON *expect) {
  const rpt_trace *tr = c->tr;
  char want[96];
  if (rpt__trace_narr(tr) == 0)
    return rpt__verdict_add(c, NAME, RPT_NA, "no request arrived: no answer to judge");
  if (tr->ncli == 0)
    return rpt__verdict_add(c, NAME, RPT_NA, "no client account in the trace: what the client "
                            "accepted is unknown");
  if (expects_failure(expect, want, sizeof want))
    return rpt__verdict_add(c, NAME, RPT_NA, "the scenario expects the call to end %s, not with "
                            "an answer: `outcome` judges it", want);
  const rpt__client_ev *first = NULL;
  int naccepted = 0;
  for (int i = 0; i < tr->ncli; i++)
    if (accepted(&tr->cli[i])) {
      if (!first) first = &tr->cli[i];
      naccepted++;
    }
  if (naccepted == 0) return none_accepted(c);
  int done, rc = rule_complete(c, first, naccepted, &done);
  if (done || rc) return rc;
  int judged = rpt__any_answer_text(tr), ntexts = 0, bad = 0;
  rpt__answer m = {RPT__ANS_EMPTY, -1, -1, 0}, last = m, bad_m = m;
  const rpt__client_ev *bad_ce = NULL;
  for (int i = 0; judged && i < tr->ncli; i++) {
    const rpt__client_ev *ce = &tr->cli[i];
    if (!accepted(ce)) continue;
    switch (rpt__served_answer(tr, ce->text, &m)) {
    case RPT__ANS_EMPTY:
      break;
    case RPT__ANS_SERVED:
      ntexts++;
      last = m;
      break;
    default:
      ntexts++;
      if (bad++ == 0) {
        bad_ce = ce;
        bad_m = m;
      }
    }
  }
  if (bad_ce) return text_fails(c, bad_ce, &bad_m, bad, naccepted);
  return passes(c, first, naccepted, ntexts, &last, judged);
}
