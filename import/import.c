/*
 * import.c - `fusebox import`: a log of attempts turned into a scenario
 * that replays it. This file holds the public entry points, format
 * detection and the assembly of the scenario (grouping attempts by
 * provider and logical request). The readers of each format are in
 * import_jsonl.c (JSON Lines, and the response bodies every format
 * shares), import_har.c and import_trace.c, with their shared helpers in
 * import_read.c and the response model in import_resp.c; one attempt is
 * written as a step by import_step.c, with the literals of import_lua.c.
 *
 * What the output promises: every string is a valid Lua literal whatever
 * the input holds; credentials never appear (the header names and the key
 * patterns imp__header_dropped / imp__scrub know); the file is at most
 * IMP_MAX_OUTPUT bytes, the size a scenario file may have.
 */
#define _GNU_SOURCE /* strcasestr, timegm */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "import/import_int.h"

static void log_clear(imp_log *lg) {
  for (size_t i = 0; i < lg->n; i++) {
    free(lg->v[i].key);
    free(lg->v[i].provider);
    free(lg->v[i].note);
    free(lg->v[i].step);
  }
  free(lg->v);
  free(lg->call_ids);
  lg->v = NULL;
  lg->n = lg->cap = 0;
}

/* ============================================================ assembly */

/* One logical request of one provider (or of the effects): its attempts
   as indices into the sorted attempt list. */
typedef struct req_group {
  int prov;       /* provider index; -1 for the effects */
  const char *key;
  size_t *idx;
  size_t n, cap;
} req_group;

/* Open addressing from "prov\x1fkey" to a request index. */
typedef struct req_map {
  char **keys;
  int *vals;
  size_t cap;
} req_map;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) {
    h ^= (unsigned char)*s;
    h *= 1099511628211ULL;
  }
  return h;
}

static int cmp_attempt(const void *a, const void *b) {
  const imp_attempt *x = a, *y = b;
  if (x->has_t && y->has_t && x->t_ms != y->t_ms) return x->t_ms < y->t_ms ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The long-bracket level that text can sit in without closing early. */
static int bracket_level(const char *text) {
  for (int lvl = 0; lvl < 16; lvl++) {
    char close[20];
    close[0] = ']';
    memset(close + 1, '=', (size_t)lvl);
    close[lvl + 1] = ']';
    close[lvl + 2] = '\0';
    if (strstr(text, close) == NULL) return lvl; /* the doc ends with '.' */
  }
  return 16;
}

static const char REPLAY_FN[] =
    "-- Each logical request (told apart by its Idempotency-Key, or by its\n"
    "-- method, path and body) is given the next recorded request's steps in\n"
    "-- order of first arrival, one step per arrival; the last step repeats,\n"
    "-- and requests beyond the recorded ones replay the last recorded one.\n"
    "-- The first logical request replays recorded request `first` (so a\n"
    "-- client making one call replays that one; `fusebox import --request N`).\n"
    "-- The counts live in `shared`: the server's event loops see the same.\n"
    "local replays = 0\n"
    "local function replay(requests)\n"
    "  replays = replays + 1\n"
    "  local list = \"replay\" .. replays\n"
    "  return function(req)\n"
    "    local i = first + shared.order(list, req.key) - 1\n"
    "    if i > #requests then i = #requests end\n"
    "    local n = shared.incr(list .. \" \" .. req.key)\n"
    "    local steps = requests[i]\n"
    "    return steps[n <= #steps and n or #steps]\n"
    "  end\n"
    "end\n\n";

/* The time of attempt a relative to t0, as "+1.234 s ", or "". */
static void put_when(imp_buf *b, const imp_attempt *a, double t0, int times) {
  if (!times) return;
  imp__buf_puts(b, " at +");
  imp__lua_number(b, (a->t_ms - t0) / 1000.0);
  imp__buf_puts(b, " s");
}

/* Writes one attempt: a comment line, then the step. */
static void put_attempt(imp_buf *b, const imp_attempt *a, int nth, const char *indent,
                        double t0, int times, const imp_log *lg) {
  if (lg->compact) {
    imp__buf_printf(b, "%s%s,\n", indent, a->step);
    return;
  }
  imp__buf_printf(b, "%s-- attempt %d", indent, nth);
  put_when(b, a, t0, times);
  if (a->line > 0)
    imp__buf_printf(b, " (%s %d)", lg->format == IMP_HAR ? "entry" : "line", a->line);
  if (a->note != NULL && a->note[0]) {
    imp__buf_puts(b, ": ");
    imp__lua_comment(b, a->note, 160);
  }
  imp__buf_printf(b, "\n%s%s,\n", indent, a->step);
}

/* Writes the requests of provider p (or the effects, p = -1). */
static void put_requests(imp_buf *b, const imp_log *lg, const req_group *reqs, size_t nreq,
                         int p, int as_list, const char *indent, double t0, int times) {
  char in2[32], in3[32];
  snprintf(in2, sizeof in2, "%s  ", indent);
  snprintf(in3, sizeof in3, "%s    ", indent);
  if (as_list) {
    for (size_t r = 0; r < nreq; r++) {
      if (reqs[r].prov != p) continue;
      for (size_t k = 0; k < reqs[r].n; k++)
        put_attempt(b, &lg->v[reqs[r].idx[k]], (int)k + 1, in2, t0, times, lg);
    }
    return;
  }
  int nth = 0;
  for (size_t r = 0; r < nreq; r++) {
    if (reqs[r].prov != p) continue;
    nth++;
    imp__buf_printf(b, "%s{ -- request %d, %zu attempt%s", in2, nth, reqs[r].n,
                    reqs[r].n == 1 ? "" : "s");
    if (reqs[r].key != NULL) {
      imp__buf_puts(b, ", key ");
      imp__lua_comment(b, reqs[r].key, 80);
    }
    imp__buf_puts(b, "\n");
    for (size_t k = 0; k < reqs[r].n; k++)
      put_attempt(b, &lg->v[reqs[r].idx[k]], (int)k + 1, in3, t0, times, lg);
    imp__buf_printf(b, "%s},\n", in2);
  }
}

/* A status that the same request can never turn into a success. */
static int permanent_status(int s) {
  return s == 400 || s == 401 || s == 402 || s == 403 || s == 404 || s == 413 || s == 422;
}

/*
 * Writes the expect table: the best-practice verdicts that apply to what the
 * log holds. No retry after the permanent errors it shows (a quota 429
 * included), Retry-After honoured when an answer asked for a wait, no
 * duplicate side effect when it has effects, and bounded attempts (at most
 * 4 arrivals per logical request: one call and three retries). Returns how
 * many verdicts were written.
 */
static int put_expect(imp_buf *b, const imp_log *lg, size_t nreq, int have_effects) {
  int seen[600] = {0}, quota = 0, ra = 0, n = 0, tools = 0;
  for (size_t i = 0; i < lg->n; i++) {
    const imp_attempt *a = &lg->v[i];
    if (a->status > 0 && a->status < 600 && permanent_status(a->status)) seen[a->status] = 1;
    quota |= a->quota;
    ra |= a->has_ra && a->status >= 300;
    tools |= a->tools;
  }
  imp__buf_puts(b, "  -- Best practice for this incident (what any good client does);\n"
                   "  -- add attempts, outcome or a deadline for your own client's policy.\n"
                   "  expect = {\n");
  int any_perm = quota;
  for (int s = 0; s < 600; s++) any_perm |= seen[s];
  if (any_perm) {
    imp__buf_puts(b, "    no_retry_after = {");
    int first = 1;
    for (int s = 0; s < 600; s++) {
      if (!seen[s]) continue;
      imp__buf_printf(b, "%s%d", first ? " " : ", ", s);
      first = 0;
    }
    if (quota) imp__buf_printf(b, "%s\"quota\"", first ? " " : ", ");
    imp__buf_puts(b, " },\n");
    n++;
  }
  if (ra) {
    imp__buf_puts(b, "    retry_after_honoured = true,\n");
    n++;
  }
  if (tools) { /* tool calls were answered: none run cut, invalid or twice */
    imp__buf_puts(b, "    tool_integrity = true,\n");
    n++;
  }
  if (have_effects || tools) { /* a tool run is an effect: none executed twice */
    imp__buf_puts(b, "    side_effects = true,\n");
    n++;
  }
  /* each tool call answered is one more logical request: its run */
  imp__buf_printf(b, "    max_requests = %zu,\n", (nreq + (size_t)lg->ncalls) * 4);
  n++;
  imp__buf_puts(b, "  },\n");
  return n;
}

/* Today's date in UTC as YYYY-MM-DD. */
static void today(char out[16]) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(out, 16, "%Y-%m-%d", &tm);
}

/* A copy of s with control bytes as '?', for the doc and the name. */
static char *printable(const char *s, size_t max) {
  imp_buf b;
  imp__buf_init(&b, max * 4 + 8);
  imp__lua_comment(&b, s, max);
  if (b.nomem) {
    imp__buf_free(&b);
    return NULL;
  }
  return imp__buf_take(&b);
}

static int map_find(req_map *m, const char *k, int *val) {
  size_t i = (size_t)(hash_str(k) & (m->cap - 1));
  while (m->keys[i] != NULL) {
    if (strcmp(m->keys[i], k) == 0) {
      *val = m->vals[i];
      return 1;
    }
    i = (i + 1) & (m->cap - 1);
  }
  *val = (int)i; /* the free slot */
  return 0;
}

/* What assembling learns of a log: its providers and its logical requests
   (grouped attempts), and whether its attempts carry times. */
typedef struct assembly {
  imp_log *lg;
  const char *provs[IMP_MAX_PROVIDERS];
  int nprov, have_effects;
  int times; /* every attempt has a time */
  double t0; /* the first attempt's, when times */
  req_group *reqs;
  size_t nreq;
  req_map map;
  int count_p[IMP_MAX_PROVIDERS + 1]; /* logical requests per provider + 1 (0: effects) */
} assembly;

static void assembly_free(assembly *A) {
  for (size_t i = 0; i < A->map.cap && A->map.keys; i++) free(A->map.keys[i]);
  free(A->map.keys);
  free(A->map.vals);
  for (size_t r = 0; r < A->nreq; r++) free(A->reqs[r].idx);
  free(A->reqs);
}

/* Sorts the attempts by time (then file order) and notes whether all have one. */
static void sort_attempts(assembly *A) {
  imp_log *lg = A->lg;
  qsort(lg->v, lg->n, sizeof *lg->v, cmp_attempt);
  A->times = 1;
  for (size_t i = 0; i < lg->n; i++) A->times &= lg->v[i].has_t;
  A->t0 = lg->n && A->times ? lg->v[0].t_ms : 0;
}

/* The providers: one that was reached at /v1 first, then by first arrival.
   Returns SIM_OK, or imp__fail's code for a bad name or too many. */
static int find_providers(assembly *A) {
  const imp_log *lg = A->lg;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < lg->n; i++) {
      const imp_attempt *a = &lg->v[i];
      if (a->effect) continue;
      if (pass == 0 && (!a->root || A->nprov > 0)) continue;
      const char *pn = a->provider ? a->provider : "primary";
      int found = 0;
      for (int k = 0; k < A->nprov && !found; k++) found = strcmp(A->provs[k], pn) == 0;
      if (found) continue;
      if (!sim_provider_name_ok(pn, strlen(pn)))
        return imp__fail(A->lg, a->line, "provider name '%.40s' must be 1 to 32 of a-z 0-9 _ - "
                                         "(and not \"v1\")", pn);
      if (A->nprov == IMP_MAX_PROVIDERS)
        return imp__fail(A->lg, a->line, "more than %d providers", IMP_MAX_PROVIDERS);
      A->provs[A->nprov++] = pn;
    }
  }
  return SIM_OK;
}

/* Attempt a's provider index, or -1 for an effect (noted in have_effects). */
static int provider_of(assembly *A, const imp_attempt *a) {
  int p = -1;
  if (!a->effect) {
    const char *pn = a->provider ? a->provider : "primary";
    for (int k = 0; k < A->nprov; k++)
      if (strcmp(A->provs[k], pn) == 0) p = k;
  } else {
    A->have_effects = 1;
  }
  return p;
}

/* Adds attempt i to the logical request of provider p and key (made when
   new, in order of first arrival). Returns 0, or -1 when out of memory. */
static int group_attempt(assembly *A, size_t i, int p, const char *key) {
  char head[16];
  snprintf(head, sizeof head, "%d%c", p, key ? '\x1f' : '\x1e');
  size_t kl = strlen(head) + (key ? strlen(key) : 0) + 1;
  char *mk = malloc(kl);
  if (mk == NULL) return -1;
  snprintf(mk, kl, "%s%s", head, key ? key : "");
  int r;
  if (!map_find(&A->map, mk, &r)) {
    A->map.keys[r] = mk;
    A->map.vals[r] = (int)A->nreq;
    A->reqs[A->nreq].prov = p;
    A->reqs[A->nreq].key = key;
    r = (int)A->nreq++;
  } else {
    free(mk);
  }
  req_group *g = &A->reqs[r];
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 4;
    size_t *idx = realloc(g->idx, cap * sizeof *idx);
    if (idx == NULL) return -1;
    g->idx = idx;
    g->cap = cap;
  }
  g->idx[g->n++] = i;
  return 0;
}

/* The logical requests, in order of first arrival per provider, and how
   many each provider has. Returns 0, or -1 when out of memory. */
static int group_requests(assembly *A) {
  const imp_log *lg = A->lg;
  A->map.cap = 64;
  while (A->map.cap < lg->n * 2) A->map.cap *= 2;
  A->map.keys = calloc(A->map.cap, sizeof *A->map.keys);
  A->map.vals = calloc(A->map.cap, sizeof *A->map.vals);
  A->reqs = calloc(lg->n ? lg->n : 1, sizeof *A->reqs);
  if (A->map.keys == NULL || A->map.vals == NULL || A->reqs == NULL) return -1;
  for (size_t i = 0; i < lg->n; i++) {
    const imp_attempt *a = &lg->v[i];
    if (group_attempt(A, i, provider_of(A, a), a->key) != 0) return -1;
  }
  for (size_t r = 0; r < A->nreq; r++) A->count_p[A->reqs[r].prov + 1]++;
  return 0;
}

/* The scenario's doc: where it came from, what it holds, how it replays.
   Caller frees; NULL when out of memory. */
static char *make_doc(const assembly *A, const char *src, const char *date) {
  const imp_log *lg = A->lg;
  size_t nreq = A->nreq;
  imp_buf d;
  imp__buf_init(&d, 4096);
  imp__buf_printf(&d, "Imported from %s on %s: %zu attempt%s of %zu logical request%s (%s)",
                  src, date, lg->n, lg->n == 1 ? "" : "s", nreq, nreq == 1 ? "" : "s",
                  imp_format_name(lg->format));
  if (A->nprov > 1) imp__buf_printf(&d, " to %d providers", A->nprov);
  if (lg->skipped > 0)
    imp__buf_printf(&d, "; %d entr%s left out (other endpoints or ledger lookups)",
                    lg->skipped, lg->skipped == 1 ? "y" : "ies");
  imp__buf_puts(&d, ".\nEach logical request replays its recorded steps in order: same "
                    "statuses,\nheaders (Retry-After included) and latencies.");
  if (lg->time_scale > 0 && lg->time_scale != 1)
    imp__buf_printf(&d, "\nThe trace ran at time scale %g; the times here are as observed.",
                    lg->time_scale);
  if (d.nomem) {
    imp__buf_free(&d);
    return NULL;
  }
  return imp__buf_take(&d);
}

/* The scenario's name: --name, else "Imported from SRC". Caller frees; NULL
   when out of memory. */
static char *make_name(const imp_opts *opts, const char *src) {
  if (opts->name) return printable(opts->name, 200);
  size_t nl = strlen(src) + 32;
  char *name = malloc(nl);
  if (name) snprintf(name, nl, "Imported from %s", src);
  return name;
}

/* Which recorded request a first call replays (--request, checked against
   the log), and whether the replay function is needed. Returns SIM_OK or
   imp__fail's code. */
static int replay_plan(const assembly *A, const imp_opts *opts, int *first, int *need_fn) {
  int multi = A->nprov > 1 || A->have_effects;
  *need_fn = multi;
  for (int k = 0; k <= A->nprov; k++)
    if (A->count_p[k] > 1) *need_fn = 1;
  *first = opts->request > 0 ? opts->request : 1;
  int most = 0; /* the most logical requests of one provider (or the effects) */
  for (int k = 0; k <= A->nprov; k++)
    if (A->count_p[k] > most) most = A->count_p[k];
  if (*first > most)
    return imp__fail(A->lg, 0, "--request %d: the log holds %d logical request%s per provider "
                               "at most", *first, most, most == 1 ? "" : "s");
  if (*first > 1) *need_fn = 1;
  return SIM_OK;
}

/* The file's head comment (and the replay function when needed). */
static void put_head(imp_buf *b, const imp_log *lg, const char *src, const char *date,
                     int first, int need_fn) {
  imp__buf_printf(b, "-- Written by `fusebox import` from %s (%s) on %s.\n", src,
                  imp_format_name(lg->format), date);
  imp__buf_puts(b, "-- One step per recorded attempt; `delay` wrappers are the observed "
                   "latencies.\n-- Credentials were stripped. Edit freely.\n");
  if (lg->compact)
    imp__buf_puts(b, "-- (Comments per attempt were left out to keep the file under the "
                     "scenario size limit.)\n");
  imp__buf_puts(b, "\n");
  if (need_fn) {
    imp__buf_printf(b, "local first = %d -- the recorded request a first call replays\n", first);
    imp__buf_puts(b, REPLAY_FN);
  }
}

/* The providers (one, or a chain) and the effects, each replaying its
   recorded requests. */
static void put_providers(imp_buf *b, const assembly *A, int first) {
  const imp_log *lg = A->lg;
  int multi = A->nprov > 1 || A->have_effects;
  if (A->nprov == 1 && !multi) {
    if (A->count_p[1] > 1 || first > 1) {
      imp__buf_puts(b, "  provider = replay {\n");
      put_requests(b, lg, A->reqs, A->nreq, 0, 0, "  ", A->t0, A->times);
    } else {
      imp__buf_puts(b, "  provider = {\n");
      put_requests(b, lg, A->reqs, A->nreq, 0, 1, "  ", A->t0, A->times);
    }
    imp__buf_puts(b, "  },\n");
  } else if (A->nprov >= 1) {
    imp__buf_puts(b, "  providers = {\n");
    for (int k = 0; k < A->nprov; k++) {
      imp__buf_printf(b, "    { name = \"%s\", fn = replay {\n", A->provs[k]);
      put_requests(b, lg, A->reqs, A->nreq, k, 0, "      ", A->t0, A->times);
      imp__buf_puts(b, "    } },\n");
    }
    imp__buf_puts(b, "  },\n");
  }
  if (A->have_effects) {
    imp__buf_puts(b, "  effects = replay {\n");
    put_requests(b, lg, A->reqs, A->nreq, -1, 0, "  ", A->t0, A->times);
    imp__buf_puts(b, "  },\n");
    if (lg->idem_ignored) imp__buf_puts(b, "  idempotency = \"ignored\",\n");
    if (lg->ledger_down) imp__buf_puts(b, "  ledger = \"down\",\n");
  }
}

/* The whole scenario into b; returns how many verdicts its expect table has. */
static int put_scenario(imp_buf *b, const assembly *A, const char *name, const char *doc,
                        const char *src, const char *date, int first, int need_fn) {
  put_head(b, A->lg, src, date, first, need_fn);
  imp__buf_puts(b, "return scenario {\n  name = ");
  imp__lua_string(b, name, strlen(name));
  int lvl = bracket_level(doc);
  imp__buf_printf(b, ",\n  doc = [%.*s[%s]%.*s],\n", lvl, "================", doc, lvl,
                  "================");
  imp__buf_puts(b, "  tags = { \"imported\" },\n");
  put_providers(b, A, first);
  int nexp = put_expect(b, A->lg, A->nreq, A->have_effects);
  imp__buf_puts(b, "}\n");
  return nexp;
}

/* What the import made, for the caller's summary. */
static void fill_stats(imp_stats *st, const assembly *A, int nexp) {
  const imp_log *lg = A->lg;
  st->format = lg->format;
  st->attempts = (int)lg->n;
  st->requests = (int)A->nreq;
  st->providers = A->nprov;
  st->skipped = lg->skipped;
  st->expects = nexp;
  snprintf(st->unknown, sizeof st->unknown, "%s", lg->unknown);
  int drops = 1;
  for (size_t i = 0; i < lg->n; i++) drops &= lg->v[i].dropped;
  st->drops_only = lg->n > 0 && drops;
}

/* Groups the sorted attempts and writes the scenario. */
static int assemble(imp_log *lg, const imp_opts *opts, char **out, imp_stats *st) {
  int rc = SIM_ENOMEM;
  assembly A = {.lg = lg};
  imp_buf b;
  imp__buf_init(&b, IMP_MAX_OUTPUT);
  char *name = NULL, *doc = NULL, *src = NULL;
  sort_attempts(&A);
  if ((rc = find_providers(&A)) != SIM_OK) goto done;
  rc = SIM_ENOMEM;
  if (group_requests(&A) != 0) goto done;

  char date[16];
  if (opts->date) snprintf(date, sizeof date, "%s", opts->date);
  else today(date);
  if ((src = printable(lg->source, 200)) == NULL || (doc = make_doc(&A, src, date)) == NULL ||
      (name = make_name(opts, src)) == NULL)
    goto done;
  int first, need_fn;
  if ((rc = replay_plan(&A, opts, &first, &need_fn)) != SIM_OK) goto done;
  rc = SIM_ENOMEM;
  int nexp = put_scenario(&b, &A, name, doc, src, date, first, need_fn);
  if (b.over) {
    lg->too_big = 1;
    rc = imp__fail(lg, 0, "the scenario would be larger than %zu bytes (the scenario file "
                          "limit) with %zu attempts: import a shorter log",
                   (size_t)IMP_MAX_OUTPUT, lg->n);
    goto done;
  }
  if (b.nomem || (*out = imp__buf_take(&b)) == NULL) goto done;
  if (st != NULL) fill_stats(st, &A, nexp);
  rc = SIM_OK;

done:
  if (rc == SIM_ENOMEM) snprintf(lg->err, SIM_ERRLEN, "%s: out of memory", lg->source);
  assembly_free(&A);
  free(name);
  free(doc);
  free(src);
  imp__buf_free(&b);
  return rc;
}

/* ============================================================ entry */

/* Guesses the format from the first line (or the whole text for HAR). */
static imp_format detect(const char *text, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < len && isspace((unsigned char)text[i])) i++;
  if (i == len || text[i] != '{') return IMP_JSONL;
  const char *nl = memchr(text + i, '\n', len - i);
  size_t llen = nl ? (size_t)(nl - (text + i)) : len - i;
  if (llen > IMP_MAX_LINE) llen = IMP_MAX_LINE;
  cJSON *first = cJSON_ParseWithLength(text + i, llen);
  imp_format f = IMP_JSONL;
  if (cJSON_IsObject(first)) {
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(first, "ev"))) f = IMP_TRACE;
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(first, "log"))) f = IMP_HAR;
    cJSON_Delete(first);
    return f;
  }
  cJSON_Delete(first);
  /* Not one object per line: a HAR document is one object over many lines. */
  const char *p = text + i;
  size_t rest = len - i;
  for (size_t k = 1; k < rest && k < 4096; k++) {
    if (isspace((unsigned char)p[k])) continue;
    if (p[k] == '"' && rest - k >= 5 && memcmp(p + k, "\"log\"", 5) == 0) return IMP_HAR;
    break;
  }
  return IMP_JSONL;
}

/* The name of a format. */
const char *imp_format_name(imp_format f) {
  switch (f) {
  case IMP_JSONL: return "json-lines";
  case IMP_HAR: return "har";
  case IMP_TRACE: return "trace";
  default: return "auto";
  }
}

/* Imports len bytes of text; see sim.h. */
int imp_buffer(const char *text, size_t len, const imp_opts *opts, char **out_lua,
               imp_stats *stats, char err[SIM_ERRLEN]) {
  imp_opts none = {0};
  if (opts == NULL) opts = &none;
  if (err == NULL) return SIM_EINVAL;
  err[0] = '\0';
  if (out_lua == NULL || (text == NULL && len > 0)) {
    snprintf(err, SIM_ERRLEN, "bad argument");
    return SIM_EINVAL;
  }
  *out_lua = NULL;
  if (stats != NULL) memset(stats, 0, sizeof *stats);
  imp_log lg = {0};
  lg.source = opts->source ? opts->source : "input";
  lg.raw_dates = opts->raw_dates;
  lg.map = opts->map;
  lg.err = err;
  if (len > IMP_MAX_INPUT)
    return imp__fail(&lg, 0, "larger than %zu bytes", (size_t)IMP_MAX_INPUT);
  if (memchr(text ? text : "", '\0', len) != NULL) {
    const char *z = memchr(text, '\0', len);
    int line = 1;
    for (const char *p = text; p < z; p++) line += *p == '\n';
    return imp__fail(&lg, line, "a NUL byte: this is not a text log");
  }
  lg.format = opts->format != IMP_AUTO ? opts->format : detect(text ? text : "", len);
  int rc;
  switch (lg.format) {
  case IMP_HAR: rc = imp__read_har(&lg, text, len); break;
  case IMP_TRACE: rc = imp__read_trace(&lg, text, len); break;
  default:
    lg.format = IMP_JSONL;
    rc = imp__read_jsonl(&lg, text ? text : "", len);
    break;
  }
  if (rc == SIM_OK && lg.n == 0 && lg.skipped > 0)
    rc = imp__fail(&lg, 0, "no attempt to replay (%d entries left out: only "
                           "model API calls and /effects/ are kept)", lg.skipped);
  else if (rc == SIM_OK && lg.n == 0)
    rc = imp__fail(&lg, 0, "no attempts found");
  if (rc == SIM_OK) rc = assemble(&lg, opts, out_lua, stats);
  if (rc == SIM_EINVAL && lg.too_big) { /* try again without the comments */
    lg.compact = 1;
    lg.too_big = 0;
    rc = assemble(&lg, opts, out_lua, stats);
  }
  if (rc == SIM_ENOMEM && err[0] == '\0') snprintf(err, SIM_ERRLEN, "%s: out of memory", lg.source);
  log_clear(&lg);
  return rc;
}

/* Imports the file at path; see sim.h. */
int imp_file(const char *path, const imp_opts *opts, char **out_lua, imp_stats *stats,
             char err[SIM_ERRLEN]) {
  if (err == NULL) return SIM_EINVAL;
  if (path == NULL || out_lua == NULL) {
    snprintf(err, SIM_ERRLEN, "bad argument");
    return SIM_EINVAL;
  }
  *out_lua = NULL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: cannot open: %s", path, strerror(errno));
    return SIM_EIO;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  int rc = SIM_OK;
  while (buf != NULL) {
    if (n == cap) {
      if (cap > IMP_MAX_INPUT) break;
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0) break;
  }
  if (buf == NULL) {
    snprintf(err, SIM_ERRLEN, "%s: out of memory", path);
    rc = SIM_ENOMEM;
  } else if (ferror(f)) {
    snprintf(err, SIM_ERRLEN, "%s: cannot read: %s", path, strerror(errno));
    rc = SIM_EIO;
  } else if (n > IMP_MAX_INPUT) {
    snprintf(err, SIM_ERRLEN, "%s: larger than %zu bytes", path, (size_t)IMP_MAX_INPUT);
    rc = SIM_EINVAL;
  }
  fclose(f);
  if (rc == SIM_OK) {
    imp_opts o = {0};
    if (opts != NULL) o = *opts;
    if (o.source == NULL) o.source = path;
    rc = imp_buffer(buf, n, &o, out_lua, stats, err);
  }
  free(buf);
  return rc;
}
