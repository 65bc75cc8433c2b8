/*
 * verdict_tool.c - tool_integrity: the client's tool executor (the effect
 * endpoint named after the tool) ran only tool calls that arrived whole,
 * with valid JSON arguments, naming a tool the request offered, and ran
 * each tool call once, even when the turn that carried it was retried.
 * n/a when no answer carried a tool call.
 */
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

#define MAX_CALLS 256

typedef struct call {
  const char *id, *name, *args; /* args: "valid", "invalid" or "cut" */
  const char *fp;               /* fingerprint of the arguments received */
  int offered;
  double t;                     /* when the request it answered arrived */
} call;

static int same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static int good(const call *c) { return same(c->args, "valid") && c->offered; }

static const char *why_bad(const call *c) {
  if (same(c->args, "cut")) return "its arguments were cut";
  if (same(c->args, "invalid")) return "its arguments were not valid JSON";
  return "the request did not offer that tool";
}

/* Every tool call the answers carried (end events), into v; the parsed
   arrays stay in *hold (the caller deletes it) so v may point into them. */
static int collect(const rpt_trace *tr, cJSON *hold, call *v, int max) {
  int n = 0;
  for (int i = 0; i < tr->narr; i++) {
    const char *js = tr->arr[i].tool_calls_json;
    cJSON *a = js ? cJSON_Parse(js) : NULL;
    if (a == NULL) continue;
    cJSON_AddItemToArray(hold, a);
    const cJSON *o;
    cJSON_ArrayForEach(o, a) {
      const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id");
      const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
      const cJSON *ar = cJSON_GetObjectItemCaseSensitive(o, "args");
      if (n >= max || !cJSON_IsString(id) || !cJSON_IsString(nm)) continue;
      v[n].id = id->valuestring;
      v[n].name = nm->valuestring;
      v[n].args = cJSON_IsString(ar) ? ar->valuestring : "valid";
      v[n].offered = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "offered"));
      v[n].t = tr->arr[i].t_arrive; /* the end line may be written after the client acted */
      const cJSON *fp = cJSON_GetObjectItemCaseSensitive(o, "args_fingerprint");
      v[n].fp = cJSON_IsString(fp) ? fp->valuestring : NULL;
      n++;
    }
  }
  return n;
}

/* expect.tool_integrity = true. */
int rpt__v_tool_integrity(rpt__ctx *c, const char *name, const cJSON *val) {
  int want, rc;
  if ((rc = rpt__want_bool(c, name, val, &want))) return rc;
  if (!want || c->tr == NULL) return 0;
  const rpt_trace *tr = c->tr;
  call *v = calloc(MAX_CALLS, sizeof *v);
  cJSON *hold = cJSON_CreateArray();
  if (v == NULL || hold == NULL) {
    free(v);
    cJSON_Delete(hold);
    return RPT_ENOMEM;
  }
  int n = collect(tr, hold, v, MAX_CALLS);
  char tbuf[32], kbuf[64];
  if (n == 0) {
    rc = rpt__verdict_add(c, name, RPT_SKIP, "no answer carried a tool call");
    goto out;
  }
  int executed = 0;
  for (int i = 0; i < tr->neff; i++) {
    const rpt__effect *e = &tr->eff[i];
    if (!same(e->action, "applied")) continue;
    executed++;
    /* Keyed by the tool-call id: judge that call. */
    const call *bykey = NULL;
    int key_good = 0;
    for (int k = 0; e->key && k < n; k++)
      if (same(v[k].id, e->key) && same(v[k].name, e->name) && v[k].t <= e->t) {
        bykey = &v[k];
        key_good |= good(&v[k]);
      }
    /* The payload is exactly the arguments of a bad call (and of no good one). */
    const call *byfp = NULL;
    int fp_good = 0;
    for (int k = 0; e->fingerprint && k < n; k++)
      if (same(v[k].fp, e->fingerprint) && same(v[k].name, e->name) && v[k].t <= e->t) {
        if (good(&v[k])) fp_good = 1;
        else if (byfp == NULL) byfp = &v[k];
      }
    if (byfp && !fp_good && !key_good) {
      rc = rpt__verdict_add(c, name, RPT_FAIL, "executed %s at %s with the arguments of %s, although %s",
                            e->name ? e->name : "?", rpt__fmt_ms(e->t, tbuf, sizeof tbuf),
                            rpt__short_key(byfp->id, kbuf, sizeof kbuf), why_bad(byfp));
      goto out;
    }
    if (bykey && !key_good) {
      rc = rpt__verdict_add(c, name, RPT_FAIL, "executed %s (%s) at %s although %s",
                            e->name ? e->name : "?", rpt__short_key(bykey->id, kbuf, sizeof kbuf),
                            rpt__fmt_ms(e->t, tbuf, sizeof tbuf), why_bad(bykey));
      goto out;
    }
    /* Executions of this tool so far against its distinct good calls. */
    int runs = 0, ids = 0;
    const call *bad = NULL;
    for (int k = 0; k <= i; k++)
      if (same(tr->eff[k].action, "applied") && same(tr->eff[k].name, e->name)) runs++;
    for (int k = 0; k < n; k++) {
      /* Only calls answered before this execution can justify it. */
      if (!same(v[k].name, e->name) || v[k].t > e->t) continue;
      if (!good(&v[k])) {
        if (bad == NULL) bad = &v[k];
        continue;
      }
      int seen = 0;
      for (int m = 0; m < k; m++)
        if (same(v[m].name, v[k].name) && same(v[m].id, v[k].id) && good(&v[m]) &&
            v[m].t <= e->t)
          seen = 1;
      ids += !seen;
    }
    if (ids == 0) {
      rc = rpt__verdict_add(c, name, RPT_FAIL, "executed %s at %s although %s", e->name ? e->name : "?",
                            rpt__fmt_ms(e->t, tbuf, sizeof tbuf),
                            bad ? why_bad(bad) : "no answer called that tool");
      goto out;
    }
    if (runs > ids) {
      rc = rpt__verdict_add(c, name, RPT_FAIL,
                            "executed %s %d times at %s for %d tool call%s: a call was run again "
                            "after the turn was retried",
                            e->name ? e->name : "?", runs, rpt__fmt_ms(e->t, tbuf, sizeof tbuf),
                            ids, ids == 1 ? "" : "s");
      goto out;
    }
  }
  rc = rpt__verdict_add(c, name, RPT_PASS,
                        "%d tool call%s answered, %d execution%s, each of a whole, valid, "
                        "offered call, once",
                        n, n == 1 ? "" : "s", executed, executed == 1 ? "" : "s");
out:
  free(v);
  cJSON_Delete(hold);
  return rc;
}
