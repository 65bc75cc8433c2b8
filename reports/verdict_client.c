/*
 * verdict_client.c - verdicts on what the client ended with: `outcome`,
 * `side_effects`, `no_stream_splice` (the stream-only view of `answer`'s
 * text rule, verdict_answer.c) and `cost`.
 *
 * `outcome` and `no_stream_splice` need the client's own account (`client`
 * events: the built-in client's, or `fusebox exec`'s for a command):
 * without one they are n/a, and say so, rather than passed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

static const char *const outcomes[] = {"ok", "degraded", "blocked", "pending", "error", NULL};

static int known_outcome(const char *s) {
  for (int i = 0; outcomes[i]; i++)
    if (strcmp(outcomes[i], s) == 0) return 1;
  return 0;
}

/* ------------------------------------------------------------ outcome */

/* 1 when the list or string val names outcome w. */
static int wants(const cJSON *val, const char *w) {
  if (cJSON_IsString(val)) return strcmp(val->valuestring, w) == 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, val) if (cJSON_IsString(it) && strcmp(it->valuestring, w) == 0) return 1;
  return 0;
}

/* Requests that were not effect lookups: the attempts the client made. */
static int post_attempts(const rpt_trace *tr) {
  int n = 0;
  for (int i = 0; i < tr->narr; i++)
    if (!tr->arr[i].method || strcmp(tr->arr[i].method, "GET") != 0) n++;
  return n;
}

/*
 * An external command's outcome is its exit status: 0 is "ok", non-zero is
 * "error"; "blocked" and "degraded" (the call did not get its answer) want
 * a non-zero exit too, since from outside a canned answer and a real one
 * look alike; "pending" (the result is unknown) accepts both. A kill by --timeout is no
 * outcome at all. An expected error must come within the client table's
 * deadline when it has one, counted from the first request's arrival (the
 * command's start-up is shown, not counted).
 */
static int external_outcome(rpt__ctx *c, const char *name, const cJSON *val, const char *want) {
  const rpt_trace *tr = c->tr;
  const rpt__client_ev *ce = &tr->cli[0];
  int att = post_attempts(tr);
  int ok_wanted = wants(val, "ok");
  int err_wanted = wants(val, "error") || wants(val, "blocked") || wants(val, "degraded");
  int any = wants(val, "pending");
  char tb[32], line[200] = "", up[96] = "", note[80];
  if (ce->error_line && ce->error_line[0]) snprintf(line, sizeof line, ": %.180s", ce->error_line);
  rpt__fmt_ms(ce->total_ms >= 0 ? ce->total_ms : tr->t_last, tb, sizeof tb);
  /* The start-up (process start to first request) is shown, never counted. */
  double startup = -1, counted = -1;
  int timed = rpt__client_startup(tr, ce, &startup, &counted);
  if (timed) snprintf(up, sizeof up, "; %s", rpt__startup_note(tr, ce, note, sizeof note));
  if (ce->timed_out && timed && startup < 0)
    return rpt__verdict_add(c, name, RPT_FAIL,
                            "the command sent no request before --timeout killed it after %s "
                            "(its start-up never ended); expected %s",
                            tb, want);
  if (ce->timed_out && ce->external && ce->reason && ce->reason[0])
    return rpt__verdict_add(c, name, RPT_FAIL, "the command was %s (after %s and %d attempt%s); "
                            "expected %s%s",
                            ce->reason, tb, att, att == 1 ? "" : "s", want, up);
  if (ce->timed_out)
    return rpt__verdict_add(c, name, RPT_FAIL,
                            "the command was killed by --timeout after %s and %d attempt%s; "
                            "expected %s%s",
                            tb, att, att == 1 ? "" : "s", want, up);
  int code = ce->exit_code >= 0 ? ce->exit_code : (strcmp(ce->outcome, "ok") == 0 ? 0 : 1);
  int ok = code == 0 ? (ok_wanted || any) : (err_wanted || any);
  if (!ok)
    return rpt__verdict_add(c, name, RPT_FAIL, "the command exited %d after %s and %d attempt%s; "
                            "expected %s (exit %s)%s%s",
                            code, tb, att, att == 1 ? "" : "s", want,
                            ok_wanted ? "0" : "non-zero", line, up);
  /* An expected error within the deadline: timed from the first request
     when the start is known (no request: nothing to time). */
  const cJSON *d = c->client ? cJSON_GetObjectItemCaseSensitive(c->client, "deadline") : NULL;
  double took = timed ? counted : ce->total_ms;
  if (code != 0 && cJSON_IsNumber(d) && d->valuedouble > 0 && took >= 0) {
    double allow = d->valuedouble * 1000.0 * c->scale * 1.05 + c->tol;
    char tc[32];
    if (took > allow)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "the command exited %d, but only after %s%s (deadline %g s)%s%s",
                              code, rpt__fmt_ms(took, tc, sizeof tc),
                              timed ? " from its first request" : "", d->valuedouble * c->scale,
                              line, up);
  }
  return rpt__verdict_add(c, name, RPT_PASS, "the command exited %d after %s and %d attempt%s "
                          "(expected %s)%s%s",
                          code, tb, att, att == 1 ? "" : "s", want, line, up);
}

/*
 * outcome = "ok" or a list of accepted outcomes: every client call ended
 * with one of them.
 */
int rpt__v_outcome(rpt__ctx *c, const char *name, const cJSON *val) {
  const cJSON *it;
  char want[96] = "";
  size_t off = 0;
  if (cJSON_IsString(val)) {
    if (!known_outcome(val->valuestring))
      return rpt__bad_value(c, name, "unknown outcome '%.40s' (ok, degraded, blocked, pending, error)",
                            val->valuestring);
    snprintf(want, sizeof want, "%s", val->valuestring);
  } else if (cJSON_IsArray(val) && cJSON_GetArraySize(val) > 0) {
    cJSON_ArrayForEach(it, val) {
      if (!cJSON_IsString(it) || !known_outcome(it->valuestring))
        return rpt__bad_value(c, name, "expected outcomes among ok, degraded, blocked, pending, error");
      if (off < sizeof want)
        off += (size_t)snprintf(want + off, sizeof want - off, "%s%s", off ? " or " : "",
                                it->valuestring);
    }
  } else {
    return rpt__bad_value(c, name, "expected an outcome or a list of outcomes");
  }
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  if (tr->ncli == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no client account in the trace: expected %s", want);
  if (tr->cli[0].external) return external_outcome(c, name, val, want);
  int bad = 0;
  const rpt__client_ev *first = NULL;
  for (int i = 0; i < tr->ncli; i++) {
    const rpt__client_ev *ce = &tr->cli[i];
    int ok = 0;
    if (cJSON_IsString(val)) ok = strcmp(val->valuestring, ce->outcome) == 0;
    else cJSON_ArrayForEach(it, val) if (strcmp(it->valuestring, ce->outcome) == 0) ok = 1;
    if (!ok) {
      if (!first) first = ce;
      bad++;
    }
  }
  if (first) {
    char more[48] = "";
    if (bad > 1) snprintf(more, sizeof more, " (%d of %d calls)", bad, tr->ncli);
    return rpt__verdict_add(c, name, RPT_FAIL, "call %d ended %s%s%s%s, expected %s%s",
                            first->call, first->outcome, first->reason ? " (" : "",
                            first->reason ? first->reason : "", first->reason ? ")" : "", want,
                            more);
  }
  if (tr->ncli == 1)
    return rpt__verdict_add(c, name, RPT_PASS, "the call ended %s", tr->cli[0].outcome);
  return rpt__verdict_add(c, name, RPT_PASS, "all %d calls ended %s", tr->ncli, want);
}

/* ------------------------------------------------------- side_effects */

static int same(const char *a, const char *b) {
  if (a == NULL || b == NULL) return a == b;
  return strcmp(a, b) == 0;
}

/*
 * side_effects = true or {at_most_once=, exactly_once_if_ok=}:
 * at most once: no effect key is applied twice (two `applied` events for the
 * same name and key, or a count over 1), and no keyless effect is applied
 * twice with the same payload fingerprint, and no payload is applied more
 * times than there were calls (a client that makes a new key for every
 * attempt re-executes under fresh keys: the payload gives it away);
 * exactly once if ok: at least as many distinct effects applied as calls
 * that ended ok (a call that said ok while nothing was applied fails).
 */
int rpt__v_side_effects(rpt__ctx *c, const char *name, const cJSON *val) {
  int at_most = 1, exactly = 1, rc;
  if (cJSON_IsObject(val)) {
    static const char *const keys[] = {"at_most_once", "exactly_once_if_ok", NULL};
    if ((rc = rpt__check_keys(c, name, val, keys))) return rc;
    const cJSON *v;
    at_most = exactly = 0;
    if ((v = cJSON_GetObjectItemCaseSensitive(val, "at_most_once")) &&
        (rc = rpt__want_bool(c, name, v, &at_most)))
      return rc;
    if ((v = cJSON_GetObjectItemCaseSensitive(val, "exactly_once_if_ok")) &&
        (rc = rpt__want_bool(c, name, v, &exactly)))
      return rc;
    if (!at_most && !exactly) return 0;
  } else {
    int want;
    if ((rc = rpt__want_bool(c, name, val, &want))) return rc;
    if (!want) return 0;
  }
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  int distinct = 0, applied = 0, effect_calls = 0;
  for (int i = 0; i < tr->narr; i++)
    if (tr->arr[i].dialect && strcmp(tr->arr[i].dialect, "effect") == 0) effect_calls++;
  if (tr->neff == 0 && effect_calls == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no call reached the effect endpoint: no effect to judge");
  char key[64], tbuf[32], tbuf2[32];
  for (int i = 0; i < tr->neff; i++) {
    const rpt__effect *e = &tr->eff[i];
    if (strcmp(e->action, "applied") != 0) continue;
    applied++;
    /* The first earlier application of the same operation, if any. */
    const rpt__effect *dup = NULL;
    for (int k = 0; k < i && !dup; k++) {
      const rpt__effect *p = &tr->eff[k];
      if (strcmp(p->action, "applied") != 0 || !same(p->name, e->name)) continue;
      if (e->key ? same(p->key, e->key) : (p->key == NULL && e->fingerprint &&
                                          same(p->fingerprint, e->fingerprint)))
        dup = p;
    }
    if (!dup) distinct++;
    if (!at_most) continue;
    if (dup && e->key)
      return rpt__verdict_add(c, name, RPT_FAIL, "effect %s with key %s applied twice (at %s and %s)",
                              e->name ? e->name : "?", rpt__short_key(e->key, key, sizeof key),
                              rpt__fmt_ms(dup->t, tbuf, sizeof tbuf),
                              rpt__fmt_ms(e->t, tbuf2, sizeof tbuf2));
    if (dup)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "effect %s without a key applied twice for payload %s (at %s and %s)",
                              e->name ? e->name : "?",
                              rpt__short_key(e->fingerprint, key, sizeof key),
                              rpt__fmt_ms(dup->t, tbuf, sizeof tbuf),
                              rpt__fmt_ms(e->t, tbuf2, sizeof tbuf2));
    if (e->count > 1)
      return rpt__verdict_add(c, name, RPT_FAIL, "effect %s with key %s applied %d times",
                              e->name ? e->name : "?", rpt__short_key(e->key, key, sizeof key),
                              e->count);
    /* The same payload under other keys: more applications than calls. */
    int calls = tr->ncli > 0 ? tr->ncli : 1, same_payload = 1;
    for (int k = 0; k < i && e->fingerprint; k++) {
      const rpt__effect *p = &tr->eff[k];
      if (strcmp(p->action, "applied") == 0 && same(p->name, e->name) &&
          same(p->fingerprint, e->fingerprint))
        same_payload++;
    }
    if (e->fingerprint && same_payload > calls)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "effect %s applied %d times for payload %s under different keys "
                              "(%d call%s; last at %s)",
                              e->name ? e->name : "?", same_payload,
                              rpt__short_key(e->fingerprint, key, sizeof key), calls,
                              calls == 1 ? "" : "s", rpt__fmt_ms(e->t, tbuf, sizeof tbuf));
  }
  const char *note = "";
  if (exactly) {
    if (tr->ncli == 0) {
      note = " (exactly-once not judged: no client account)";
    } else {
      int ok = 0;
      for (int i = 0; i < tr->ncli; i++)
        if (strcmp(tr->cli[i].outcome, "ok") == 0) ok++;
      if (ok > distinct)
        return rpt__verdict_add(c, name, RPT_FAIL,
                                "%d call%s ended ok but %d effect%s applied", ok,
                                ok == 1 ? "" : "s", distinct, distinct == 1 ? " was" : "s were");
    }
  }
  return rpt__verdict_add(c, name, RPT_PASS, "%d effect%s applied, none twice%s", distinct,
                          distinct == 1 ? "" : "s", note);
}

/* --------------------------------------------------- no_stream_splice */

/*
 * no_stream_splice = true: where a stream was asked for or sent, the final
 * text of every call that was not degraded is the text of ONE attempt that
 * completed: the stream-only view of `answer`'s text rule, decided by the
 * same function (rpt__served_answer). A splice, the text of a cut or
 * unfinished stream and a text nothing sent fail, named as `answer` names
 * them.
 */
int rpt__v_no_stream_splice(rpt__ctx *c, const char *name, const cJSON *val) {
  int want, rc;
  if ((rc = rpt__want_bool(c, name, val, &want))) return rc;
  if (!want || c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  int streams = rpt__trace_folded(tr) ? (int)tr->sum->nstreams : 0;
  for (int i = 0; !rpt__trace_folded(tr) && i < tr->narr; i++)
    if (tr->arr[i].stream || (tr->arr[i].step && strcmp(tr->arr[i].step, "stream") == 0)) streams++;
  if (streams == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no stream was asked for or sent: nothing to splice");
  if (tr->ncli == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no client account in the trace: no final text to judge");
  int judged = 0;
  for (int i = 0; i < tr->ncli; i++) {
    const rpt__client_ev *ce = &tr->cli[i];
    if (ce->text == NULL || strcmp(ce->outcome, "degraded") == 0) continue;
    rpt__answer m;
    rpt__answer_kind k = rpt__served_answer(tr, ce->text, &m);
    if (k == RPT__ANS_EMPTY) continue;
    judged++;
    if (k == RPT__ANS_SERVED) continue;
    char what[300];
    return rpt__verdict_add(c, name, RPT_FAIL, "%s",
                            rpt__answer_describe(tr, ce, &m, what, sizeof what));
  }
  if (judged == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no final text to judge (no call returned one)");
  return rpt__verdict_add(c, name, RPT_PASS,
                          "%d final text%s, each the text of one completed attempt", judged,
                          judged == 1 ? "" : "s");
}

/* ---------------------------------------------------------------- cost */

/*
 * cost = {max_ratio = R, max_billed = N}: tokens billed over all attempts
 * (end.tokens_in + tokens_out) at most N, and at most R times the tokens
 * delivered: the client accounts' tokens for calls that ended ok, or without
 * an account the last completed attempt of each logical request.
 */
int rpt__v_cost(rpt__ctx *c, const char *name, const cJSON *val) {
  if (!cJSON_IsObject(val)) return rpt__bad_value(c, name, "expected {max_ratio=, max_billed=}");
  static const char *const keys[] = {"max_ratio", "max_billed", NULL};
  int rc = rpt__check_keys(c, name, val, keys);
  if (rc) return rc;
  double ratio = 0, billed_max = 0;
  int has_ratio, has_billed;
  if ((rc = rpt__get_nonneg(c, name, val, "max_ratio", &ratio, &has_ratio))) return rc;
  if ((rc = rpt__get_nonneg(c, name, val, "max_billed", &billed_max, &has_billed))) return rc;
  if (!has_ratio && !has_billed) return rpt__bad_value(c, name, "give max_ratio, max_billed or both");
  if (c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  double billed = 0, delivered = 0;
  if (tr->narr == 0)
    return rpt__verdict_add(c, name, RPT_NA, "no request arrived: nothing billed");
  for (int i = 0; i < tr->narr; i++)
    if (tr->arr[i].has_end) billed += (double)tr->arr[i].tokens_in + (double)tr->arr[i].tokens_out;
  const char *source;
  int have_account = 0;
  for (int i = 0; i < tr->ncli; i++)
    if (tr->cli[i].has_tokens) have_account = 1;
  if (have_account) {
    source = "accepted by the client";
    for (int i = 0; i < tr->ncli; i++)
      if (strcmp(tr->cli[i].outcome, "ok") == 0) delivered += (double)tr->cli[i].tokens;
  } else {
    source = "in last completed answers";
    for (int g = 0; g < tr->ngroups; g++) {
      const rpt__group *gr = &tr->groups[g];
      for (int k = gr->n - 1; k >= 0; k--) {
        const rpt__arrival *a = &tr->arr[gr->idx[k]];
        if (rpt__state_complete(a->state)) {
          delivered += (double)a->tokens_in + (double)a->tokens_out;
          break;
        }
      }
    }
  }
  if (has_billed && billed > billed_max)
    return rpt__verdict_add(c, name, RPT_FAIL, "%.0f tokens billed over %d attempt%s, max %.0f",
                            billed, tr->narr, tr->narr == 1 ? "" : "s", billed_max);
  if (has_ratio) {
    if (delivered <= 0 && billed > 0)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "%.0f tokens billed over %d attempt%s, none delivered", billed,
                              tr->narr, tr->narr == 1 ? "" : "s");
    double r = delivered > 0 ? billed / delivered : 0;
    if (r > ratio + 1e-9)
      return rpt__verdict_add(c, name, RPT_FAIL,
                              "%.0f tokens billed for %.0f %s: ratio %.2f, max %g", billed,
                              delivered, source, r, ratio);
    return rpt__verdict_add(c, name, RPT_PASS, "%.0f tokens billed for %.0f %s: ratio %.2f, max %g",
                            billed, delivered, source, r, ratio);
  }
  return rpt__verdict_add(c, name, RPT_PASS, "%.0f tokens billed over %d attempt%s, max %.0f",
                          billed, tr->narr, tr->narr == 1 ? "" : "s", billed_max);
}
