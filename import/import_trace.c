/*
 * import_trace.c - the trace reader of `fusebox import`: a trace written by
 * `fusebox serve` (docs/trace.md) read back into the steps that produced
 * it, so that serving the import again behaves the same on the wire.
 *
 * Each `arrive` is paired with its `end` (and its `effect`, if any). What
 * the server answers by itself (unknown paths, wrong methods, bodies over
 * the limit, ledger lookups) is left out: it will answer them again. An
 * arrival without an `end` (the server was killed) replays as hang{}.
 * What a trace does not record is approximated: a stream's chunk
 * boundaries (its text is re-split into as many chunks as were sent), its
 * pacing (from the attempt's duration), a truncated answer's text, error
 * messages (the dialect's defaults).
 */
#define _GNU_SOURCE /* strcasestr, timegm */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import/import_int.h"

/* One arrival waiting for its end. */
typedef struct arrival {
  long id;
  int line;
  double t;
  char *key, *provider, *path, *action;
  const char *api; /* the arrival's dialect (static) */
  int effect;     /* dialect "effect" */
  int skip;       /* answered by the server itself */
  int ended;
} arrival;

typedef struct trace_rd {
  imp_log *lg;
  arrival *v;
  size_t n, cap;
  long *slots;     /* open addressing: id -> index + 1 */
  size_t nslots;
  double start_ms; /* session start, epoch ms (0: unknown) */
} trace_rd;

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *get_str(const cJSON *o, const char *k) {
  const cJSON *it = get(o, k);
  return cJSON_IsString(it) ? it->valuestring : NULL;
}

static double get_num(const cJSON *o, const char *k, double dflt) {
  const cJSON *it = get(o, k);
  return cJSON_IsNumber(it) && isfinite(it->valuedouble) ? it->valuedouble : dflt;
}

/* A trace number as a whole number in [lo, hi]: a hostile trace may hold
   1e300 or NaN where a count belongs, and casting those is undefined. */
static long clamp_whole(double v, long lo, long hi) {
  if (!(v >= (double)lo)) return lo; /* NaN too */
  if (v >= (double)hi) return hi;
  return (long)v;
}

#define ID(v) clamp_whole((v), -1000000000000L, 1000000000000L)

static size_t slot_of(const trace_rd *rd, long id) {
  uint64_t h = (uint64_t)id * 11400714819323198485ULL;
  return (size_t)(h >> 20) & (rd->nslots - 1);
}

static arrival *find(trace_rd *rd, long id) {
  if (rd->nslots == 0) return NULL;
  for (size_t i = slot_of(rd, id);; i = (i + 1) & (rd->nslots - 1)) {
    if (rd->slots[i] == 0) return NULL;
    if (rd->v[rd->slots[i] - 1].id == id) return &rd->v[rd->slots[i] - 1];
  }
}

static int rehash(trace_rd *rd) {
  size_t ns = rd->nslots ? rd->nslots * 2 : 1024;
  long *s = calloc(ns, sizeof *s);
  if (s == NULL) return SIM_ENOMEM;
  free(rd->slots);
  rd->slots = s;
  rd->nslots = ns;
  for (size_t k = 0; k < rd->n; k++) {
    size_t i = slot_of(rd, rd->v[k].id);
    while (rd->slots[i] != 0) i = (i + 1) & (ns - 1);
    rd->slots[i] = (long)k + 1;
  }
  return SIM_OK;
}

static char *dup_opt(const char *s, int *nomem) {
  if (s == NULL) return NULL;
  char *d = strdup(s);
  if (d == NULL) *nomem = 1;
  return d;
}

/* The static name of a trace's dialect, or NULL. */
static const char *api_name(const char *d) {
  static const char *const names[] = {"openai-chat", "openai-responses", "openai-completions",
                                      "embeddings", "models", "anthropic", "gemini", NULL};
  for (int i = 0; d != NULL && names[i] != NULL; i++)
    if (strcmp(d, names[i]) == 0) return names[i];
  return NULL;
}

/* The end event's tool_calls (id, name, arguments): the calls the answer
   carried. Sets *pieces to the stream frames their arguments take. */
static int take_tools(imp_resp *r, const cJSON *ev, int *pieces) {
  const cJSON *t;
  *pieces = 0;
  cJSON_ArrayForEach(t, get(ev, "tool_calls")) {
    const char *name = get_str(t, "name"), *args = get_str(t, "arguments");
    if (name == NULL || name[0] == '\0') continue;
    int rc = imp__resp_tool(r, -1, get_str(t, "id"), name, args);
    if (rc != SIM_OK) return rc;
    size_t len = args && args[0] ? strlen(args) : 2;
    *pieces += r->api && strcmp(r->api, "gemini") == 0 ? 1 : (int)((len + 7) / 8);
  }
  return SIM_OK;
}

static int on_arrive(trace_rd *rd, int line, const cJSON *ev) {
  const cJSON *id = get(ev, "id");
  if (!cJSON_IsNumber(id)) return imp__fail(rd->lg, line, "arrive without an 'id'");
  if (find(rd, ID(id->valuedouble)) != NULL)
    return imp__fail(rd->lg, line, "arrival id %ld appears twice", ID(id->valuedouble));
  if (rd->n >= IMP_MAX_ATTEMPTS)
    return imp__fail(rd->lg, line, "more than %d arrivals: import a shorter trace",
                     IMP_MAX_ATTEMPTS);
  if (rd->n == rd->cap) {
    size_t cap = rd->cap ? rd->cap * 2 : 256;
    arrival *v = realloc(rd->v, cap * sizeof *v);
    if (v == NULL) return SIM_ENOMEM;
    rd->v = v;
    rd->cap = cap;
  }
  if ((rd->n + 1) * 2 > rd->nslots && rehash(rd) != SIM_OK) return SIM_ENOMEM;
  arrival *a = &rd->v[rd->n];
  memset(a, 0, sizeof *a);
  int nomem = 0;
  a->id = ID(id->valuedouble);
  a->line = line;
  a->t = get_num(ev, "t", 0);
  a->key = dup_opt(get_str(ev, "key"), &nomem);
  a->provider = dup_opt(get_str(ev, "provider"), &nomem);
  a->path = dup_opt(get_str(ev, "path"), &nomem);
  const char *dialect = get_str(ev, "dialect");
  const char *method = get_str(ev, "method");
  a->effect = dialect && strcmp(dialect, "effect") == 0;
  a->api = api_name(dialect);
  /* What the server answers without asking the scenario. */
  a->skip = dialect == NULL || method == NULL ||
            (!a->effect && strcmp(method, "POST") != 0) ||
            (a->effect && strcmp(method, "POST") != 0) ||
            get_num(ev, "body_bytes", 0) > (double)(1 << 20);
  if (nomem) {
    free(a->key);
    free(a->provider);
    free(a->path);
    return SIM_ENOMEM;
  }
  size_t i = slot_of(rd, a->id);
  while (rd->slots[i] != 0) i = (i + 1) & (rd->nslots - 1);
  rd->slots[i] = (long)rd->n + 1;
  rd->n++;
  return SIM_OK;
}

/* Splits text into exactly n chunks, each a word and the spaces after it
   (as chunk lists are usually written, and as a stream cut after a chunk
   shows); extra words join the last chunk, missing ones are empty. */
static int split_chunks(imp_resp *r, const char *text, int n) {
  size_t len = strlen(text), i = 0;
  for (int k = 0; k < n; k++) {
    size_t j = i;
    if (k == n - 1) {
      j = len;
    } else {
      while (j < len && text[j] != ' ') j++;
      while (j < len && text[j] == ' ') j++;
    }
    int rc = imp__resp_chunk(r, text + i, j - i);
    if (rc != SIM_OK) return rc;
    i = j;
  }
  return SIM_OK;
}

static int on_effect(trace_rd *rd, const cJSON *ev) {
  const char *action = get_str(ev, "action");
  if (action == NULL) return SIM_OK;
  if (strcmp(action, "ledger_down") == 0) rd->lg->ledger_down = 1;
  if (strcmp(action, "applied") == 0 && get_str(ev, "key") != NULL &&
      get_num(ev, "count", 1) > 1)
    rd->lg->idem_ignored = 1;
  const cJSON *id = get(ev, "id");
  arrival *a = cJSON_IsNumber(id) ? find(rd, ID(id->valuedouble)) : NULL;
  if (a != NULL && a->action == NULL) {
    a->action = strdup(action);
    if (a->action == NULL) return SIM_ENOMEM;
  }
  return SIM_OK;
}

/* Adds the attempt of arrival a; ev is its end event, or NULL (none). */
static int add_attempt(trace_rd *rd, arrival *a, const cJSON *ev, int line) {
  imp_resp r;
  imp__resp_init(&r);
  int rc = SIM_OK;
  a->ended = 1;
  const char *step = ev ? get_str(ev, "step") : "hang";
  const char *how = ev ? get_str(ev, "how") : "shutdown";
  if (step == NULL) step = "none";
  if (how == NULL) how = "complete";
  if (a->skip || strcmp(step, "lookup") == 0) {
    rd->lg->skipped++;
    return SIM_OK;
  }
  double status = ev ? get_num(ev, "status", 0) : 0;
  if (status != 0 && (status != floor(status) || status < 100 || status > 599))
    return imp__fail(rd->lg, line, "status %g is not an HTTP status", status);
  r.status = (int)status;
  r.api = a->api;
  r.effect = a->effect;
  r.effect_apply = a->action == NULL || strcmp(a->action, "not_applied") != 0;
  r.delay_ms = ev ? get_num(ev, "delay_ms", 0) : 0;
  const cJSON *h, *hs = ev ? get(ev, "headers") : NULL;
  cJSON_ArrayForEach(h, hs) {
    if (cJSON_IsString(h) && (rc = imp__resp_header(&r, h->string, h->valuestring)) != SIM_OK)
      goto done;
  }
  const char *code = ev ? get_str(ev, "code") : NULL, *type = ev ? get_str(ev, "type") : NULL;
  if ((code && (r.code = strdup(code)) == NULL) || (type && (r.type = strdup(type)) == NULL)) {
    rc = SIM_ENOMEM;
    goto done;
  }
  const char *text = ev ? get_str(ev, "text") : NULL;
  int chunks = (int)clamp_whole(get_num(ev, "chunks", 0), 0, 1000000);
  if (chunks < 0) chunks = 0;
  if (chunks > IMP_MAX_CHUNKS) chunks = IMP_MAX_CHUNKS;
  int stalled = cJSON_IsTrue(get(ev, "stalled"));
  double tin = get_num(ev, "tokens_in", -1), tout = get_num(ev, "tokens_out", -1);
  double dur = (ev ? get_num(ev, "t", a->t) : a->t) - a->t - r.delay_ms;

  int aborted = strcmp(how, "client_abort") == 0 || strcmp(how, "shutdown") == 0 ||
                strcmp(how, "timeout") == 0;
  int is_stream = strcmp(step, "stream") == 0;
  if (strcmp(how, "reset") == 0) {
    r.outcome = IMP_RESET;
  } else if (strcmp(how, "dropped") == 0 && !is_stream) {
    r.outcome = IMP_DROP;
  } else if (aborted && !is_stream &&
             (strcmp(step, "hang") == 0 || strcmp(step, "delay") == 0 ||
              strcmp(step, "none") == 0 || r.status == 0)) {
    r.outcome = IMP_HANG;
  } else if (strcmp(step, "none") == 0) {
    rd->lg->skipped++;
    goto done;
  } else if (strcmp(how, "early_close") == 0 || strcmp(step, "truncate") == 0) {
    r.truncated = 1;
    r.early_close = strcmp(how, "early_close") == 0;
    r.at = clamp_whole(get_num(ev, "bytes", 0), 0, 1L << 30);
    if (r.status == 0) r.status = 200;
  } else if (is_stream) {
    r.status = 200;
    r.stream = 1;
    int pieces = 0;
    if ((rc = take_tools(&r, ev, &pieces)) != SIM_OK) goto done;
    /* The frames sent are the text chunks, then the arguments' pieces; a
       stream cut inside the arguments sent its whole text (one chunk). */
    int ntext = chunks - pieces;
    if (ntext < 0) ntext = text && text[0] ? 1 : 0;
    if (r.ntools > 0 && ntext == 0 && text && text[0]) ntext = 1;
    if ((rc = split_chunks(&r, text ? text : "", ntext)) != SIM_OK) goto done;
    if (r.ntools > 0) r.frames = chunks;
    if (strcmp(how, "dropped") == 0) r.cut = IMP_CUT_DROP;
    else if (stalled && aborted) r.cut = IMP_CUT_STALL;
    if (cJSON_IsTrue(get(ev, "error_event"))) {
      r.stream_error = 1;
      r.frames = chunks;
    } else if (r.cut == IMP_CUT_NONE) {
      const cJSON *marker = get(ev, "end_marker"), *fin = get(ev, "finish");
      if (cJSON_IsFalse(fin)) r.no_end = 1;
      else if (cJSON_IsFalse(marker)) r.no_terminator = 1;
    }
    const char *state = get_str(ev, "state");
    if (state != NULL && strcmp(state, "incomplete") == 0) r.finish = IMP_FINISH_LENGTH;
    if (!stalled && chunks > 1 && dur > 0) r.interval_s = floor(dur / (chunks - 1)) / 1000.0;
  } else if (strcmp(step, "garbage") == 0) {
    r.is_garbage = 1;
  } else if (strcmp(step, "chat") == 0 || strcmp(step, "delay") == 0) {
    int pieces;
    if (text != NULL && (r.content = strdup(text)) == NULL) {
      rc = SIM_ENOMEM;
      goto done;
    }
    if ((rc = take_tools(&r, ev, &pieces)) != SIM_OK) goto done;
    const char *state = get_str(ev, "state");
    if (state != NULL && strcmp(state, "incomplete") == 0) r.finish = IMP_FINISH_LENGTH;
  } else if (strcmp(step, "effect") == 0) {
    r.status = 200; /* the ledger's own answer (a 409 conflict included) */
  }
  /* "fail" and the rest: the status, code, type and headers say it all. */
  if (r.outcome == IMP_ANSWER && r.status == 0) r.status = 200;
  if (!r.stream && !r.truncated && r.status < 300 && r.status >= 200 && !r.is_garbage &&
      strcmp(step, "effect") != 0) {
    if (tin >= 0) r.usage_in = (int)clamp_whole(tin, 0, 1000000000L);
    if (tout >= 0) r.usage_out = (int)clamp_whole(tout, 0, 1000000000L);
  } else if (r.stream) {
    if (tin >= 0) r.usage_in = (int)clamp_whole(tin, 0, 1000000000L);
    if (tout >= 0) r.usage_out = (int)clamp_whole(tout, 0, 1000000000L);
  }

  /* An HTTP-date Retry-After. Without retry-after-ms, retry_after_ms is
     what the server meant (retry_after_date); none means the scenario gave
     a raw string, kept as it is. With retry-after-ms too, the delta is
     estimated from the session start: the server rounds the date up and
     the start is cut to the second, so the date is 1 s late on average. */
  double ra_ms = get_num(ev, "retry_after_ms", -1);
  double when;
  const char *ra = imp__resp_get_header(&r, "retry-after");
  if (ra != NULL && sim_http_date_parse(ra, &when) == 0) {
    double sent_s = (rd->start_ms + get_num(ev, "t", a->t)) / 1000.0;
    if (imp__resp_get_header(&r, "retry-after-ms") == NULL) {
      if (ra_ms >= 0) {
        r.has_ra_date = 1;
        r.ra_date_s = ra_ms / 1000.0;
      }
    } else if (rd->start_ms > 0 && when - sent_s > 1 && when - sent_s <= IMP_MAX_DATE_AHEAD) {
      r.has_ra_date = 1;
      r.ra_date_s = floor(when - sent_s - 1 + 0.5);
    }
  }

  imp_attempt at = {0};
  at.t_ms = a->t;
  at.has_t = 1;
  at.line = a->line;
  at.key = a->key;
  at.provider = a->provider;
  at.effect = a->effect;
  at.root = a->path != NULL && strncmp(a->path, "/v1/", 4) == 0;
  char note[160];
  if (r.status && r.outcome == IMP_ANSWER)
    snprintf(note, sizeof note, "id %ld: %.20s %d %.20s", a->id, step, r.status, how);
  else
    snprintf(note, sizeof note, "id %ld: %.20s %.20s", a->id, step, ev ? how : "(no end event)");
  at.note = note;
  rc = imp__add(rd->lg, &at, &r);

done:
  imp__resp_clear(&r);
  return rc;
}

static void rd_clear(trace_rd *rd) {
  for (size_t i = 0; i < rd->n; i++) {
    free(rd->v[i].key);
    free(rd->v[i].provider);
    free(rd->v[i].path);
    free(rd->v[i].action);
  }
  free(rd->v);
  free(rd->slots);
}

/* Reads a fusebox trace. */
int imp__read_trace(imp_log *lg, const char *text, size_t len) {
  trace_rd rd = {0};
  rd.lg = lg;
  imp_lines it = {text, len, 0, 0};
  const char *s;
  size_t n;
  int rc = SIM_OK;
  while (rc == SIM_OK && imp__next_line(&it, &s, &n)) {
    if (n == 0) continue;
    if (n > IMP_MAX_LINE) {
      rc = imp__fail(lg, it.line, "line longer than %zu bytes", (size_t)IMP_MAX_LINE);
      break;
    }
    cJSON *ev = cJSON_ParseWithLength(s, n);
    if (ev == NULL) {
      /* A killed run may leave its last line unfinished. */
      if (it.off >= len && text[len - 1] != '\n') break;
      rc = imp__fail(lg, it.line, "not valid JSON: a trace has one event object per line");
      break;
    }
    const char *kind = get_str(ev, "ev");
    if (kind == NULL) {
      rc = imp__fail(lg, it.line, "not a trace event (no \"ev\" field)");
    } else if (strcmp(kind, "session") == 0) {
      lg->time_scale = get_num(ev, "time_scale", 0);
      const char *start = get_str(ev, "start");
      if (start == NULL || imp__parse_iso8601(start, &rd.start_ms) != 0) rd.start_ms = 0;
    } else if (strcmp(kind, "arrive") == 0) {
      rc = on_arrive(&rd, it.line, ev);
    } else if (strcmp(kind, "effect") == 0) {
      rc = on_effect(&rd, ev);
    } else if (strcmp(kind, "end") == 0) {
      const cJSON *id = get(ev, "id");
      arrival *a = cJSON_IsNumber(id) ? find(&rd, ID(id->valuedouble)) : NULL;
      if (a == NULL)
        rc = imp__fail(lg, it.line, "end of arrival %ld, which never arrived",
                       cJSON_IsNumber(id) ? ID(id->valuedouble) : -1L);
      else if (a->ended)
        rc = imp__fail(lg, it.line, "arrival %ld ends twice", a->id);
      else
        rc = add_attempt(&rd, a, ev, it.line);
    }
    cJSON_Delete(ev);
  }
  for (size_t i = 0; rc == SIM_OK && i < rd.n; i++)
    if (!rd.v[i].ended) rc = add_attempt(&rd, &rd.v[i], NULL, rd.v[i].line);
  rd_clear(&rd);
  return rc;
}
