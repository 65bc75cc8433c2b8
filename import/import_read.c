/*
 * import_read.c - helpers the readers of every import format share: error messages with
 * the input line, line iteration, ISO-8601 and HTTP dates, and the rules that
 * keep credentials out of a scenario (imp__header_dropped, imp__scrub).
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

/* A copy of n bytes of s (at most IMP_MAX_TEXT), NUL-terminated; see import_int.h. */
char *imp__dup_n(const char *s, size_t n) {
  if (n > IMP_MAX_TEXT) n = IMP_MAX_TEXT;
  char *p = malloc(n + 1);
  if (p == NULL) return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* Sets *dst to a copy of a string or number item (numbers as integers). */
int imp__take_str(char **dst, const cJSON *it) {
  char num[32];
  const char *s = NULL;
  if (cJSON_IsString(it)) s = it->valuestring;
  else if (cJSON_IsNumber(it)) {
    snprintf(num, sizeof num, "%.0f", it->valuedouble);
    s = num;
  }
  if (s == NULL) return SIM_OK;
  free(*dst);
  *dst = imp__dup_n(s, strlen(s));
  return *dst ? SIM_OK : SIM_ENOMEM;
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

/* 1 if a response header must never be written into a scenario: a
   credential (sim_redact_name, the one rule), an account identifier, or a
   header the fake server sets itself. */
int imp__header_dropped(const char *name) {
  static const char *const drop[] = {
      /* account identifiers */
      "set-cookie2", "openai-organization", "anthropic-organization-id", "openai-project",
      /* set by the fake server itself, or wrong once the body is replayed */
      "content-length", "transfer-encoding", "connection", "keep-alive",
      "proxy-connection", "upgrade", "te", "trailer", "content-type",
      "content-encoding", "date", "x-request-id", "request-id", NULL};
  for (int i = 0; drop[i] != NULL; i++)
    if (strcasecmp(name, drop[i]) == 0) return 1;
  return sim_redact_name(name);
}

/* Replaces credentials and account ids (openai-organization "org-...",
   openai-project "proj_...") in free text: sim_redact_text, the one rule
   (it holds the account ids since issue 25). */
char *imp__scrub(const char *s, size_t n) { return sim_redact_text(s, n); }

