/*
 * trace_read.c - reads a JSON Lines trace (docs/trace.md) into arrivals
 * (an `arrive` joined with its `end`), logical requests, effects, client
 * accounts and scenario errors.
 *
 * A killed run leaves every completed line and maybe half of one more: a
 * last line that does not parse is dropped and the trace marked incomplete.
 * Anything else that does not parse is an error with file:line, so a file
 * that is not a trace is never judged as an empty one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

/* ------------------------------------------------------ line source */

typedef struct line_src {
  FILE *f;            /* read from this, or */
  const char *mem;    /* from this buffer */
  size_t memlen, pos;
  char *buf;          /* RPT_MAX_LINE + 1 bytes, for the file source */
  int lineno;
} line_src;

/*
 * Gets the next line without its newline. Returns 1 with *line and *len set,
 * 0 at the end, RPT_ETOOBIG for a line over RPT_MAX_LINE, RPT_ETRACE for a
 * NUL byte, RPT_EIO on a read error. *nl says whether a newline ended it.
 */
static int next_line(line_src *s, const char **line, size_t *len, int *nl) {
  *nl = 0;
  if (s->f) {
    size_t n = 0;
    int c, toobig = 0, nul = 0;
    while ((c = getc(s->f)) != EOF) {
      if (c == '\n') {
        *nl = 1;
        break;
      }
      if (c == '\0') nul = 1;
      if (n == RPT_MAX_LINE) {
        toobig = 1; /* stop here: the whole trace is rejected anyway */
        break;
      }
      s->buf[n++] = (char)c;
    }
    if (ferror(s->f)) return RPT_EIO;
    if (c == EOF && n == 0 && !toobig) return 0;
    s->lineno++;
    if (toobig) return RPT_ETOOBIG;
    if (nul) return RPT_ETRACE;
    s->buf[n] = '\0';
    *line = s->buf;
    *len = n;
    return 1;
  }
  if (s->pos >= s->memlen) return 0;
  const char *start = s->mem + s->pos;
  size_t left = s->memlen - s->pos;
  const char *end = memchr(start, '\n', left);
  size_t n = end ? (size_t)(end - start) : left;
  s->pos += n + (end ? 1 : 0);
  s->lineno++;
  *nl = end != NULL;
  if (n > RPT_MAX_LINE) return RPT_ETOOBIG;
  if (memchr(start, '\0', n)) return RPT_ETRACE;
  *line = start;
  *len = n;
  return 1;
}

static int is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
  return 1;
}

/* ------------------------------------------------------ field access */

/* Strings a trace repeats on every attempt (keys, paths, providers, steps,
   headers, answer texts) are kept once: a table of the arena's copies. */
#define INTERN_MAX_BYTES 4096 /* longer strings are copied, not looked up */
typedef struct intern_tab {
  const char **slot;  /* open addressing; NULL = empty */
  size_t cap, n;
} intern_tab;

typedef struct reader {
  rpt_trace *tr;
  const char *name;
  int lineno;
  char *err;
  int oom;
  intern_tab strs;
  int scratch; /* strings point into the event being read (an arrival only folded) */
} reader;

static size_t str_hash(const char *s, size_t cap);

/* The arena's one copy of s (NULL when out of memory, with r->oom set). */
static const char *intern(reader *r, const char *s) {
  intern_tab *t = &r->strs;
  if (strlen(s) > INTERN_MAX_BYTES) return rpt__arena_strdup(&r->tr->arena, s, &r->oom);
  if ((t->n + 1) * 2 > t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 256;
    const char **ns = calloc(nc, sizeof *ns);
    if (ns == NULL) {
      r->oom = 1;
      return NULL;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (t->slot[i] == NULL) continue;
      size_t h = str_hash(t->slot[i], nc);
      while (ns[h] != NULL) h = (h + 1) & (nc - 1);
      ns[h] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->cap = nc;
  }
  size_t h = str_hash(s, t->cap);
  while (t->slot[h] != NULL) {
    if (strcmp(t->slot[h], s) == 0) return t->slot[h];
    h = (h + 1) & (t->cap - 1);
  }
  const char *copy = rpt__arena_strdup(&r->tr->arena, s, &r->oom);
  if (copy == NULL) return NULL;
  t->slot[h] = copy;
  t->n++;
  return copy;
}

static int fail(reader *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(reader *r, int code, const char *fmt, ...) {
  char msg[RPT_ERRLEN];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* The path first (up to 180 bytes), then as much of the message as fits. */
  int off = snprintf(r->err, RPT_ERRLEN, "%.180s", r->name);
  if (r->lineno > 0)
    off += snprintf(r->err + off, RPT_ERRLEN - (size_t)off, ":%d", r->lineno);
  size_t at = (size_t)off < RPT_ERRLEN ? (size_t)off : RPT_ERRLEN - 1;
  if (RPT_ERRLEN - at > 3) {
    memcpy(r->err + at, ": ", 2);
    at += 2;
    size_t n = strnlen(msg, RPT_ERRLEN - at - 1);
    memcpy(r->err + at, msg, n);
    at += n;
  }
  r->err[at] = '\0';
  return code;
}

static const char *get_str(reader *r, const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsString(v) || v->valuestring == NULL) return NULL;
  return r->scratch ? v->valuestring : intern(r, v->valuestring);
}

static int has_num(const cJSON *o, const char *k, double *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(v)) return 0;
  *out = v->valuedouble;
  return 1;
}

static double get_num(const cJSON *o, const char *k, double dflt) {
  double d;
  return has_num(o, k, &d) ? d : dflt;
}

/* A number clamped to a range that converts to long safely. */
static long get_long(const cJSON *o, const char *k, long dflt) {
  double d;
  if (!has_num(o, k, &d)) return dflt;
  if (!(d > -1e15)) return -1000000000000000L;
  if (d > 1e15) return 1000000000000000L;
  return (long)d;
}

/* A number clamped to a range that converts to int safely. */
static int get_int(const cJSON *o, const char *k, int dflt) {
  long v = get_long(o, k, dflt);
  if (v > 1000000000L) return 1000000000;
  if (v < -1000000000L) return -1000000000;
  return (int)v;
}

static int get_bool(const cJSON *o, const char *k) {
  return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, k));
}

/* Grows a dynamic array of the trace by one element; NULL when out of memory. */
static void *grow(void **arr, int *n, int *cap, size_t elem) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)nc * elem);
    if (p == NULL) return NULL;
    *arr = p;
    *cap = nc;
  }
  char *slot = (char *)*arr + (size_t)(*n) * elem;
  memset(slot, 0, elem);
  (*n)++;
  return slot;
}

/* ------------------------------------------------------- id lookup */

static size_t id_hash(long id, int cap) {
  uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
  return (size_t)(x >> 17) & (size_t)(cap - 1);
}

static int id_map_put(rpt_trace *tr, long id, int idx) {
  if ((tr->narr + 1) * 2 > tr->id_cap) {
    int nc = tr->id_cap ? tr->id_cap * 2 : 64;
    long *m = calloc((size_t)nc * 2, sizeof(long));
    if (m == NULL) return RPT_ENOMEM;
    for (int i = 0; i < tr->id_cap; i++) {
      if (tr->id_map[2 * i + 1] == 0) continue;
      size_t h = id_hash(tr->id_map[2 * i], nc);
      while (m[2 * h + 1] != 0) h = (h + 1) & (size_t)(nc - 1);
      m[2 * h] = tr->id_map[2 * i];
      m[2 * h + 1] = tr->id_map[2 * i + 1];
    }
    free(tr->id_map);
    tr->id_map = m;
    tr->id_cap = nc;
  }
  size_t h = id_hash(id, tr->id_cap);
  while (tr->id_map[2 * h + 1] != 0) h = (h + 1) & (size_t)(tr->id_cap - 1);
  tr->id_map[2 * h] = id;
  tr->id_map[2 * h + 1] = idx + 1;
  return 0;
}

/* The arrival with this id, or NULL. */
rpt__arrival *rpt__trace_find(const rpt_trace *tr, long id) {
  if (tr->id_cap == 0) return NULL;
  size_t h = id_hash(id, tr->id_cap);
  while (tr->id_map[2 * h + 1] != 0) {
    if (tr->id_map[2 * h] == id) return &tr->arr[tr->id_map[2 * h + 1] - 1];
    h = (h + 1) & (size_t)(tr->id_cap - 1);
  }
  return NULL;
}

/* -------------------------------------------------------- events */

static int ev_session(reader *r, const cJSON *o) {
  rpt_trace *tr = r->tr;
  tr->scenario = get_str(r, o, "scenario");
  tr->file = get_str(r, o, "file");
  tr->start = get_str(r, o, "start");
  tr->version = get_int(o, "version", 1);
  double ts = get_num(o, "time_scale", 1.0);
  if (!(ts > 0) || ts > 1e6)
    return fail(r, RPT_ETRACE, "session.time_scale must be a positive number");
  tr->time_scale = ts;
  const char *names[2] = {"expect", "client"};
  const char **dst[2] = {&tr->expect_json, &tr->client_json};
  for (int i = 0; i < 2; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, names[i]);
    if (v == NULL || cJSON_IsNull(v)) continue;
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
      return fail(r, RPT_ETRACE, "session.%s must be an object", names[i]);
    char *s = cJSON_PrintUnformatted(v);
    if (s == NULL) return RPT_ENOMEM;
    *dst[i] = rpt__arena_strdup(&tr->arena, s, &r->oom);
    cJSON_free(s);
  }
  return 0;
}

/* The expect table a fold is for. */
#define FOLD_EXPECT(tr) ((tr)->fold_expect ? (tr)->fold_expect : (tr)->expect_json)

/* Fills a from an arrive event. */
static void fill_arrive(reader *r, const cJSON *o, double t, long id, rpt__arrival *a) {
  a->id = id;
  a->line = r->lineno;
  a->t_arrive = t;
  a->key = get_str(r, o, "key");
  a->provider = get_str(r, o, "provider");
  a->method = get_str(r, o, "method");
  a->path = get_str(r, o, "path");
  a->dialect = get_str(r, o, "dialect");
  a->model = get_str(r, o, "model");
  a->attempt = get_int(o, "attempt", 0);
  a->stream = get_bool(o, "stream");
  a->body_bytes = get_long(o, "body_bytes", 0);
  a->retry_after_ms = -1;
  /* provider null: a path no provider serves (dialect null too) or the
     effect endpoint (dialect "effect"); absent: the only provider. */
  const cJSON *pv = cJSON_GetObjectItemCaseSensitive(o, "provider");
  const cJSON *dv = cJSON_GetObjectItemCaseSensitive(o, "dialect");
  a->unserved = cJSON_IsNull(pv) && (dv == NULL || cJSON_IsNull(dv));
  if (a->provider == NULL) a->provider = pv ? "(none)" : "primary";
  if (a->method == NULL) a->method = "POST";
}

static int ev_arrive(reader *r, const cJSON *o, double t) {
  rpt_trace *tr = r->tr;
  double idd;
  if (!has_num(o, "id", &idd)) return fail(r, RPT_ETRACE, "arrive without a numeric id");
  long id = get_long(o, "id", 0);
  const cJSON *key = cJSON_GetObjectItemCaseSensitive(o, "key");
  if (!cJSON_IsString(key)) return fail(r, RPT_ETRACE, "arrive without a key");
  if (rpt__trace_find(tr, id) || rpt__fold_has(tr->fold, id))
    return fail(r, RPT_ETRACE, "arrival id %ld appears twice", id);
  if (tr->keep && tr->fold == NULL &&
      (tr->fold = rpt__fold_new(tr->time_scale, FOLD_EXPECT(tr))) == NULL)
    return RPT_ENOMEM;
  if (tr->keep && tr->narr >= tr->keep) {
    /* Past the kept prefix: folded only, its strings those of the event. */
    rpt__arrival tmp = {0};
    if (rpt__fold_seen_id(tr->fold, id)) {
      tr->fold_broke = 1; /* maybe an id folded already: only a whole read can say */
      return 0;
    }
    r->scratch = 1;
    fill_arrive(r, o, t, id, &tmp);
    r->scratch = 0;
    rpt__fold_arrive(tr->fold, &tmp);
    return 0;
  }
  rpt__arrival *a = grow((void **)&tr->arr, &tr->narr, &tr->carr, sizeof *a);
  if (a == NULL) return RPT_ENOMEM;
  fill_arrive(r, o, t, id, a);
  if (tr->fold) rpt__fold_arrive(tr->fold, a);
  return id_map_put(tr, a->id, tr->narr - 1);
}

/* Fills a's end from an end event. 0 or RPT_ENOMEM. */
static int fill_end(reader *r, const cJSON *o, double t, rpt__arrival *a) {
  a->has_end = 1;
  a->t_end = t;
  a->step = get_str(r, o, "step");
  a->how = get_str(r, o, "how");
  a->status = get_int(o, "status", 0);
  a->chunks = get_int(o, "chunks", 0);
  a->stalled = get_bool(o, "stalled");
  const cJSON *em = cJSON_GetObjectItemCaseSensitive(o, "end_marker");
  a->no_end_marker = cJSON_IsFalse(em);
  a->no_finish = cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "finish"));
  a->error_event = get_bool(o, "error_event");
  a->body_json = get_bool(o, "body_json");
  const cJSON *hd = cJSON_GetObjectItemCaseSensitive(o, "headers");
  a->should_retry = get_str(r, hd, "x-should-retry");
  a->ra_header = get_str(r, hd, "retry-after");
  a->ra_ms_header = get_str(r, hd, "retry-after-ms");
  a->retry_after_ms = get_num(o, "retry_after_ms", -1);
  a->delay_ms = get_num(o, "delay_ms", 0);
  a->tokens_in = get_long(o, "tokens_in", 0);
  a->tokens_out = get_long(o, "tokens_out", 0);
  a->text = get_str(r, o, "text");
  const cJSON *tc = cJSON_GetObjectItemCaseSensitive(o, "tool_calls");
  if (cJSON_IsArray(tc)) {
    char *s = cJSON_PrintUnformatted(tc);
    if (s == NULL) return RPT_ENOMEM;
    if (!r->scratch) a->tool_calls_json = intern(r, s);
    cJSON_free(s);
  }
  /* The error code, when the server records it (several spellings). */
  a->code = get_str(r, o, "code");
  if (a->code == NULL) a->code = get_str(r, o, "error_code");
  if (a->code == NULL) {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, "error");
    if (cJSON_IsObject(e)) a->code = get_str(r, e, "code");
  }
  if (a->how == NULL) a->how = "complete";
  /* How the attempt ended: the server's word when it wrote one, else the
     one derived from the fields above (attempt_state.c). */
  a->state = get_str(r, o, "state");
  if (a->state == NULL || a->state[0] == '\0') {
    a->state = rpt__state_derive(a);
    a->state_derived = 1;
  }
  return 0;
}

static int ev_end(reader *r, const cJSON *o, double t) {
  double idd;
  if (!has_num(o, "id", &idd)) return fail(r, RPT_ETRACE, "end without a numeric id");
  long id = get_long(o, "id", 0);
  rpt_trace *tr = r->tr;
  rpt__arrival *a = rpt__trace_find(tr, id);
  if (a == NULL && tr->fold) {
    rpt__arrival tmp = {0};
    r->scratch = 1;
    int rc = fill_end(r, o, t, &tmp);
    r->scratch = 0;
    if (rc) return rc;
    int got = rpt__fold_end(tr->fold, id, &tmp);
    if (got == 2) return fail(r, RPT_ETRACE, "second end for arrival id %ld", id);
    if (got == 0) return 0;
    if (rpt__fold_seen_id(tr->fold, id)) {
      tr->fold_broke = 1; /* the end of an attempt folded already */
      return 0;
    }
  }
  if (a == NULL) return fail(r, RPT_ETRACE, "end for unknown arrival id %ld", id);
  if (a->has_end) return fail(r, RPT_ETRACE, "second end for arrival id %ld", id);
  int rc = fill_end(r, o, t, a);
  if (rc == 0 && tr->fold && rpt__fold_end(tr->fold, id, a) != 0) tr->fold_broke = 1;
  return rc;
}

static int ev_effect(reader *r, const cJSON *o, double t) {
  rpt_trace *tr = r->tr;
  rpt__effect *e = grow((void **)&tr->eff, &tr->neff, &tr->ceff, sizeof *e);
  if (e == NULL) return RPT_ENOMEM;
  e->t = t;
  e->id = get_long(o, "id", 0);
  e->name = get_str(r, o, "name");
  e->key = get_str(r, o, "key");
  e->action = get_str(r, o, "action");
  e->fingerprint = get_str(r, o, "fingerprint");
  e->count = get_int(o, "count", 0);
  e->found = get_bool(o, "found");
  if (e->action == NULL) e->action = "?";
  return 0;
}

static int ev_client(reader *r, const cJSON *o, double t) {
  rpt_trace *tr = r->tr;
  rpt__client_ev *c = grow((void **)&tr->cli, &tr->ncli, &tr->ccli, sizeof *c);
  if (c == NULL) return RPT_ENOMEM;
  c->t = t;
  c->call = get_int(o, "call", tr->ncli - 1);
  c->client = get_str(r, o, "client");
  c->outcome = get_str(r, o, "outcome");
  c->text = get_str(r, o, "text");
  c->reason = get_str(r, o, "reason");
  c->stopped = get_str(r, o, "stopped");
  c->total_ms = get_num(o, "total_ms", -1);
  double tok;
  c->has_tokens = has_num(o, "tokens", &tok);
  c->tokens = c->has_tokens ? get_long(o, "tokens", 0) : 0;
  const cJSON *att = cJSON_GetObjectItemCaseSensitive(o, "attempts");
  c->nattempts = cJSON_IsArray(att) ? cJSON_GetArraySize(att) : 0;
  c->external = get_bool(o, "external");
  double ex;
  c->exit_code = has_num(o, "exit_code", &ex) ? get_int(o, "exit_code", 0) : -1;
  c->timed_out = get_bool(o, "timed_out");
  c->error_line = get_str(r, o, "error_line");
  c->started_t = get_num(o, "started_t", -1);
  if (c->outcome == NULL) return fail(r, RPT_ETRACE, "client event without an outcome");
  return 0;
}

static int ev_error(reader *r, const cJSON *o, double t) {
  rpt_trace *tr = r->tr;
  rpt__error_ev *e = grow((void **)&tr->errs, &tr->nerr, &tr->cerr, sizeof *e);
  if (e == NULL) return RPT_ENOMEM;
  e->t = t;
  e->id = get_long(o, "id", 0);
  e->message = get_str(r, o, "message");
  if (e->message == NULL) e->message = "(no message)";
  return 0;
}

/* Handles one parsed event; the first must be `session`. */
static int handle_event(reader *r, const cJSON *o, int first) {
  const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "ev");
  if (first) {
    if (!cJSON_IsString(ev) || strcmp(ev->valuestring, "session") != 0)
      return fail(r, RPT_ETRACE, "not a fusebox trace: the first event is not `session`");
  }
  if (!cJSON_IsString(ev)) return fail(r, RPT_ETRACE, "event without `ev`");
  double t;
  if (!has_num(o, "t", &t) || !(t > -1e12 && t < 1e12))
    return fail(r, RPT_ETRACE, "event without a numeric `t`");
  rpt_trace *tr = r->tr;
  if (t > tr->t_last) tr->t_last = t;
  const char *k = ev->valuestring;
  if (strcmp(k, "session") == 0) {
    if (!first) return 0; /* a second session line is ignored */
    return ev_session(r, o);
  }
  if (strcmp(k, "arrive") == 0) return ev_arrive(r, o, t);
  if (strcmp(k, "end") == 0) return ev_end(r, o, t);
  if (strcmp(k, "effect") == 0) return ev_effect(r, o, t);
  if (strcmp(k, "client") == 0) return ev_client(r, o, t);
  if (strcmp(k, "error") == 0) return ev_error(r, o, t);
  if (strcmp(k, "done") == 0) {
    tr->has_done = 1;
    return 0;
  }
  return 0; /* unknown events are ignored, as the format says */
}

/* -------------------------------------------------------- groups */

typedef struct sort_item {
  int attempt;
  long id;
  int idx;
} sort_item;

static int cmp_item(const void *x, const void *y) {
  const sort_item *a = x, *b = y;
  if (a->attempt != b->attempt) return a->attempt < b->attempt ? -1 : 1;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return 0;
}

static size_t str_hash(const char *s, size_t cap) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (size_t)h & (cap - 1);
}

/* Groups arrivals by key, each group ordered by attempt then id. */
static int build_groups(rpt_trace *tr) {
  if (tr->narr == 0) return 0;
  size_t cap = 64;
  while (cap < (size_t)tr->narr * 2) cap *= 2;
  int *slot = malloc(cap * sizeof(int)); /* group index + 1, 0 = empty */
  sort_item *items = malloc((size_t)tr->narr * sizeof *items);
  int *gcount = calloc((size_t)tr->narr, sizeof(int));
  int rc = RPT_ENOMEM;
  if (slot == NULL || items == NULL || gcount == NULL) goto out;
  memset(slot, 0, cap * sizeof(int));
  tr->groups = rpt__arena_alloc(&tr->arena, (size_t)tr->narr * sizeof(rpt__group));
  if (tr->groups == NULL) goto out;
  for (int i = 0; i < tr->narr; i++) {
    rpt__arrival *a = &tr->arr[i];
    size_t h = str_hash(a->key, cap);
    while (slot[h] && strcmp(tr->groups[slot[h] - 1].key, a->key) != 0)
      h = (h + 1) & (cap - 1);
    if (slot[h] == 0) {
      tr->groups[tr->ngroups].key = a->key;
      slot[h] = ++tr->ngroups;
    }
    a->group = slot[h] - 1;
    gcount[a->group]++;
  }
  for (int g = 0; g < tr->ngroups; g++) {
    tr->groups[g].idx = rpt__arena_alloc(&tr->arena, (size_t)gcount[g] * sizeof(int));
    if (tr->groups[g].idx == NULL) goto out;
  }
  for (int i = 0; i < tr->narr; i++) {
    rpt__group *g = &tr->groups[tr->arr[i].group];
    g->idx[g->n++] = i;
    if (strcmp(tr->arr[i].method, "GET") != 0) g->n_post++;
  }
  for (int g = 0; g < tr->ngroups; g++) {
    rpt__group *gr = &tr->groups[g];
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *a = &tr->arr[gr->idx[k]];
      items[k] = (sort_item){a->attempt, a->id, gr->idx[k]};
    }
    qsort(items, (size_t)gr->n, sizeof *items, cmp_item);
    for (int k = 0; k < gr->n; k++) gr->idx[k] = items[k].idx;
  }
  rc = 0;
out:
  free(slot);
  free(items);
  free(gcount);
  return rc;
}

/* -------------------------------------------------------- reading */

static int read_all(line_src *src, const char *name, int keep, const char *expect_json,
                    rpt_trace **out, char *err) {
  *out = NULL;
  rpt_trace *tr = calloc(1, sizeof *tr);
  if (tr == NULL) return RPT_ENOMEM;
  tr->keep = keep;
  tr->fold_expect = expect_json;
  reader r = {.tr = tr, .name = name, .err = err};
  int rc = 0;
  tr->time_scale = 1.0;
  tr->path = rpt__arena_strdup(&tr->arena, name, &r.oom);

  int seen_event = 0;    /* a line parsed */
  int bad_line = 0;      /* a line that did not parse, pending judgement */
  size_t bad_len = 0;
  int last_nl = 1;
  for (;;) {
    const char *line;
    size_t len;
    int nl;
    int got = next_line(src, &line, &len, &nl);
    r.lineno = src->lineno;
    if (got == 0) break;
    if (got == RPT_ETOOBIG) {
      rc = fail(&r, RPT_ETOOBIG, "line longer than %d bytes", RPT_MAX_LINE);
      goto fail;
    }
    if (got == RPT_ETRACE) {
      rc = fail(&r, RPT_ETRACE, "not a fusebox trace: a NUL byte (binary file?)");
      goto fail;
    }
    if (got < 0) {
      rc = fail(&r, RPT_EIO, "read error: %s", strerror(errno));
      goto fail;
    }
    last_nl = nl;
    if (is_blank(line, len)) continue;
    if (bad_line) {
      /* Only the last line may be cut: this one follows a bad one. */
      r.lineno = bad_line;
      rc = fail(&r, RPT_ETRACE, seen_event ? "not a JSON object (and not the last line)"
                                           : "not a fusebox trace: not a JSON object");
      goto fail;
    }
    int oom = 0;
    cJSON *o = rpt__json_parse(line, len, &oom);
    if (oom) {
      rc = fail(&r, RPT_ENOMEM, "out of memory");
      goto fail;
    }
    if (o == NULL || !cJSON_IsObject(o)) {
      cJSON_Delete(o);
      bad_line = r.lineno;
      bad_len = len;
      continue;
    }
    /* Read whole, a trace is held in memory: at most RPT_MAX_EVENTS. Read
       for a report (keep), what it holds is bounded by keep and the fold's
       own bounds instead; past them the fold breaks and it is read whole. */
    if (++tr->nevents > RPT_MAX_EVENTS && !tr->keep) {
      cJSON_Delete(o);
      rc = fail(&r, RPT_ETOOBIG, "more than %d events", RPT_MAX_EVENTS);
      goto fail;
    }
    rc = handle_event(&r, o, !seen_event);
    cJSON_Delete(o);
    if (rc == RPT_ENOMEM || r.oom) {
      rc = fail(&r, RPT_ENOMEM, "out of memory");
      goto fail;
    }
    if (rc) goto fail;
    seen_event = 1;
    if (tr->keep && tr->neff + tr->ncli + tr->nerr > tr->keep) tr->fold_broke = 1;
    if (tr->fold_broke || rpt__fold_broken(tr->fold)) break; /* read whole instead */
  }
  (void)last_nl;
  if (!seen_event) {
    r.lineno = 0;
    rc = fail(&r, RPT_ETRACE, bad_line ? "not a fusebox trace: no line parses as JSON"
                                       : "empty file, not a fusebox trace");
    goto fail;
  }
  for (int i = 0; i < tr->narr; i++)
    if (!tr->arr[i].has_end) {
      tr->arr[i].state = RPT__STATE_OPEN;
      tr->arr[i].state_derived = 1;
    }
  if (bad_line) tr->cut_line = bad_line;
  if (tr->cut_line)
    snprintf(tr->warning, sizeof tr->warning,
             "trace incomplete: last line (%d, %zu bytes) was cut", tr->cut_line, bad_len);
  else if (!tr->has_done)
    snprintf(tr->warning, sizeof tr->warning,
             "trace incomplete: no `done` event (the run was stopped)");
  if (tr->keep) {
    if (tr->fold == NULL) tr->fold = rpt__fold_new(tr->time_scale, FOLD_EXPECT(tr));
    tr->sum = rpt__fold_finish(tr->fold);
    tr->fold = NULL;
    if (tr->sum == NULL) {
      r.lineno = 0;
      rc = fail(&r, RPT_ENOMEM, "out of memory");
      goto fail;
    }
    if (tr->fold_broke) tr->sum->broken = 1;
    if (!tr->sum->broken && tr->sum->narr <= tr->narr) { /* all kept: judged whole */
      rpt__sum_free(tr->sum);
      tr->sum = NULL;
    }
  }
  rc = build_groups(tr);
  if (rc) {
    r.lineno = 0;
    fail(&r, rc, "out of memory");
    goto fail;
  }
  free(r.strs.slot);
  *out = tr;
  return 0;
fail:
  free(r.strs.slot);
  rpt_trace_free(tr);
  return rc;
}

/*
 * Reads the JSON Lines trace at path; see reports.h for what is an error and
 * what only marks the trace incomplete. The caller owns *out and releases it
 * with rpt_trace_free.
 */
int rpt_trace_read_file(const char *path, rpt_trace **out, char err[RPT_ERRLEN]) {
  return rpt__trace_read_keep(path, 0, NULL, out, err);
}

/* Reads path keeping at most keep arrivals whole (0 = all); reports_int.h. */
int rpt__trace_read_keep(const char *path, int keep, const char *expect_json, rpt_trace **out,
                         char err[RPT_ERRLEN]) {
  if (out) *out = NULL;
  if (path == NULL || out == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, RPT_ERRLEN, "%s: %s", path, strerror(errno));
    return RPT_EIO;
  }
  line_src src = {.f = f};
  src.buf = malloc(RPT_MAX_LINE + 1);
  if (src.buf == NULL) {
    fclose(f);
    snprintf(err, RPT_ERRLEN, "%s: out of memory", path);
    return RPT_ENOMEM;
  }
  int rc = read_all(&src, path, keep, expect_json, out, err);
  free(src.buf);
  fclose(f);
  return rc;
}

/*
 * Same as rpt_trace_read_file, from len bytes of text; name is used in
 * messages. The caller owns *out and releases it with rpt_trace_free.
 */
int rpt_trace_read_mem(const char *text, size_t len, const char *name,
                       rpt_trace **out, char err[RPT_ERRLEN]) {
  if (out) *out = NULL;
  if ((text == NULL && len > 0) || out == NULL || err == NULL) return RPT_EINVAL;
  line_src src = {.mem = text ? text : "", .memlen = len};
  return read_all(&src, name ? name : "(trace)", 0, NULL, out, err);
}

/* Releases a trace. NULL is a no-op. */
void rpt_trace_free(rpt_trace *tr) {
  if (tr == NULL) return;
  free(tr->arr);
  free(tr->id_map);
  free(tr->eff);
  free(tr->cli);
  free(tr->errs);
  rpt__fold_free(tr->fold);
  rpt__sum_free(tr->sum);
  rpt__arena_free(&tr->arena);
  free(tr);
}

/* session.scenario, or NULL; valid until rpt_trace_free. */
const char *rpt_trace_scenario(const rpt_trace *tr) { return tr ? tr->scenario : NULL; }
/* session.file, or NULL; valid until rpt_trace_free. */
const char *rpt_trace_file(const rpt_trace *tr) { return tr ? tr->file : NULL; }
/* session.expect as JSON text, or NULL; valid until rpt_trace_free. */
const char *rpt_trace_expect_json(const rpt_trace *tr) { return tr ? tr->expect_json : NULL; }
/* session.client as JSON text, or NULL; valid until rpt_trace_free. */
const char *rpt_trace_client_json(const rpt_trace *tr) { return tr ? tr->client_json : NULL; }
/* session.time_scale (1 when absent). */
double rpt_trace_time_scale(const rpt_trace *tr) { return tr ? tr->time_scale : 1.0; }
/* The t of the last event, in ms. */
double rpt_trace_duration_ms(const rpt_trace *tr) { return tr ? tr->t_last : 0; }
/* Number of arrivals (attempts) in the trace. */
long rpt_trace_arrivals(const rpt_trace *tr) { return rpt__trace_narr(tr); }

int rpt_trace_arrival(const rpt_trace *tr, long i, rpt_arrival_info *out) {
  if (!tr || i < 0 || i >= tr->narr || !out) return RPT_EINVAL;
  const rpt__arrival *a = &tr->arr[i];
  out->t_arrive_ms = a->t_arrive;
  out->t_end_ms = a->has_end ? a->t_end : -1;
  out->status = a->status;
  out->attempt = a->attempt;
  out->key = a->key;
  out->method = a->method;
  out->stream = a->stream;
  return RPT_OK;
}
/* 1 when the trace ends with `done` and no line was cut. */
int rpt_trace_complete(const rpt_trace *tr) {
  return tr && tr->has_done && tr->cut_line == 0;
}
/* Why the trace is incomplete, or ""; valid until rpt_trace_free. */
const char *rpt_trace_warning(const rpt_trace *tr) { return tr ? tr->warning : ""; }

/* ------------------------------------------------ attempts read again */

#define PENDING_MAX 1024 /* attempts read again that await their end */

typedef struct pending {
  long id;
  cJSON *arrive, *end; /* the parsed events; end NULL until it is read */
} pending;

/* Parses an event line: its kind ('a' arrive, 'e' end, 0 other) and id;
   *out is the parsed object for an arrive or end (the caller deletes it). */
static int line_kind(const char *line, size_t len, long *id, cJSON **out) {
  int oom = 0, kind = 0;
  cJSON *o = rpt__json_parse(line, len, &oom);
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "ev");
  if (cJSON_IsString(k) && strcmp(k->valuestring, "arrive") == 0) kind = 'a';
  if (cJSON_IsString(k) && strcmp(k->valuestring, "end") == 0) kind = 'e';
  *id = kind ? get_long(o, "id", 0) : -1;
  if (kind && out) *out = o;
  else cJSON_Delete(o);
  return kind;
}

/* Joins an arrive event and its end (or none) as the reader does, and hands
   the attempt to fn. Its strings are those of the parsed events (the
   reader's scratch mode): nothing is kept once fn returns. */
static int emit(const pending *p, int (*fn)(void *ctx, const rpt__arrival *a), void *ctx) {
  rpt_trace scratch_tr = {.time_scale = 1};
  char err[RPT_ERRLEN];
  reader r = {.tr = &scratch_tr, .name = "(attempt)", .err = err, .scratch = 1};
  rpt__arrival a = {0};
  int rc = 0;
  fill_arrive(&r, p->arrive, get_num(p->arrive, "t", 0), p->id, &a);
  if (p->end) {
    rc = fill_end(&r, p->end, get_num(p->end, "t", 0), &a);
  } else {
    a.state = RPT__STATE_OPEN;
    a.state_derived = 1;
  }
  return rc ? rc : fn(ctx, &a);
}

/* The end event of attempt id after offset at in path (parsed), or NULL. */
static cJSON *find_end(const char *path, long at, long id, char *buf) {
  FILE *f = fopen(path, "rb");
  if (f == NULL || fseek(f, at, SEEK_SET) != 0) {
    if (f) fclose(f);
    return NULL;
  }
  line_src src = {.f = f, .buf = buf};
  const char *line;
  size_t len;
  int nl;
  long got;
  cJSON *found = NULL;
  while (found == NULL && next_line(&src, &line, &len, &nl) == 1) {
    cJSON *o = NULL;
    if (line_kind(line, len, &got, &o) == 'e' && got == id) found = o;
    else cJSON_Delete(o);
  }
  fclose(f);
  return found;
}

/* Emits and releases the oldest waiting attempt. */
static int pop(pending *q, size_t *head, size_t *n,
               int (*fn)(void *ctx, const rpt__arrival *a), void *ctx) {
  pending *p = &q[*head];
  int rc = emit(p, fn, ctx);
  cJSON_Delete(p->arrive);
  cJSON_Delete(p->end);
  p->arrive = p->end = NULL;
  *head = (*head + 1) % PENDING_MAX;
  (*n)--;
  return rc;
}

/*
 * Calls fn on every attempt of tr's file in arrival order, each joined with
 * its end as rpt_trace_read_file would. Holds the attempts that await their
 * end, at most PENDING_MAX: past that the oldest one's end is looked for
 * further down the file. 0, fn's first non-zero return, or an error code.
 */
int rpt__trace_each_attempt(const rpt_trace *tr, int (*fn)(void *ctx, const rpt__arrival *a),
                            void *ctx) {
  if (tr == NULL || tr->path == NULL || fn == NULL) return RPT_EINVAL;
  FILE *f = fopen(tr->path, "rb");
  if (f == NULL) return RPT_EIO;
  pending *q = calloc(PENDING_MAX, sizeof *q);
  char *buf = malloc(RPT_MAX_LINE + 1), *buf2 = malloc(RPT_MAX_LINE + 1);
  int rc = (q && buf && buf2) ? 0 : RPT_ENOMEM;
  size_t head = 0, n = 0; /* the queue: q[head], ... q[head + n - 1] (mod PENDING_MAX) */
  line_src src = {.f = f, .buf = buf};
  const char *line;
  size_t len;
  int nl;
  while (rc == 0 && next_line(&src, &line, &len, &nl) == 1) {
    long id;
    cJSON *o = NULL;
    int kind = line_kind(line, len, &id, &o);
    if (kind == 'a') {
      if (n == PENDING_MAX) { /* the oldest never ended nearby: find its end */
        q[head].end = find_end(tr->path, ftell(f), q[head].id, buf2);
        if ((rc = pop(q, &head, &n, fn, ctx))) {
          cJSON_Delete(o);
          break;
        }
      }
      pending *p = &q[(head + n) % PENDING_MAX];
      p->id = id;
      p->arrive = o;
      p->end = NULL;
      n++;
    } else if (kind == 'e') {
      size_t k = 0;
      while (k < n && !(q[(head + k) % PENDING_MAX].id == id && !q[(head + k) % PENDING_MAX].end))
        k++;
      if (k < n) q[(head + k) % PENDING_MAX].end = o;
      else cJSON_Delete(o); /* its attempt was emitted already (found further down) */
    }
    while (rc == 0 && n > 0 && q[head].end) rc = pop(q, &head, &n, fn, ctx);
  }
  while (rc == 0 && n > 0) rc = pop(q, &head, &n, fn, ctx); /* still open at the end */
  for (size_t k = 0; q && k < PENDING_MAX; k++) {
    cJSON_Delete(q[k].arrive);
    cJSON_Delete(q[k].end);
  }
  free(q);
  free(buf);
  free(buf2);
  fclose(f);
  return rc;
}
