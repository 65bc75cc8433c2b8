/*
 * import_step.c - one attempt of an imported log written as one step of Lua text
 * (imp__add): the status, headers, body, stream, cut or drop it had.
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

/* ============================================================ steps */

/* A header that can go into a step's headers table. */
static int header_ok(const char *name, const char *value) {
  if (imp__header_dropped(name) || name[0] == '\0') return 0;
  for (const char *p = name; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (!isalnum(c) && strchr("!#$%&'*+-.^_`|~", c) == NULL) return 0;
  }
  size_t n = strlen(value);
  return n <= IMP_MAX_HEADER_VALUE && strpbrk(value, "\r\n") == NULL;
}

static int cmp_str_idx(const void *a, const void *b) {
  const char *const *x = a, *const *y = b;
  return strcmp(*x, *y);
}

/* Appends ", headers = {...}" with every header that may be written, except
   the names in skip (NULL-terminated). */
static void put_headers(imp_buf *b, const imp_resp *r, const char *const *skip) {
  const char *names[4 * IMP_MAX_HEADERS];
  int n = 0;
  for (int i = 0; i < r->nh && n < (int)(sizeof names / sizeof names[0]); i++) {
    int skipped = 0;
    for (int k = 0; skip && skip[k]; k++)
      if (strcmp(r->hname[i], skip[k]) == 0) skipped = 1;
    if (!skipped && header_ok(r->hname[i], r->hvalue[i])) names[n++] = r->hname[i];
  }
  if (n == 0) return;
  qsort(names, (size_t)n, sizeof names[0], cmp_str_idx);
  if (n > IMP_MAX_HEADERS) n = IMP_MAX_HEADERS;
  imp__buf_puts(b, ", headers = { ");
  for (int i = 0; i < n; i++) {
    const char *raw = imp__resp_get_header(r, names[i]);
    char *v = imp__scrub(raw, strlen(raw)); /* a key inside any other header */
    if (v == NULL) {
      b->nomem = 1;
      return;
    }
    imp__buf_puts(b, i ? ", [" : "[");
    imp__lua_string(b, names[i], strlen(names[i]));
    imp__buf_puts(b, "] = ");
    imp__lua_string(b, v, strlen(v));
    free(v);
  }
  imp__buf_puts(b, " }");
}

/* Appends `, key = "value"` for an optional string, scrubbed. */
static void put_field(imp_buf *b, const char *key, const char *v) {
  if (v == NULL) return;
  size_t n = strlen(v);
  if (n > IMP_MAX_TEXT) n = IMP_MAX_TEXT;
  char *clean = imp__scrub(v, n);
  if (clean == NULL) {
    b->nomem = 1;
    return;
  }
  imp__buf_printf(b, ", %s = ", key);
  imp__lua_string(b, clean, strlen(clean));
  free(clean);
}

static void put_usage(imp_buf *b, const imp_resp *r) {
  if (r->usage_in < 0 && r->usage_out < 0) return;
  imp__buf_puts(b, ", usage = { ");
  if (r->usage_in >= 0) imp__buf_printf(b, "input = %d", r->usage_in);
  if (r->usage_in >= 0 && r->usage_out >= 0) imp__buf_puts(b, ", ");
  if (r->usage_out >= 0) imp__buf_printf(b, "output = %d", r->usage_out);
  imp__buf_puts(b, " }");
}

/* Appends ", tool_calls = { { id =, name =, arguments = }, ... }": each
   call as the answer carried it (arguments as their exact JSON text),
   every string through the redaction rule. */
static void put_tools(imp_buf *b, const imp_resp *r) {
  int n = 0;
  for (int i = 0; i < r->ntools; i++) n += r->tools[i].name != NULL && r->tools[i].name[0];
  if (n == 0) return;
  imp__buf_puts(b, ", tool_calls = { ");
  int first = 1;
  for (int i = 0; i < r->ntools; i++) {
    const imp_tool *t = &r->tools[i];
    if (t->name == NULL || t->name[0] == '\0') continue; /* a step needs a name */
    imp__buf_puts(b, first ? "{ " : ", { ");
    first = 0;
    size_t mark = b->len;
    if (t->id != NULL) put_field(b, "id", t->id);
    put_field(b, "name", t->name);
    if (t->args != NULL && t->args[0] != '\0') put_field(b, "arguments", t->args);
    if (!b->over && !b->nomem && b->len >= mark + 2) { /* drop the first ", " */
      memmove(b->p + mark, b->p + mark + 2, b->len - mark - 2);
      b->len -= 2;
      b->p[b->len] = '\0';
    }
    imp__buf_puts(b, " }");
  }
  imp__buf_puts(b, " }");
}

/* Appends the finish reason a step can say (incomplete = ...). */
static void put_finish(imp_buf *b, const imp_resp *r) {
  if (r->finish == IMP_FINISH_LENGTH) imp__buf_puts(b, ", incomplete = \"max_output_tokens\"");
  else if (r->finish == IMP_FINISH_FILTER) imp__buf_puts(b, ", incomplete = \"content_filter\"");
}

/* A step opener "kind { " followed by fields that each begin with ", ":
   the first separator is dropped. */
typedef struct step_w {
  imp_buf *b;
  size_t mark; /* where the fields start */
} step_w;

static void step_open(step_w *w, imp_buf *b, const char *kind) {
  w->b = b;
  if (kind[0] != '\0') imp__buf_printf(b, "%s { ", kind);
  else imp__buf_puts(b, "{ ");
  w->mark = b->len;
}

static void step_close(step_w *w) {
  imp_buf *b = w->b;
  if (b->over || b->nomem) return;
  if (b->len >= w->mark + 2 && memcmp(b->p + w->mark, ", ", 2) == 0) {
    memmove(b->p + w->mark, b->p + w->mark + 2, b->len - w->mark - 2);
    b->len -= 2;
    b->p[b->len] = '\0';
  }
  if (b->len == w->mark) { /* no fields: "kind {}" */
    b->len--;
    b->p[b->len] = '\0';
    imp__buf_puts(b, "}");
  } else {
    imp__buf_puts(b, " }");
  }
}

/* A filler answer long enough to be cut at `at` bytes. */
static char *filler(long at) {
  static const char unit[] = "The original answer was not recorded. ";
  size_t want = at < 16 ? 16 : (size_t)at;
  if (want > IMP_MAX_TEXT) want = IMP_MAX_TEXT;
  char *s = malloc(want + 1);
  if (s == NULL) return NULL;
  for (size_t i = 0; i < want; i++) s[i] = unit[i % (sizeof unit - 1)];
  s[want] = '\0';
  return s;
}

/* fail{...} with the Retry-After fields (when ra is 1). */
static void put_fail(imp_buf *b, const imp_resp *r, int ra) {
  step_w w;
  step_open(&w, b, "fail");
  imp__buf_printf(b, ", status = %d", r->status);
  put_field(b, "code", r->code);
  put_field(b, "type", r->type);
  put_field(b, "message", r->message);
  const char *skip[3] = {NULL, NULL, NULL};
  int ns = 0;
  if (ra) {
    const char *ram = imp__resp_get_header(r, "retry-after-ms");
    const char *rav = imp__resp_get_header(r, "retry-after");
    if (ram != NULL && imp__plain_number(ram)) {
      imp__buf_printf(b, ", retry_after_ms = %s", ram);
      skip[ns++] = "retry-after-ms";
    }
    if (rav != NULL) {
      if (r->has_ra_date) {
        imp__buf_puts(b, ", retry_after_date = ");
        imp__lua_number(b, r->ra_date_s);
        skip[ns++] = "retry-after";
      } else if (imp__plain_number(rav)) {
        imp__buf_printf(b, ", retry_after = %s", rav);
        skip[ns++] = "retry-after";
      } else if (header_ok("retry-after", rav)) {
        imp__buf_puts(b, ", retry_after = ");
        imp__lua_string(b, rav, strlen(rav));
        skip[ns++] = "retry-after";
      }
    }
    put_headers(b, r, skip);
  }
  step_close(&w);
}

/* The step without its delay: what the provider answered. */
static void put_core(imp_buf *b, const imp_resp *r) {
  step_w w;
  if (r->outcome == IMP_HANG) {
    imp__buf_puts(b, "hang {}");
    return;
  }
  if (r->outcome == IMP_DROP) {
    imp__buf_puts(b, "drop {}");
    return;
  }
  if (r->outcome == IMP_RESET) {
    imp__buf_puts(b, "reset {}");
    return;
  }
  int ok = r->status >= 200 && r->status < 300;
  if (r->truncated) {
    step_open(&w, b, "truncate");
    imp__buf_puts(b, ", ");
    if (!ok) {
      put_fail(b, r, 0);
    } else {
      step_w in;
      step_open(&in, b, "chat");
      char *fill = r->content ? NULL : filler(r->at);
      if (r->content == NULL && fill == NULL) b->nomem = 1;
      put_field(b, "content", r->content ? r->content : fill);
      free(fill);
      put_field(b, "model", r->model);
      put_usage(b, r);
      put_tools(b, r);
      put_finish(b, r);
      step_close(&in);
    }
    imp__buf_printf(b, ", at = %ld", r->at);
    if (r->early_close) imp__buf_puts(b, ", mode = \"early-close\"");
    put_headers(b, r, NULL);
    step_close(&w);
    return;
  }
  if (!ok) {
    put_fail(b, r, 1);
    return;
  }
  if (r->garbage != NULL || r->is_garbage) {
    step_open(&w, b, "garbage");
    put_field(b, "body", r->garbage);
    put_headers(b, r, NULL);
    step_close(&w);
    return;
  }
  if (r->stream) {
    step_open(&w, b, "stream");
    if (r->nchunks > 0) {
      imp__buf_puts(b, ", chunks = { ");
      for (int i = 0; i < r->nchunks; i++) {
        char *clean = imp__scrub(r->chunks[i], strlen(r->chunks[i]));
        if (clean == NULL) {
          b->nomem = 1;
          break;
        }
        if (i) imp__buf_puts(b, ", ");
        imp__lua_string(b, clean, strlen(clean));
        free(clean);
      }
      imp__buf_puts(b, " }");
    } else if (r->content != NULL || r->ntools == 0) {
      put_field(b, "content", r->content);
    }
    put_tools(b, r);
    if (r->interval_s > 0.0005) {
      imp__buf_puts(b, ", interval = ");
      imp__lua_number(b, r->interval_s);
    }
    int frames = imp__resp_frames(r);
    if (r->cut == IMP_CUT_DROP) imp__buf_printf(b, ", drop_after = %d", frames);
    if (r->cut == IMP_CUT_STALL) imp__buf_printf(b, ", stall_after = %d", frames);
    if (r->stream_error) {
      step_w e;
      imp__buf_printf(b, ", error_after = %d, error = ", frames);
      step_open(&e, b, "");
      put_field(b, "type", r->type);
      put_field(b, "code", r->code);
      put_field(b, "message", r->message);
      step_close(&e);
    } else if (r->no_end && r->cut == IMP_CUT_NONE) {
      imp__buf_puts(b, ", no_end = true");
    } else if (r->no_terminator && r->cut == IMP_CUT_NONE) {
      imp__buf_puts(b, ", no_terminator = true");
    }
    put_field(b, "model", r->model);
    put_usage(b, r);
    put_finish(b, r);
    static const char *const own[] = {"cache-control", NULL}; /* the server sends it */
    put_headers(b, r, own);
    step_close(&w);
    return;
  }
  step_open(&w, b, "chat");
  put_field(b, "content", r->content);
  put_field(b, "model", r->model);
  put_usage(b, r);
  put_tools(b, r);
  put_finish(b, r);
  put_headers(b, r, NULL);
  step_close(&w);
}

/* Writes the whole step of r: the answer, its delay, its effect. */
static void put_step(imp_buf *b, const imp_resp *r) {
  int delayed = r->delay_ms >= 1.0 && r->outcome != IMP_HANG;
  if (delayed) {
    imp__buf_puts(b, "delay { ");
    imp__lua_number(b, r->delay_ms / 1000.0);
    imp__buf_puts(b, ", ");
  }
  if (r->effect) {
    imp__buf_printf(b, "effect { apply = %s", r->effect_apply ? "true" : "false");
    int plain_ok = r->outcome == IMP_ANSWER && r->status >= 200 && r->status < 300 &&
                   !r->truncated && r->garbage == NULL && !r->is_garbage;
    if (r->outcome == IMP_HANG) imp__buf_puts(b, ", respond = \"hang\"");
    else if (r->outcome == IMP_DROP) imp__buf_puts(b, ", respond = \"drop\"");
    else if (r->outcome == IMP_RESET) imp__buf_puts(b, ", respond = \"reset\"");
    else if (!plain_ok) {
      imp__buf_puts(b, ", respond = ");
      put_core(b, r);
    }
    imp__buf_puts(b, " }");
  } else {
    put_core(b, r);
  }
  if (delayed) imp__buf_puts(b, " }");
}

static char *dup_opt(const char *s, int *nomem) {
  if (s == NULL) return NULL;
  char *d = strdup(s);
  if (d == NULL) *nomem = 1;
  return d;
}

/* Notes the distinct tool calls of r (name and id) in lg->ncalls; at most
   64 KiB of them are told apart, the rest count as new. */
static int note_calls(imp_log *lg, const imp_resp *r) {
  for (int i = 0; i < r->ntools; i++) {
    const imp_tool *t = &r->tools[i];
    if (t->name == NULL || t->name[0] == '\0') continue;
    char one[300];
    int n = snprintf(one, sizeof one, "\n%.140s\t%.140s\n", t->name, t->id ? t->id : "");
    if (lg->call_ids != NULL && strstr(lg->call_ids, one) != NULL) continue;
    lg->ncalls++;
    if (lg->call_ids_len + (size_t)n > IMP_MAX_TEXT) continue;
    char *p = realloc(lg->call_ids, lg->call_ids_len + (size_t)n + 1);
    if (p == NULL) return SIM_ENOMEM;
    memcpy(p + lg->call_ids_len, one, (size_t)n + 1);
    lg->call_ids = p;
    lg->call_ids_len += (size_t)n - 1; /* the next one shares this '\n' */
  }
  return SIM_OK;
}

/* Renders r and appends the attempt. */
int imp__add(imp_log *lg, const imp_attempt *a, const imp_resp *r) {
  if (lg->n >= IMP_MAX_ATTEMPTS)
    return imp__fail(lg, a->line, "more than %d attempts: import a shorter log",
                     IMP_MAX_ATTEMPTS);
  if (lg->n == lg->cap) {
    size_t cap = lg->cap ? lg->cap * 2 : 64;
    imp_attempt *v = realloc(lg->v, cap * sizeof *v);
    if (v == NULL) return SIM_ENOMEM;
    lg->v = v;
    lg->cap = cap;
  }
  if (note_calls(lg, r) != SIM_OK) return SIM_ENOMEM;
  imp_buf b;
  imp__buf_init(&b, IMP_MAX_OUTPUT);
  imp_resp view = *r; /* shallow: only read */
  if (lg->raw_dates) view.has_ra_date = 0;
  /* A status a scenario cannot send (a 1xx, or outside 200..599) left the
     client with no usable answer: replay it as the connection closing, as
     `record` notes it, so the scenario loads. */
  if (view.outcome == IMP_ANSWER && (view.status < 200 || view.status > 599))
    view.outcome = IMP_DROP;
  put_step(&b, &view);
  if (b.over) {
    imp__buf_free(&b);
    return imp__fail(lg, a->line, "this attempt alone would exceed the %zu-byte scenario limit",
                     (size_t)IMP_MAX_OUTPUT);
  }
  if (b.nomem) {
    imp__buf_free(&b);
    return SIM_ENOMEM;
  }
  imp_attempt *d = &lg->v[lg->n];
  *d = *a;
  d->status = view.outcome == IMP_ANSWER ? view.status : 0;
  d->dropped = view.outcome == IMP_DROP;
  d->quota = r->status == 429 && ((r->code && strstr(r->code, "insufficient_quota")) ||
                                  (r->type && strstr(r->type, "insufficient_quota")));
  d->tools = 0;
  for (int i = 0; i < r->ntools; i++) d->tools |= r->tools[i].name && r->tools[i].name[0];
  d->has_ra = imp__resp_get_header(r, "retry-after") != NULL ||
              imp__resp_get_header(r, "retry-after-ms") != NULL;
  int nomem = 0;
  d->key = dup_opt(a->key, &nomem);
  d->provider = dup_opt(a->provider, &nomem);
  if (r->api != NULL && !r->effect) { /* the API of the exchange, in its comment */
    char note[320];
    snprintf(note, sizeof note, "%s%s%s", a->note ? a->note : "", a->note ? ", " : "", r->api);
    d->note = dup_opt(note, &nomem);
  } else {
    d->note = dup_opt(a->note, &nomem);
  }
  d->step = imp__buf_take(&b);
  d->order = (long)lg->n;
  if (d->step == NULL) nomem = 1;
  if (nomem) {
    free(d->key);
    free(d->provider);
    free(d->note);
    free(d->step);
    return SIM_ENOMEM;
  }
  lg->n++;
  return SIM_OK;
}

