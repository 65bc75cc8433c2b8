/*
 * import.c - `fusebox import`: a log of attempts turned into a scenario
 * that replays it. This file holds the public entry points, format
 * detection, the writing of steps as Lua text and the assembly of the
 * scenario; the readers of each format are in import_jsonl.c (JSON Lines,
 * and the response bodies every format shares), import_har.c and
 * import_trace.c.
 *
 * What the output promises: every string is a valid Lua literal whatever
 * the input holds; credentials never appear (the header names and the key
 * patterns imp__header_dropped / imp__scrub know); the file is at most
 * SIM_IMPORT_MAX_OUTPUT bytes, the size a scenario file may have.
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

#include "sim/import_int.h"

/* ============================================================ buffers */

/* Starts an empty buffer that may hold up to max bytes. */
void imp__buf_init(imp_buf *b, size_t max) {
  memset(b, 0, sizeof *b);
  b->max = max;
}

/* Releases the buffer's text; b can be used again after imp__buf_init. */
void imp__buf_free(imp_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* Takes the text out of b (an empty string when nothing was written); the
   caller owns it. NULL when out of memory. */
char *imp__buf_take(imp_buf *b) {
  char *p = b->p;
  if (p == NULL) p = calloc(1, 1);
  b->p = NULL;
  b->len = b->cap = 0;
  return p;
}

/* Appends n bytes; over the maximum or out of memory it sets b->over or
   b->nomem and appends nothing more. */
void imp__buf_put(imp_buf *b, const char *s, size_t n) {
  if (b->over || b->nomem) return;
  if (b->len + n > b->max) {
    b->over = 1;
    return;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
      b->nomem = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

/* Appends a NUL-terminated string. */
void imp__buf_puts(imp_buf *b, const char *s) { imp__buf_put(b, s, strlen(s)); }

/* Appends printf-formatted text. */
void imp__buf_printf(imp_buf *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    imp__buf_put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (big == NULL) {
    b->nomem = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  imp__buf_put(b, big, (size_t)n);
  free(big);
}

/* The length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c >= 0xE0 && c <= 0xEF) len = 3;
  else if (c >= 0xF0 && c <= 0xF4) len = 4;
  else return 0;
  if (len > n) return 0;
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F; /* no UTF-16 surrogates */
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF) return 0;
  return len;
}

/* Appends s as a double-quoted Lua string literal. */
void imp__lua_string(imp_buf *b, const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  imp__buf_put(b, "\"", 1);
  size_t run = 0; /* bytes copied as they are, pending */
  for (size_t i = 0; i < n;) {
    unsigned char c = u[i];
    const char *esc = NULL;
    char num[8];
    size_t take = 1;
    if (c == '"') esc = "\\\"";
    else if (c == '\\') esc = "\\\\";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c < 0x20 || c == 0x7F) {
      snprintf(num, sizeof num, "\\%03u", c);
      esc = num;
    } else if (c >= 0x80) {
      take = utf8_len(u + i, n - i);
      if (take == 0) {
        snprintf(num, sizeof num, "\\%03u", c);
        esc = num;
        take = 1;
      }
    }
    if (esc != NULL) {
      imp__buf_put(b, s + i - run, run);
      run = 0;
      imp__buf_puts(b, esc);
    } else {
      run += take;
    }
    i += take;
  }
  imp__buf_put(b, s + n - run, run);
  imp__buf_put(b, "\"", 1);
}

/* Appends s for a line comment: printable and UTF-8 only, at most max. */
void imp__lua_comment(imp_buf *b, const char *s, size_t max) {
  const unsigned char *u = (const unsigned char *)s;
  size_t n = strlen(s);
  size_t out = 0;
  for (size_t i = 0; i < n && out < max;) {
    unsigned char c = u[i];
    size_t take = 1;
    if (c >= 0x80) take = utf8_len(u + i, n - i);
    if (c < 0x20 || c == 0x7F || take == 0) {
      imp__buf_put(b, "?", 1);
      take = 1;
    } else {
      imp__buf_put(b, s + i, take);
    }
    i += take;
    out += take;
  }
  if (n > max) imp__buf_puts(b, "...");
}

/* Appends v with at most 3 decimals and no trailing zeros. */
void imp__lua_number(imp_buf *b, double v) {
  char tmp[64];
  if (!isfinite(v)) v = 0;
  snprintf(tmp, sizeof tmp, "%.3f", v);
  char *dot = strchr(tmp, '.');
  if (dot != NULL) {
    char *e = tmp + strlen(tmp) - 1;
    while (e > dot && *e == '0') *e-- = '\0';
    if (e == dot) *e = '\0';
  }
  if (strcmp(tmp, "-0") == 0) strcpy(tmp, "0");
  imp__buf_puts(b, tmp);
}

/* ============================================================ helpers */

/* Writes "source:line: message" into lg->err; returns SIM_EINVAL. */
int imp__fail(imp_log *lg, int line, const char *fmt, ...) {
  char msg[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0)
    snprintf(lg->err, SIM_ERRLEN, "%.80s:%d: %s", lg->source, line, msg);
  else
    snprintf(lg->err, SIM_ERRLEN, "%.80s: %s", lg->source, msg);
  return SIM_EINVAL;
}

/* Returns the next line of the text (without "\n" or "\r\n"). */
int imp__next_line(imp_lines *it, const char **s, size_t *n) {
  if (it->off >= it->len) return 0;
  const char *start = it->text + it->off;
  const char *nl = memchr(start, '\n', it->len - it->off);
  size_t len = nl ? (size_t)(nl - start) : it->len - it->off;
  it->off += len + (nl ? 1 : 0);
  it->line++;
  if (len > 0 && start[len - 1] == '\r') len--;
  *s = start;
  *n = len;
  return 1;
}

static int two_digits(const char *s, int *out) {
  if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[1])) return -1;
  *out = (s[0] - '0') * 10 + (s[1] - '0');
  return 0;
}

/* Parses an ISO-8601 date-time into epoch milliseconds. */
int imp__parse_iso8601(const char *s, double *epoch_ms) {
  int Y, M, D, h, m, sec;
  if (strlen(s) < 19) return -1;
  for (int i = 0; i < 4; i++)
    if (!isdigit((unsigned char)s[i])) return -1;
  Y = atoi(s);
  if (s[4] != '-' || two_digits(s + 5, &M) || s[7] != '-' || two_digits(s + 8, &D) ||
      (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || two_digits(s + 11, &h) ||
      s[13] != ':' || two_digits(s + 14, &m) || s[16] != ':' || two_digits(s + 17, &sec))
    return -1;
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60) return -1;
  const char *p = s + 19;
  double frac = 0;
  if (*p == '.' || *p == ',') {
    double scale = 0.1;
    p++;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p)) {
      frac += (*p - '0') * scale;
      scale /= 10;
      p++;
    }
  }
  long off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om = 0;
    int sign = *p == '-' ? -1 : 1;
    if (two_digits(p + 1, &oh)) return -1;
    p += 3;
    if (*p == ':') p++;
    if (isdigit((unsigned char)*p)) {
      if (two_digits(p, &om)) return -1;
      p += 2;
    }
    off = sign * (oh * 3600L + om * 60L);
  }
  if (*p != '\0') return -1;
  struct tm tm = {0};
  tm.tm_year = Y - 1900;
  tm.tm_mon = M - 1;
  tm.tm_mday = D;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  time_t t = timegm(&tm);
  if (t == (time_t)-1) return -1;
  *epoch_ms = ((double)t - (double)off + frac) * 1000.0;
  return 0;
}

/* Parses an IMF-fixdate into epoch seconds. */
int imp__parse_http_date(const char *s, double *epoch_s) {
  static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char wd[4], mon[4];
  int d, y, h, m, sec, used = 0;
  while (isspace((unsigned char)*s)) s++;
  if (sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wd, &d, mon, &y, &h,
             &m, &sec, &used) != 7 || used == 0)
    return -1;
  for (const char *p = s + used; *p; p++)
    if (!isspace((unsigned char)*p)) return -1;
  int mi = -1;
  for (int i = 0; i < 12; i++)
    if (strcasecmp(mon, months[i]) == 0) mi = i;
  if (mi < 0 || d < 1 || d > 31 || h > 23 || m > 59 || sec > 60) return -1;
  struct tm tm = {0};
  tm.tm_year = y - 1900;
  tm.tm_mon = mi;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = m;
  tm.tm_sec = sec;
  time_t t = timegm(&tm);
  if (t == (time_t)-1) return -1;
  *epoch_s = (double)t;
  return 0;
}

/* 1 if s is digits with at most one decimal point, written back by the
   server exactly as it is ("%lld" for integers, "%g" otherwise). */
int imp__plain_number(const char *s) {
  size_t n = strlen(s), digits = 0;
  int dot = 0;
  if (n == 0 || n > 15) return 0;
  for (size_t i = 0; i < n; i++) {
    if (isdigit((unsigned char)s[i])) digits++;
    else if (s[i] == '.' && !dot) dot = 1;
    else return 0;
  }
  if (digits == 0 || s[0] == '.' || s[n - 1] == '.') return 0;
  if (n > 1 && s[0] == '0' && s[1] != '.') return 0;
  double v = strtod(s, NULL);
  char back[32];
  if (v == floor(v)) snprintf(back, sizeof back, "%lld", (long long)v);
  else snprintf(back, sizeof back, "%g", v);
  return strcmp(back, s) == 0;
}

/* 1 if a response header must never be written into a scenario. */
int imp__header_dropped(const char *name) {
  static const char *const drop[] = {
      /* credentials and account identifiers */
      "authorization", "proxy-authorization", "x-api-key", "api-key", "cookie",
      "set-cookie", "set-cookie2", "openai-organization", "anthropic-organization-id",
      "openai-project",
      /* set by the fake server itself, or wrong once the body is replayed */
      "content-length", "transfer-encoding", "connection", "keep-alive",
      "proxy-connection", "upgrade", "te", "trailer", "content-type",
      "content-encoding", "date", "x-request-id", "request-id", NULL};
  for (int i = 0; drop[i] != NULL; i++)
    if (strcasecmp(name, drop[i]) == 0) return 1;
  return strcasestr(name, "api-key") != NULL || strcasestr(name, "secret") != NULL ||
         strcasestr(name, "cookie") != NULL || strcasestr(name, "authorization") != NULL;
}

static int key_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '*' || c == '.';
}

/* Replaces "sk-..." API keys and "Bearer ..." tokens in free text. */
char *imp__scrub(const char *s, size_t n) {
  imp_buf b;
  imp__buf_init(&b, n + 64 + n / 2);
  size_t i = 0;
  while (i < n) {
    size_t skip = 0;
    const char *repl = NULL;
    if (i + 3 <= n && memcmp(s + i, "sk-", 3) == 0 &&
        (i == 0 || !isalnum((unsigned char)s[i - 1]))) {
      size_t j = i + 3;
      while (j < n && key_char(s[j])) j++;
      if (j - i - 3 >= 8) {
        skip = j - i;
        repl = "sk-[redacted]";
      }
    } else if (i + 7 <= n && strncasecmp(s + i, "bearer ", 7) == 0) {
      size_t j = i + 7;
      while (j < n && (key_char(s[j]) || s[j] == '/' || s[j] == '+' || s[j] == '=')) j++;
      if (j - i - 7 >= 8) {
        skip = j - i;
        repl = "Bearer [redacted]";
      }
    }
    if (repl != NULL) {
      imp__buf_puts(&b, repl);
      i += skip;
    } else {
      imp__buf_put(&b, s + i, 1);
      i++;
    }
  }
  if (b.nomem || b.over) {
    imp__buf_free(&b);
    return NULL;
  }
  return imp__buf_take(&b);
}

/* ============================================================ responses */

/* A response with nothing known yet: no usage, an applied effect. */
void imp__resp_init(imp_resp *r) {
  memset(r, 0, sizeof *r);
  r->usage_in = r->usage_out = -1;
  r->effect_apply = 1;
}

/* Releases everything r owns and starts it again empty. */
void imp__resp_clear(imp_resp *r) {
  for (int i = 0; i < r->nh; i++) {
    free(r->hname[i]);
    free(r->hvalue[i]);
  }
  free(r->hname);
  free(r->hvalue);
  for (int i = 0; i < r->nchunks; i++) free(r->chunks[i]);
  free(r->chunks);
  free(r->code);
  free(r->type);
  free(r->message);
  free(r->content);
  free(r->garbage);
  imp__resp_init(r);
}

/* Adds a header; a repeated name is joined with ", ". */
int imp__resp_header(imp_resp *r, const char *name, const char *value) {
  if (name == NULL || value == NULL || name[0] == '\0') return SIM_OK;
  char *lname = strdup(name);
  if (lname == NULL) return SIM_ENOMEM;
  for (char *p = lname; *p; p++) *p = (char)tolower((unsigned char)*p);
  for (int i = 0; i < r->nh; i++) {
    if (strcmp(r->hname[i], lname) == 0) {
      free(lname);
      size_t a = strlen(r->hvalue[i]), b = strlen(value);
      if (a + b + 2 > IMP_MAX_HEADER_VALUE) return SIM_OK;
      char *v = malloc(a + b + 3);
      if (v == NULL) return SIM_ENOMEM;
      memcpy(v, r->hvalue[i], a);
      memcpy(v + a, ", ", 2);
      memcpy(v + a + 2, value, b + 1);
      free(r->hvalue[i]);
      r->hvalue[i] = v;
      return SIM_OK;
    }
  }
  if (r->nh >= 4 * IMP_MAX_HEADERS) { /* many are dropped later */
    free(lname);
    return SIM_OK;
  }
  if (r->nh == r->caph) {
    int cap = r->caph ? r->caph * 2 : 8;
    char **n1 = realloc(r->hname, (size_t)cap * sizeof *n1);
    if (n1 == NULL) {
      free(lname);
      return SIM_ENOMEM;
    }
    r->hname = n1;
    char **n2 = realloc(r->hvalue, (size_t)cap * sizeof *n2);
    if (n2 == NULL) {
      free(lname);
      return SIM_ENOMEM;
    }
    r->hvalue = n2;
    r->caph = cap;
  }
  char *v = strdup(value);
  if (v == NULL) {
    free(lname);
    return SIM_ENOMEM;
  }
  r->hname[r->nh] = lname;
  r->hvalue[r->nh] = v;
  r->nh++;
  return SIM_OK;
}

/* The value of a header (name in lower case), borrowed; NULL if absent. */
const char *imp__resp_get_header(const imp_resp *r, const char *name) {
  for (int i = 0; i < r->nh; i++)
    if (strcmp(r->hname[i], name) == 0) return r->hvalue[i];
  return NULL;
}

/* Appends a copy of a stream chunk (at most IMP_MAX_CHUNKS are kept, each
   at most IMP_MAX_TEXT bytes). Returns SIM_OK or SIM_ENOMEM. */
int imp__resp_chunk(imp_resp *r, const char *s, size_t n) {
  if (r->nchunks >= IMP_MAX_CHUNKS) return SIM_OK;
  if (r->nchunks == r->capchunks) {
    int cap = r->capchunks ? r->capchunks * 2 : 16;
    char **c = realloc(r->chunks, (size_t)cap * sizeof *c);
    if (c == NULL) return SIM_ENOMEM;
    r->chunks = c;
    r->capchunks = cap;
  }
  if (n > IMP_MAX_TEXT) n = IMP_MAX_TEXT;
  char *p = malloc(n + 1);
  if (p == NULL) return SIM_ENOMEM;
  memcpy(p, s, n);
  p[n] = '\0';
  r->chunks[r->nchunks++] = p;
  return SIM_OK;
}

/* Retry-After as an HTTP-date, made relative to when the response was sent. */
void imp__resp_ra_date(imp_resp *r, double ref_epoch_ms) {
  const char *ra = imp__resp_get_header(r, "retry-after");
  double when;
  if (ra == NULL || imp__parse_http_date(ra, &when) != 0) return;
  const char *date = imp__resp_get_header(r, "date");
  double ref_s;
  if (date == NULL || imp__parse_http_date(date, &ref_s) != 0) {
    if (ref_epoch_ms <= 0) return;
    ref_s = ref_epoch_ms / 1000.0;
  }
  double delta = floor(when - ref_s + 0.5);
  if (delta < 0 || delta > IMP_MAX_DATE_AHEAD) return; /* an odd date: kept as sent */
  r->has_ra_date = 1;
  r->ra_date_s = delta;
}

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
    const char *v = imp__resp_get_header(r, names[i]);
    imp__buf_puts(b, i ? ", [" : "[");
    imp__lua_string(b, names[i], strlen(names[i]));
    imp__buf_puts(b, "] = ");
    imp__lua_string(b, v, strlen(v));
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
      put_usage(b, r);
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
    } else {
      put_field(b, "content", r->content);
    }
    if (r->interval_s > 0.0005) {
      imp__buf_puts(b, ", interval = ");
      imp__lua_number(b, r->interval_s);
    }
    if (r->cut == IMP_CUT_DROP) imp__buf_printf(b, ", drop_after = %d", r->nchunks);
    if (r->cut == IMP_CUT_STALL) imp__buf_printf(b, ", stall_after = %d", r->nchunks);
    if (r->stream_error) {
      step_w e;
      imp__buf_printf(b, ", error_after = %d, error = ", r->nchunks);
      step_open(&e, b, "");
      put_field(b, "type", r->type);
      put_field(b, "code", r->code);
      put_field(b, "message", r->message);
      step_close(&e);
    } else if (r->no_end && r->cut == IMP_CUT_NONE) {
      imp__buf_puts(b, ", no_end = true");
    }
    put_usage(b, r);
    static const char *const own[] = {"cache-control", NULL}; /* the server sends it */
    put_headers(b, r, own);
    step_close(&w);
    return;
  }
  step_open(&w, b, "chat");
  put_field(b, "content", r->content);
  put_usage(b, r);
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
  imp_buf b;
  imp__buf_init(&b, SIM_IMPORT_MAX_OUTPUT);
  imp_resp view = *r; /* shallow: only read */
  if (lg->raw_dates) view.has_ra_date = 0;
  put_step(&b, &view);
  if (b.over) {
    imp__buf_free(&b);
    return imp__fail(lg, a->line, "this attempt alone would exceed the %zu-byte scenario limit",
                     (size_t)SIM_IMPORT_MAX_OUTPUT);
  }
  if (b.nomem) {
    imp__buf_free(&b);
    return SIM_ENOMEM;
  }
  imp_attempt *d = &lg->v[lg->n];
  *d = *a;
  int nomem = 0;
  d->key = dup_opt(a->key, &nomem);
  d->provider = dup_opt(a->provider, &nomem);
  d->note = dup_opt(a->note, &nomem);
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

static void log_clear(imp_log *lg) {
  for (size_t i = 0; i < lg->n; i++) {
    free(lg->v[i].key);
    free(lg->v[i].provider);
    free(lg->v[i].note);
    free(lg->v[i].step);
  }
  free(lg->v);
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

static int good_provider_name(const char *s) {
  size_t len = strlen(s);
  if (len == 0 || len > 32 || strcmp(s, "v1") == 0) return 0;
  for (size_t i = 0; i < len; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
      return 0;
  }
  return 1;
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
    "local function replay(requests)\n"
    "  local order, count, seen = {}, {}, 0\n"
    "  return function(req)\n"
    "    local i = order[req.key]\n"
    "    if i == nil then\n"
    "      seen = seen + 1\n"
    "      i = seen <= #requests and seen or #requests\n"
    "      order[req.key] = i\n"
    "    end\n"
    "    local n = (count[req.key] or 0) + 1\n"
    "    count[req.key] = n\n"
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
    imp__buf_printf(b, " (%s %d)", lg->format == SIM_IMPORT_HAR ? "entry" : "line", a->line);
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

/* Groups the sorted attempts and writes the scenario. */
static int assemble(imp_log *lg, const sim_import_opts *opts, char **out,
                    sim_import_stats *st) {
  int rc = SIM_ENOMEM;
  const char *provs[IMP_MAX_PROVIDERS];
  int nprov = 0, have_effects = 0;
  req_group *reqs = NULL;
  size_t nreq = 0;
  req_map map = {NULL, NULL, 0};
  imp_buf b;
  imp__buf_init(&b, SIM_IMPORT_MAX_OUTPUT);
  char *name = NULL, *doc = NULL, *src = NULL;

  qsort(lg->v, lg->n, sizeof *lg->v, cmp_attempt);
  int times = 1;
  for (size_t i = 0; i < lg->n; i++) times &= lg->v[i].has_t;
  double t0 = lg->n && times ? lg->v[0].t_ms : 0;

  /* Providers: one that was reached at /v1 first, then by first arrival. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < lg->n; i++) {
      const imp_attempt *a = &lg->v[i];
      if (a->effect) continue;
      if (pass == 0 && (!a->root || nprov > 0)) continue;
      const char *pn = a->provider ? a->provider : "primary";
      int found = 0;
      for (int k = 0; k < nprov && !found; k++) found = strcmp(provs[k], pn) == 0;
      if (found) continue;
      if (!good_provider_name(pn)) {
        rc = imp__fail(lg, a->line, "provider name '%.40s' must be 1 to 32 of a-z 0-9 _ - "
                                    "(and not \"v1\")", pn);
        goto done;
      }
      if (nprov == IMP_MAX_PROVIDERS) {
        rc = imp__fail(lg, a->line, "more than %d providers", IMP_MAX_PROVIDERS);
        goto done;
      }
      provs[nprov++] = pn;
    }
  }

  /* Logical requests, in order of first arrival per provider. */
  map.cap = 64;
  while (map.cap < lg->n * 2) map.cap *= 2;
  map.keys = calloc(map.cap, sizeof *map.keys);
  map.vals = calloc(map.cap, sizeof *map.vals);
  reqs = calloc(lg->n ? lg->n : 1, sizeof *reqs);
  if (map.keys == NULL || map.vals == NULL || reqs == NULL) goto done;
  for (size_t i = 0; i < lg->n; i++) {
    const imp_attempt *a = &lg->v[i];
    int p = -1;
    if (!a->effect) {
      const char *pn = a->provider ? a->provider : "primary";
      for (int k = 0; k < nprov; k++)
        if (strcmp(provs[k], pn) == 0) p = k;
    } else {
      have_effects = 1;
    }
    char head[16];
    snprintf(head, sizeof head, "%d%c", p, a->key ? '\x1f' : '\x1e');
    size_t kl = strlen(head) + (a->key ? strlen(a->key) : 0) + 1;
    char *mk = malloc(kl);
    if (mk == NULL) goto done;
    snprintf(mk, kl, "%s%s", head, a->key ? a->key : "");
    int r;
    if (!map_find(&map, mk, &r)) {
      map.keys[r] = mk;
      map.vals[r] = (int)nreq;
      reqs[nreq].prov = p;
      reqs[nreq].key = a->key;
      r = (int)nreq++;
    } else {
      free(mk);
    }
    req_group *g = &reqs[r];
    if (g->n == g->cap) {
      size_t cap = g->cap ? g->cap * 2 : 4;
      size_t *idx = realloc(g->idx, cap * sizeof *idx);
      if (idx == NULL) goto done;
      g->idx = idx;
      g->cap = cap;
    }
    g->idx[g->n++] = i;
  }

  /* The text. */
  char date[16];
  if (opts->date) snprintf(date, sizeof date, "%s", opts->date);
  else today(date);
  src = printable(lg->source, 200);
  if (src == NULL) goto done;
  const char *fname = sim_import_format_name(lg->format);
  imp_buf d;
  imp__buf_init(&d, 4096);
  imp__buf_printf(&d, "Imported from %s on %s: %zu attempt%s of %zu logical request%s (%s)",
                  src, date, lg->n, lg->n == 1 ? "" : "s", nreq, nreq == 1 ? "" : "s", fname);
  if (nprov > 1) imp__buf_printf(&d, " to %d providers", nprov);
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
    goto done;
  }
  doc = imp__buf_take(&d);
  if (doc == NULL) goto done;
  if (opts->name) {
    name = printable(opts->name, 200);
  } else {
    size_t nl = strlen(src) + 32;
    name = malloc(nl);
    if (name) snprintf(name, nl, "Imported from %s", src);
  }
  if (name == NULL) goto done;

  imp__buf_printf(&b, "-- Written by `fusebox import` from %s (%s) on %s.\n", src, fname, date);
  imp__buf_puts(&b, "-- One step per recorded attempt; `delay` wrappers are the observed "
                    "latencies.\n-- Credentials were stripped. Edit freely.\n");
  if (lg->compact)
    imp__buf_puts(&b, "-- (Comments per attempt were left out to keep the file under the "
                      "scenario size limit.)\n");
  imp__buf_puts(&b, "\n");
  int multi = nprov > 1 || have_effects;
  int need_fn = multi;
  int count_p[IMP_MAX_PROVIDERS + 1] = {0};
  for (size_t r = 0; r < nreq; r++) count_p[reqs[r].prov + 1]++;
  for (int k = 0; k <= nprov; k++)
    if (count_p[k] > 1) need_fn = 1;
  if (need_fn) imp__buf_puts(&b, REPLAY_FN);
  imp__buf_puts(&b, "return scenario {\n  name = ");
  imp__lua_string(&b, name, strlen(name));
  int lvl = bracket_level(doc);
  imp__buf_printf(&b, ",\n  doc = [%.*s[%s]%.*s],\n", lvl, "================", doc, lvl,
                  "================");
  imp__buf_puts(&b, "  tags = { \"imported\" },\n");
  if (nprov == 1 && !multi) {
    if (count_p[1] > 1) {
      imp__buf_puts(&b, "  provider = replay {\n");
      put_requests(&b, lg, reqs, nreq, 0, 0, "  ", t0, times);
    } else {
      imp__buf_puts(&b, "  provider = {\n");
      put_requests(&b, lg, reqs, nreq, 0, 1, "  ", t0, times);
    }
    imp__buf_puts(&b, "  },\n");
  } else if (nprov >= 1) {
    imp__buf_puts(&b, "  providers = {\n");
    for (int k = 0; k < nprov; k++) {
      imp__buf_printf(&b, "    { name = \"%s\", fn = replay {\n", provs[k]);
      put_requests(&b, lg, reqs, nreq, k, 0, "      ", t0, times);
      imp__buf_puts(&b, "    } },\n");
    }
    imp__buf_puts(&b, "  },\n");
  }
  if (have_effects) {
    imp__buf_puts(&b, "  effects = replay {\n");
    put_requests(&b, lg, reqs, nreq, -1, 0, "  ", t0, times);
    imp__buf_puts(&b, "  },\n");
    if (lg->idem_ignored) imp__buf_puts(&b, "  idempotency = \"ignored\",\n");
    if (lg->ledger_down) imp__buf_puts(&b, "  ledger = \"down\",\n");
  }
  imp__buf_puts(&b, "}\n");
  if (b.over) {
    lg->too_big = 1;
    rc = imp__fail(lg, 0, "the scenario would be larger than %zu bytes (the scenario file "
                          "limit) with %zu attempts: import a shorter log",
                   (size_t)SIM_IMPORT_MAX_OUTPUT, lg->n);
    goto done;
  }
  if (b.nomem) goto done;
  *out = imp__buf_take(&b);
  if (*out == NULL) goto done;
  if (st != NULL) {
    st->format = lg->format;
    st->attempts = (int)lg->n;
    st->requests = (int)nreq;
    st->providers = nprov;
    st->skipped = lg->skipped;
  }
  rc = SIM_OK;

done:
  if (rc == SIM_ENOMEM) snprintf(lg->err, SIM_ERRLEN, "%s: out of memory", lg->source);
  for (size_t i = 0; i < map.cap && map.keys; i++) free(map.keys[i]);
  free(map.keys);
  free(map.vals);
  for (size_t r = 0; r < nreq; r++) free(reqs[r].idx);
  free(reqs);
  free(name);
  free(doc);
  free(src);
  imp__buf_free(&b);
  return rc;
}

/* ============================================================ entry */

/* Guesses the format from the first line (or the whole text for HAR). */
static sim_import_format detect(const char *text, size_t len) {
  size_t i = 0;
  if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) i = 3;
  while (i < len && isspace((unsigned char)text[i])) i++;
  if (i == len || text[i] != '{') return SIM_IMPORT_JSONL;
  const char *nl = memchr(text + i, '\n', len - i);
  size_t llen = nl ? (size_t)(nl - (text + i)) : len - i;
  if (llen > SIM_IMPORT_MAX_LINE) llen = SIM_IMPORT_MAX_LINE;
  cJSON *first = cJSON_ParseWithLength(text + i, llen);
  sim_import_format f = SIM_IMPORT_JSONL;
  if (cJSON_IsObject(first)) {
    if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(first, "ev"))) f = SIM_IMPORT_TRACE;
    else if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(first, "log"))) f = SIM_IMPORT_HAR;
    cJSON_Delete(first);
    return f;
  }
  cJSON_Delete(first);
  /* Not one object per line: a HAR document is one object over many lines. */
  const char *p = text + i;
  size_t rest = len - i;
  for (size_t k = 1; k < rest && k < 4096; k++) {
    if (isspace((unsigned char)p[k])) continue;
    if (p[k] == '"' && rest - k >= 5 && memcmp(p + k, "\"log\"", 5) == 0) return SIM_IMPORT_HAR;
    break;
  }
  return SIM_IMPORT_JSONL;
}

/* The name of a format. */
const char *sim_import_format_name(sim_import_format f) {
  switch (f) {
  case SIM_IMPORT_JSONL: return "json-lines";
  case SIM_IMPORT_HAR: return "har";
  case SIM_IMPORT_TRACE: return "trace";
  default: return "auto";
  }
}

/* Imports len bytes of text; see sim.h. */
int sim_import_buffer(const char *text, size_t len, const sim_import_opts *opts,
                      char **out_lua, sim_import_stats *stats, char err[SIM_ERRLEN]) {
  sim_import_opts none = {0};
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
  lg.err = err;
  if (len > SIM_IMPORT_MAX_INPUT)
    return imp__fail(&lg, 0, "larger than %zu bytes", (size_t)SIM_IMPORT_MAX_INPUT);
  if (memchr(text ? text : "", '\0', len) != NULL) {
    const char *z = memchr(text, '\0', len);
    int line = 1;
    for (const char *p = text; p < z; p++) line += *p == '\n';
    return imp__fail(&lg, line, "a NUL byte: this is not a text log");
  }
  lg.format = opts->format != SIM_IMPORT_AUTO ? opts->format : detect(text ? text : "", len);
  int rc;
  switch (lg.format) {
  case SIM_IMPORT_HAR: rc = imp__read_har(&lg, text, len); break;
  case SIM_IMPORT_TRACE: rc = imp__read_trace(&lg, text, len); break;
  default:
    lg.format = SIM_IMPORT_JSONL;
    rc = imp__read_jsonl(&lg, text ? text : "", len);
    break;
  }
  if (rc == SIM_OK && lg.n == 0 && lg.skipped > 0)
    rc = imp__fail(&lg, 0, "no attempt to replay (%d entries left out: only "
                           "/chat/completions, /messages and /effects/ are kept)", lg.skipped);
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
int sim_import_file(const char *path, const sim_import_opts *opts, char **out_lua,
                    sim_import_stats *stats, char err[SIM_ERRLEN]) {
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
      if (cap > SIM_IMPORT_MAX_INPUT) break;
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
  } else if (n > SIM_IMPORT_MAX_INPUT) {
    snprintf(err, SIM_ERRLEN, "%s: larger than %zu bytes", path, (size_t)SIM_IMPORT_MAX_INPUT);
    rc = SIM_EINVAL;
  }
  fclose(f);
  if (rc == SIM_OK) {
    sim_import_opts o = {0};
    if (opts != NULL) o = *opts;
    if (o.source == NULL) o.source = path;
    rc = sim_import_buffer(buf, n, &o, out_lua, stats, err);
  }
  free(buf);
  return rc;
}
