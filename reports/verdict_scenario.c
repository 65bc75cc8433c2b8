/*
 * verdict_scenario.c - the two verdicts every judgement carries, whatever
 * the expect table says: `served` (every request reached a path a provider
 * serves) and `exercised` (the client did what the scenario is about: asked
 * for a stream where it streams, called the effect endpoint where it has
 * effects, sent concurrent calls where it is a herd, enough calls to open a
 * breaker). What a scenario is about comes from `expect.exercised` when it
 * declares it, else from its client table (call, concurrency, breaker).
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

static const char *const ABOUT[] = {"stream", "effect", "concurrency", "breaker", "call", NULL};

/* What the scenario is about. */
typedef struct about {
  int stream, effect, call;
  int concurrency; /* calls at once, 0 = not a herd */
  int breaker;     /* failures that open the breaker, 0 = no breaker */
  int none_sent;   /* the scenario expects no request at all */
  int declared;    /* from expect.exercised */
} about;

static int about_index(const char *s) {
  for (int i = 0; ABOUT[i]; i++)
    if (strcmp(ABOUT[i], s) == 0) return i;
  return -1;
}

/*
 * expect.exercised = {"stream", "effect", "concurrency", "breaker", "call"}
 * (a list; "call" = an ordinary call, the default): validated here, used by
 * rpt__exercised. Adds no verdict by itself.
 */
int rpt__v_exercised(rpt__ctx *c, const char *name, const cJSON *val) {
  if (!cJSON_IsArray(val) || cJSON_GetArraySize(val) == 0)
    return rpt__bad_value(c, name, "expected a list among stream, effect, concurrency, breaker, call");
  const cJSON *it;
  cJSON_ArrayForEach(it, val) {
    if (!cJSON_IsString(it) || about_index(it->valuestring) < 0)
      return rpt__bad_value(c, name, "unknown item (stream, effect, concurrency, breaker, call)");
  }
  return 0;
}

static double num(const cJSON *o, const char *k, double def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static void derive(const rpt__ctx *c, const cJSON *expect, about *ab) {
  memset(ab, 0, sizeof *ab);
  const cJSON *cl = c->client;
  const cJSON *call = cJSON_GetObjectItemCaseSensitive(cl, "call");
  int conc = (int)num(cl, "concurrency", 1);
  const cJSON *br = cJSON_GetObjectItemCaseSensitive(cl, "breaker");
  int threshold = cJSON_IsObject(br) ? (int)num(br, "threshold", 5) : 0;
  const cJSON *decl = cJSON_GetObjectItemCaseSensitive(expect, "exercised");
  if (cJSON_IsArray(decl)) {
    ab->declared = 1;
    const cJSON *it;
    cJSON_ArrayForEach(it, decl) {
      const char *s = cJSON_IsString(it) ? it->valuestring : "";
      if (strcmp(s, "stream") == 0) ab->stream = 1;
      else if (strcmp(s, "effect") == 0) ab->effect = 1;
      else if (strcmp(s, "concurrency") == 0) ab->concurrency = conc > 1 ? conc : 2;
      else if (strcmp(s, "breaker") == 0) ab->breaker = threshold > 0 ? threshold : 5;
      else ab->call = 1;
    }
  } else {
    ab->stream = cJSON_IsString(call) && strcmp(call->valuestring, "stream") == 0;
    ab->effect = cJSON_IsString(call) && strcmp(call->valuestring, "effect") == 0;
    ab->concurrency = conc > 1 ? conc : 0;
    ab->breaker = threshold;
    ab->call = !ab->stream && !ab->effect;
  }
  const cJSON *att = cJSON_GetObjectItemCaseSensitive(expect, "attempts");
  const cJSON *mx = cJSON_GetObjectItemCaseSensitive(expect, "max_requests");
  ab->none_sent = (cJSON_IsNumber(att) && att->valuedouble == 0) ||
                  (cJSON_IsNumber(mx) && mx->valuedouble == 0);
}

/* A logical request's span: its first arrival to its last end. */
static void span(const rpt_trace *tr, const rpt__group *g, double *from, double *to) {
  *from = *to = 0;
  for (int k = 0; k < g->n; k++) {
    const rpt__arrival *a = &tr->arr[g->idx[k]];
    double end = a->has_end ? a->t_end : tr->t_last;
    if (k == 0 || a->t_arrive < *from) *from = a->t_arrive;
    if (end > *to) *to = end;
  }
}

/*
 * The most calls in flight at once: logical requests whose spans (first
 * arrival to last end) overlap. Calls, not attempts: a provider that refuses
 * at once leaves no overlap between attempts, yet a client that sends its
 * calls together starts the next before the first has finished retrying.
 */
static int peak_in_flight(const rpt_trace *tr) {
  int peak = 0;
  for (int i = 0; i < tr->ngroups; i++) {
    double f, t;
    span(tr, &tr->groups[i], &f, &t);
    int n = 0;
    for (int k = 0; k < tr->ngroups; k++) {
      double f2, t2;
      span(tr, &tr->groups[k], &f2, &t2);
      if (f2 <= f && (t2 > f || f2 == f)) n++;
    }
    if (n > peak) peak = n;
  }
  return peak;
}

/*
 * served: every request reached a path some provider (or the effect
 * endpoint) serves. n/a when no request arrived.
 */
static int served(rpt__ctx *c) {
  const rpt_trace *tr = c->tr;
  int narr = (int)rpt__trace_narr(tr);
  if (narr == 0) return rpt__verdict_add(c, "served", RPT_NA, "no request arrived");
  int bad = 0, status = 0;
  const char *method = NULL, *path = NULL;
  if (rpt__trace_folded(tr) && tr->sum->nunserved) {
    bad = (int)tr->sum->nunserved;
    method = tr->sum->first_unserved_method;
    path = tr->sum->first_unserved_path;
    status = tr->sum->first_unserved_status;
  }
  for (int i = 0; !rpt__trace_folded(tr) && i < tr->narr; i++)
    if (tr->arr[i].unserved) {
      if (!method) {
        method = tr->arr[i].method;
        path = tr->arr[i].path;
        status = tr->arr[i].status;
      }
      bad++;
    }
  if (method)
    return rpt__verdict_add(c, "served", RPT_FAIL,
                            "%d of %d request%s went to a path no provider serves, first %s %.160s "
                            "(answered %d): point the client's base URL at the fake provider",
                            bad, narr, narr == 1 ? "" : "s", method, path ? path : "?", status);
  return rpt__verdict_add(c, "served", RPT_PASS, "%d request%s, all to served paths", narr,
                          narr == 1 ? "" : "s");
}

static int exercised(rpt__ctx *c, const cJSON *expect) {
  const rpt_trace *tr = c->tr;
  about ab;
  derive(c, expect, &ab);
  int nserved = 0, nstream = 0, neffect = 0, narr = (int)rpt__trace_narr(tr);
  if (rpt__trace_folded(tr)) {
    nserved = (int)tr->sum->nserved;
    nstream = (int)tr->sum->nserved_stream;
    neffect = (int)tr->sum->nserved_effect;
  }
  for (int i = 0; !rpt__trace_folded(tr) && i < tr->narr; i++) {
    const rpt__arrival *a = &tr->arr[i];
    if (a->unserved) continue;
    nserved++;
    if (a->stream) nstream++;
    if (a->dialect && strcmp(a->dialect, "effect") == 0) neffect++;
  }
  const char *n = "exercised";
  if (ab.none_sent && !ab.declared) {
    if (tr->ncli > 0 && nserved == 0)
      return rpt__verdict_add(c, n, RPT_PASS, "the client made %d call%s and sent nothing, as the "
                              "scenario expects", tr->ncli, tr->ncli == 1 ? "" : "s");
    if (nserved == 0)
      return rpt__verdict_add(c, n, RPT_NA, "the scenario expects no request and the trace has "
                              "no client account");
    return rpt__verdict_add(c, n, RPT_PASS, "the client sent %d request%s", nserved,
                            nserved == 1 ? "" : "s");
  }
  if (nserved == 0)
    return rpt__verdict_add(c, n, RPT_FAIL, "no request reached the scenario (%d arrival%s, none "
                            "at a served path)", narr, narr == 1 ? "" : "s");
  char what[160] = "";
  size_t off = 0;
#define NOTE(...)                                                          \
  do {                                                                     \
    if (off < sizeof what)                                                 \
      off += (size_t)snprintf(what + off, sizeof what - off, __VA_ARGS__); \
  } while (0)
  if (ab.stream) {
    if (nstream == 0)
      return rpt__verdict_add(c, n, RPT_FAIL, "the scenario streams, but none of %d request%s "
                              "asked for a stream", nserved, nserved == 1 ? "" : "s");
    NOTE("%d of %d requests streamed", nstream, nserved);
  }
  if (ab.effect) {
    if (neffect == 0)
      return rpt__verdict_add(c, n, RPT_FAIL, "the scenario is about a side effect, but none of "
                              "%d request%s called the effect endpoint", nserved,
                              nserved == 1 ? "" : "s");
    NOTE("%s%d effect call%s", off ? ", " : "", neffect, neffect == 1 ? "" : "s");
  }
  if (ab.concurrency) {
    int peak = peak_in_flight(tr);
    if (peak < 2)
      return rpt__verdict_add(c, n, RPT_FAIL, "the scenario sends %d calls at once, but never "
                              "more than %d call was in flight", ab.concurrency, peak);
    NOTE("%s%d calls in flight at once", off ? ", " : "", peak);
  }
  if (ab.breaker) {
    if (nserved < ab.breaker)
      return rpt__verdict_add(c, n, RPT_FAIL, "the breaker opens after %d failures, but only %d "
                              "request%s arrived", ab.breaker, nserved, nserved == 1 ? "" : "s");
    NOTE("%s%d requests against a breaker of %d", off ? ", " : "", nserved, ab.breaker);
  }
  if (off == 0) NOTE("%d request%s reached the scenario", nserved, nserved == 1 ? "" : "s");
#undef NOTE
  return rpt__verdict_add(c, n, RPT_PASS, "%s", what);
}

/* Adds `served` and `exercised` to c->j. */
int rpt__scenario_verdicts(rpt__ctx *c, const cJSON *expect) {
  int rc = served(c);
  if (rc == 0) rc = exercised(c, expect);
  return rc;
}

/* 1 for the verdicts that say whether a scenario ran, not how well. */
int rpt__verdict_is_meta(const char *name) {
  return strcmp(name, "served") == 0 || strcmp(name, "exercised") == 0 ||
         strcmp(name, "command_finished") == 0 || strcmp(name, "scenario_ran") == 0 ||
         strcmp(name, "point") == 0;
}
