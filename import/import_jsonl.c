/*
 * import_jsonl.c - the JSON Lines reader of `fusebox import` (one attempt
 * per line, fields in docs/import.md); bodies are read by import_body.c.
 */
#define _GNU_SOURCE /* strcasestr, timegm */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import/import_int.h"

/* ------------------------------------------------------------ bodies */

static const cJSON *get(const cJSON *o, const char *k) {
  return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* ------------------------------------------------------------ lines */

/* What an "error" string says about an attempt without a full answer. */
typedef enum { E_NONE, E_TIMEOUT, E_RESET, E_CLOSED, E_TRUNCATED, E_OTHER } err_kind;

static err_kind error_kind(const char *s) {
  static const struct {
    const char *name;
    err_kind k;
  } names[] = {
      {"timeout", E_TIMEOUT},   {"timed_out", E_TIMEOUT},  {"timedout", E_TIMEOUT},
      {"etimedout", E_TIMEOUT}, {"hang", E_TIMEOUT},       {"stall", E_TIMEOUT},
      {"stalled", E_TIMEOUT},   {"reset", E_RESET},        {"econnreset", E_RESET},
      {"connection_reset", E_RESET}, {"closed", E_CLOSED}, {"close", E_CLOSED},
      {"drop", E_CLOSED},       {"dropped", E_CLOSED},     {"eof", E_CLOSED},
      {"empty_reply", E_CLOSED}, {"connection_closed", E_CLOSED},
      {"truncated", E_TRUNCATED}, {"early_close", E_TRUNCATED},
      {"early-close", E_TRUNCATED}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(s, names[i].name) == 0) return names[i].k;
  return E_OTHER;
}

/* A time in ms: a number, or an ISO-8601 string (then *epoch is set). */
static int take_time(const cJSON *it, double *ms, int *epoch) {
  if (cJSON_IsNumber(it) && isfinite(it->valuedouble)) {
    *ms = it->valuedouble;
    *epoch = *ms > 1e12; /* epoch milliseconds */
    return 1;
  }
  if (cJSON_IsString(it) && imp__parse_iso8601(it->valuestring, ms) == 0) {
    *epoch = 1;
    return 1;
  }
  return cJSON_IsNull(it) || it == NULL ? 0 : -1;
}

static int take_ms(imp_log *lg, int line, const cJSON *o, const char *name, double *out) {
  const cJSON *it = get(o, name);
  if (it == NULL || cJSON_IsNull(it)) return 0;
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0 ||
      it->valuedouble > 86400000.0 * 7)
    return imp__fail(lg, line, "'%s' must be a number of milliseconds >= 0", name);
  *out = it->valuedouble;
  return 1;
}

/* Reads the "headers" field: an object or a list of {name, value}. */
static int take_headers(imp_log *lg, int line, imp_resp *r, const cJSON *h) {
  if (h == NULL || cJSON_IsNull(h)) return SIM_OK;
  if (!cJSON_IsObject(h) && !cJSON_IsArray(h))
    return imp__fail(lg, line, "'headers' must be an object of name: value");
  const cJSON *it;
  cJSON_ArrayForEach(it, h) {
    const char *name = cJSON_IsObject(h) ? it->string : NULL;
    const cJSON *v = it;
    if (cJSON_IsArray(h)) {
      const cJSON *n = get(it, "name");
      name = cJSON_IsString(n) ? n->valuestring : NULL;
      v = get(it, "value");
    }
    if (name == NULL) return imp__fail(lg, line, "'headers' entries need a name");
    char num[32];
    int rc = SIM_OK;
    if (cJSON_IsString(v)) {
      rc = imp__resp_header(r, name, v->valuestring);
    } else if (cJSON_IsNumber(v)) {
      double d = v->valuedouble;
      if (d == floor(d) && fabs(d) < 1e15) snprintf(num, sizeof num, "%lld", (long long)d);
      else snprintf(num, sizeof num, "%g", d);
      rc = imp__resp_header(r, name, num);
    } else if (cJSON_IsArray(v)) {
      const cJSON *x;
      cJSON_ArrayForEach(x, v) if (cJSON_IsString(x) && rc == SIM_OK) rc =
          imp__resp_header(r, name, x->valuestring);
    } else {
      return imp__fail(lg, line, "header '%.60s' must be a string", name);
    }
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* One line being read (read_line): what it says so far. */
typedef struct line_read {
  imp_log *lg;
  int line;
  const cJSON *o;
  imp_resp r;
  imp_attempt a;
  char *key, *prov, *note; /* owned; imp__add copies them */
  int epoch;               /* 't' was a date-time: Retry-After dates are comparable */
  int skip;                /* a ledger lookup: not an attempt */
  const cJSON *path, *err, *body, *chunks;
  err_kind ek;
  double latency, duration, interval;
  int hl, hd, hi; /* which of the three were given */
} line_read;

/* Where and when: the time, the path (an effect, or a ledger lookup to
   skip), the logical request's key and the provider. */
static int read_where(line_read *L) {
  imp_log *lg = L->lg;
  const cJSON *o = L->o;
  const cJSON *t = get(o, "t");
  if (t == NULL) t = get(o, "time");
  int ht = take_time(t, &L->a.t_ms, &L->epoch);
  if (ht < 0) return imp__fail(lg, L->line, "'t' must be milliseconds or an ISO-8601 date-time");
  L->a.has_t = ht;
  L->path = get(o, "path");
  if (!cJSON_IsString(L->path)) L->path = get(o, "url");
  const cJSON *method = get(o, "method");
  if (cJSON_IsString(L->path)) L->r.api = imp__api_of_path(L->path->valuestring);
  if (cJSON_IsString(L->path) && strstr(L->path->valuestring, "/effects/") != NULL) {
    if (cJSON_IsString(method) && strcasecmp(method->valuestring, "GET") == 0) {
      lg->skipped++; /* a ledger lookup: the server answers it itself */
      L->skip = 1;
      return SIM_OK;
    }
    L->a.effect = L->r.effect = 1;
  }
  const cJSON *k = get(o, "key");
  if (k == NULL || cJSON_IsNull(k)) k = get(o, "request");
  int rc = imp__take_str(&L->key, k);
  if (rc != SIM_OK) return rc;
  if (k != NULL && !cJSON_IsNull(k) && L->key == NULL)
    return imp__fail(lg, L->line, "'key' must be a string or a number");
  const cJSON *p = get(o, "provider");
  if (p != NULL && !cJSON_IsNull(p)) {
    if (!cJSON_IsString(p)) return imp__fail(lg, L->line, "'provider' must be a string");
    L->prov = strdup(p->valuestring);
    if (L->prov == NULL) return SIM_ENOMEM;
    L->a.root = strcmp(L->prov, "primary") == 0;
  }
  return SIM_OK;
}

/* What came back: the status, the three times and the headers. */
static int read_status(line_read *L) {
  imp_log *lg = L->lg;
  const cJSON *st = get(L->o, "status");
  double status = 0;
  if (cJSON_IsNumber(st)) status = st->valuedouble;
  else if (cJSON_IsString(st) && st->valuestring[0]) status = strtod(st->valuestring, NULL);
  else if (st != NULL && !cJSON_IsNull(st)) status = -1;
  if (status != 0 && (status != floor(status) || status < 200 || status > 599))
    return imp__fail(lg, L->line, "'status' must be an HTTP status from 200 to 599, or 0 for "
                                  "no response");
  L->r.status = (int)status;
  if ((L->hl = take_ms(lg, L->line, L->o, "latency_ms", &L->latency)) < 0 ||
      (L->hd = take_ms(lg, L->line, L->o, "duration_ms", &L->duration)) < 0 ||
      (L->hi = take_ms(lg, L->line, L->o, "interval_ms", &L->interval)) < 0)
    return SIM_EINVAL;
  return take_headers(lg, L->line, &L->r, get(L->o, "headers"));
}

/* The "error" field: its kind, refused when it cannot go with the status. */
static int read_error(line_read *L) {
  imp_log *lg = L->lg;
  const cJSON *err = L->err = get(L->o, "error");
  L->ek = E_NONE;
  if (cJSON_IsString(err)) L->ek = error_kind(err->valuestring);
  else if (err != NULL && !cJSON_IsNull(err) && !cJSON_IsObject(err))
    return imp__fail(lg, L->line, "'error' must be a string such as \"timeout\", \"reset\" or "
                                  "\"closed\"");
  if (L->ek == E_OTHER && L->r.status == 0)
    return imp__fail(lg, L->line, "unknown error '%.40s' for an attempt without a status: use "
                                  "\"timeout\", \"reset\" or \"closed\"", err->valuestring);
  if (L->ek == E_OTHER && L->r.status < 300)
    return imp__fail(lg, L->line, "unknown error '%.40s' with status %d: use \"closed\", "
                                  "\"reset\", \"timeout\" or \"truncated\"",
                     err->valuestring, L->r.status);
  return SIM_OK;
}

/* The "chunks" list, replacing any chunks the body gave. */
static int read_chunks(line_read *L) {
  imp_resp *r = &L->r;
  for (int i = r->nchunks - 1; i >= 0; i--) free(r->chunks[i]);
  r->nchunks = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, L->chunks) {
    if (!cJSON_IsString(c)) return imp__fail(L->lg, L->line, "'chunks' must be a list of strings");
    int rc = imp__resp_chunk(r, c->valuestring, strlen(c->valuestring));
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}

/* The answer: streamed or not, its body, the error object, code, type,
   message, content and chunks. */
static int read_answer(line_read *L) {
  imp_resp *r = &L->r;
  const cJSON *o = L->o;
  const cJSON *stream = get(o, "stream");
  L->chunks = get(o, "chunks");
  if (r->status >= 200 && r->status < 300 && (cJSON_IsTrue(stream) || cJSON_IsArray(L->chunks)))
    r->stream = 1;
  int rc = SIM_OK;
  const cJSON *body = L->body = get(o, "body");
  if (cJSON_IsString(body)) {
    const char *ct = imp__resp_get_header(r, "content-type");
    int sse = r->stream || (ct && strcasestr(ct, "text/event-stream")) ||
              (cJSON_IsString(L->path) && strstr(L->path->valuestring, "alt=sse"));
    rc = imp__resp_body(r, body->valuestring, strlen(body->valuestring), NULL, sse);
  } else if (cJSON_IsObject(body)) {
    rc = imp__resp_body(r, NULL, 0, body, 0);
  }
  if (rc != SIM_OK) return rc;
  if (cJSON_IsObject(L->err) && r->status >= 300) imp__resp_error_json(r, o, &rc);
  if (L->ek == E_OTHER && rc == SIM_OK) rc = imp__take_str(&r->message, L->err);
  const char *fields[] = {"code", "type", "message"};
  char **dst[] = {&r->code, &r->type, &r->message};
  for (int i = 0; i < 3 && rc == SIM_OK; i++) rc = imp__take_str(dst[i], get(o, fields[i]));
  const cJSON *content = get(o, "content");
  if (content == NULL) content = get(o, "text");
  if (rc == SIM_OK && cJSON_IsString(content)) rc = imp__take_str(&r->content, content);
  if (rc == SIM_OK && cJSON_IsArray(L->chunks)) rc = read_chunks(L);
  return rc;
}

/* How it ended: no answer, a cut stream or a truncated body; the delay,
   the stream's pace and a Retry-After date made relative. */
static void read_ending(line_read *L) {
  imp_resp *r = &L->r;
  err_kind ek = L->ek;
  if (r->status == 0) {
    r->outcome = ek == E_TIMEOUT ? IMP_HANG : ek == E_RESET ? IMP_RESET : IMP_DROP;
  } else if (r->stream && ek != E_NONE) {
    r->cut = ek == E_TIMEOUT ? IMP_CUT_STALL : IMP_CUT_DROP;
  } else if (ek == E_TRUNCATED || (r->status < 300 && (ek == E_CLOSED || ek == E_RESET))) {
    const cJSON *bytes = get(L->o, "bytes");
    r->truncated = 1;
    r->early_close = 1;
    r->at = cJSON_IsNumber(bytes) && bytes->valuedouble >= 0 && bytes->valuedouble < 1e9
                ? (long)bytes->valuedouble
                : cJSON_IsString(L->body) ? (long)strlen(L->body->valuestring) : 0;
  }
  if (L->hl && L->latency >= IMP_MIN_DELAY_MS) r->delay_ms = L->latency;
  int frames = imp__resp_frames(r); /* the gaps are between every frame */
  if (r->stream && frames > 1) {
    if (L->hi) r->interval_s = L->interval / 1000.0;
    else if (L->hd && L->duration > L->latency)
      r->interval_s = (L->duration - L->latency) / 1000.0 / (frames - 1);
  }
  if (r->status >= 300) imp__resp_ra_date(r, L->epoch && L->a.has_t ? L->a.t_ms + L->latency : 0);
}

/* The attempt's comment: its status (or how it failed) and request id. */
static int make_note(line_read *L) {
  const imp_resp *r = &L->r;
  const cJSON *rid = get(L->o, "request_id");
  const char *ridv = cJSON_IsString(rid) ? rid->valuestring : NULL;
  if (ridv == NULL) ridv = imp__resp_get_header(r, "x-request-id");
  if (ridv == NULL) ridv = imp__resp_get_header(r, "request-id");
  char what[32], buf[200];
  if (r->status) snprintf(what, sizeof what, "%d", r->status);
  else snprintf(what, sizeof what, "no response (%s)",
                L->ek == E_TIMEOUT ? "timeout" : L->ek == E_RESET ? "reset" : "closed");
  snprintf(buf, sizeof buf, "%s%s%.120s", what, ridv ? ", request " : "", ridv ? ridv : "");
  L->note = strdup(buf);
  return L->note ? SIM_OK : SIM_ENOMEM;
}

/* Reads one line: an object describing one attempt. */
static int read_line(imp_log *lg, int line, const cJSON *o) {
  line_read L = {.lg = lg, .line = line, .o = o};
  imp__resp_init(&L.r);
  L.a.line = line;
  L.a.root = 1;
  int rc = read_where(&L);
  if (rc == SIM_OK && !L.skip) {
    if (rc == SIM_OK) rc = read_status(&L);
    if (rc == SIM_OK) rc = read_error(&L);
    if (rc == SIM_OK) rc = read_answer(&L);
    if (rc == SIM_OK) {
      read_ending(&L);
      rc = make_note(&L);
    }
    if (rc == SIM_OK) {
      L.a.key = L.key;
      L.a.provider = L.prov;
      L.a.note = L.note;
      rc = imp__add(lg, &L.a, &L.r);
    }
  }
  free(L.key);
  free(L.prov);
  free(L.note);
  imp__resp_clear(&L.r);
  return rc;
}

/* The fields read_line reads; docs/import.md lists them. */
static const char *const KNOWN[] = {
    "t", "time", "path", "url", "method", "key", "request", "provider", "status",
    "latency_ms", "duration_ms", "interval_ms", "headers", "error", "stream", "chunks",
    "body", "code", "type", "message", "content", "text", "bytes", "request_id", NULL};

static int known_field(const char *name) {
  for (int i = 0; KNOWN[i]; i++)
    if (strcmp(KNOWN[i], name) == 0) return 1;
  return 0;
}

/*
 * Checks a --map ("ours=theirs,..."): every "ours" must be a field we read.
 * Returns SIM_OK or SIM_EINVAL with the message in lg->err.
 */
static int check_map(imp_log *lg) {
  const char *p = lg->map;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    const char *eq = memchr(p, '=', n);
    char ours[64];
    size_t on = eq ? (size_t)(eq - p) : 0;
    if (eq == NULL || on == 0 || on >= sizeof ours || eq + 1 == p + n)
      return imp__fail(lg, 0, "--map takes ours=theirs pairs separated by commas "
                              "(e.g. status=status_code), not '%.*s'", (int)(n > 60 ? 60 : n), p);
    memcpy(ours, p, on);
    ours[on] = '\0';
    if (!known_field(ours))
      return imp__fail(lg, 0, "--map: '%s' is not a field fusebox reads (see docs/import.md)",
                       ours);
    p = comma ? comma + 1 : p + n;
  }
  return SIM_OK;
}

/* Renames the team's own field names in o to ours, as --map says. */
static void apply_map(const imp_log *lg, cJSON *o) {
  const char *p = lg->map;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    size_t n = comma ? (size_t)(comma - p) : strlen(p);
    const char *eq = memchr(p, '=', n);
    char ours[64], theirs[128];
    snprintf(ours, sizeof ours, "%.*s", (int)(eq - p), p);
    snprintf(theirs, sizeof theirs, "%.*s", (int)(p + n - eq - 1), eq + 1);
    if (get(o, ours) == NULL) {
      cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(o, theirs);
      if (v != NULL) cJSON_AddItemToObject(o, ours, v);
    }
    p = comma ? comma + 1 : p + n;
  }
}

/* Notes the fields of o nobody reads (distinct, as many as fit). */
static void note_unknown(imp_log *lg, const cJSON *o) {
  const cJSON *f;
  cJSON_ArrayForEach(f, o) {
    if (f->string == NULL || known_field(f->string)) continue;
    char name[64];
    imp_buf b;
    imp__buf_init(&b, 200);
    imp__lua_comment(&b, f->string, 40); /* printable */
    char *pr = imp__buf_take(&b);
    /* An empty field name is listed as "" (an empty needle would never end
       the duplicate search below). */
    snprintf(name, sizeof name, "%s", pr && pr[0] ? pr : pr ? "\"\"" : "?");
    free(pr);
    imp__buf_free(&b);
    size_t have = strlen(lg->unknown), nl = strlen(name);
    int dup = 0;
    for (const char *q = lg->unknown; (q = strstr(q, name)) != NULL; q += nl)
      if ((q == lg->unknown || q[-1] == ',') && (q[nl] == ',' || q[nl] == '\0')) dup = 1;
    if (dup || have + nl + 2 >= sizeof lg->unknown) continue;
    snprintf(lg->unknown + have, sizeof lg->unknown - have, "%s%s", have ? "," : "", name);
  }
}

/* Reads JSON Lines: one attempt object per line; blank lines are skipped. */
int imp__read_jsonl(imp_log *lg, const char *text, size_t len) {
  imp_lines it = {text, len, 0, 0};
  const char *s;
  size_t n;
  if (check_map(lg) != SIM_OK) return SIM_EINVAL;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) it.off = 3;
  while (imp__next_line(&it, &s, &n)) {
    size_t i = 0;
    while (i < n && isspace((unsigned char)s[i])) i++;
    if (i == n) continue;
    if (n > IMP_MAX_LINE)
      return imp__fail(lg, it.line, "line longer than %zu bytes", (size_t)IMP_MAX_LINE);
    const char *end = NULL;
    cJSON *o = cJSON_ParseWithLengthOpts(s, n, &end, 0);
    if (o != NULL && end != NULL) {
      while (end < s + n && isspace((unsigned char)*end)) end++;
      if (end < s + n) {
        cJSON_Delete(o);
        return imp__fail(lg, it.line, "unexpected text after the JSON object (column %ld): "
                                      "one attempt per line", (long)(end - s) + 1);
      }
    }
    if (o == NULL) {
      long col = end ? (long)(end - s) + 1 : 1;
      const char *ep = cJSON_GetErrorPtr();
      if (ep >= s && ep <= s + n) col = (long)(ep - s) + 1;
      return imp__fail(lg, it.line, "not valid JSON (near column %ld)%s", col,
                       it.line == 1 ? ": expected JSON Lines (one attempt object per line), "
                                      "a HAR file or a fusebox trace"
                                    : "");
    }
    int rc;
    if (!cJSON_IsObject(o)) rc = imp__fail(lg, it.line, "expected an object, one attempt per line");
    else {
      apply_map(lg, o);
      note_unknown(lg, o);
      rc = read_line(lg, it.line, o);
    }
    cJSON_Delete(o);
    if (rc != SIM_OK) return rc;
  }
  return SIM_OK;
}
