/*
 * retry_after.c - reading what a provider asks us to wait: retry-after-ms
 * first, then Retry-After as delta-seconds (integer or decimal) or an
 * HTTP-date (RFC 9110: IMF-fixdate, RFC 850, asctime) against an injected
 * wall clock. A value that is negative, unparsable, infinite or beyond the
 * cap is "bad"; the caller's policy decides what that means.
 */
#include "guard/guard_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

enum { NUM_OK, NUM_NEGATIVE, NUM_INFINITE, NUM_BAD };

static const char *skip_ws(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* A number in the delta-seconds grammar, widened to decimals: digits with an
 * optional fraction, nothing else but surrounding blanks. */
static int parse_number(const char *s, double *out) {
  s = skip_ws(s);
  int neg = 0;
  if (*s == '-' || *s == '+') {
    neg = *s == '-';
    s++;
  }
  const char *w = skip_ws(s);
  if (strncasecmp(w, "inf", 3) == 0) {
    w += strncasecmp(w, "infinity", 8) == 0 ? 8 : 3;
    if (*skip_ws(w) != '\0') return NUM_BAD;
    return neg ? NUM_NEGATIVE : NUM_INFINITE;
  }
  const char *p = s;
  size_t digits = 0;
  while (*p >= '0' && *p <= '9') {
    p++;
    digits++;
  }
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') {
      p++;
      digits++;
    }
  }
  if (digits == 0 || *skip_ws(p) != '\0') return NUM_BAD;
  double v = strtod(s, NULL);
  if (neg && v > 0) return NUM_NEGATIVE;
  if (!isfinite(v)) return NUM_INFINITE;
  *out = v;
  return NUM_OK;
}

static int month_of(const char *m) {
  static const char *const names[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; i++)
    if (strcmp(m, names[i]) == 0) return i;
  return -1;
}

/* Parses an HTTP-date into Unix seconds; 0, or -1 when it is not one. */
int guard__http_date(const char *s, double *unix_s) {
  char wk[16], mon[4];
  int d, y, H, M, S, end = 0;
  s = skip_ws(s);
  int ok = 0;
  /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
  if (sscanf(s, "%3[A-Za-z], %2d %3[A-Za-z] %4d %2d:%2d:%2d GMT%n", wk, &d,
             mon, &y, &H, &M, &S, &end) == 7 && end > 0 && *skip_ws(s + end) == '\0')
    ok = 1;
  /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
  if (!ok && (end = 0, sscanf(s, "%15[A-Za-z], %2d-%3[A-Za-z]-%2d %2d:%2d:%2d GMT%n",
                              wk, &d, mon, &y, &H, &M, &S, &end)) == 7 &&
      end > 0 && *skip_ws(s + end) == '\0') {
    y += y < 70 ? 2000 : 1900;
    ok = 1;
  }
  /* asctime: Sun Nov  6 08:49:37 1994 */
  if (!ok && (end = 0, sscanf(s, "%3[A-Za-z] %3[A-Za-z] %2d %2d:%2d:%2d %4d%n",
                              wk, mon, &d, &H, &M, &S, &y, &end)) == 7 &&
      end > 0 && *skip_ws(s + end) == '\0')
    ok = 1;
  if (!ok) return -1;
  int m = month_of(mon);
  if (m < 0 || d < 1 || d > 31 || H > 23 || M > 59 || S > 60 || y < 1900 ||
      H < 0 || M < 0 || S < 0)
    return -1;
  struct tm tm = {0};
  tm.tm_year = y - 1900;
  tm.tm_mon = m;
  tm.tm_mday = d;
  tm.tm_hour = H;
  tm.tm_min = M;
  tm.tm_sec = S;
  time_t t = timegm(&tm);
  if (t == (time_t)-1) return -1;
  *unix_s = (double)t;
  return 0;
}

static void set_bad(guard__ra *out, const char *why) {
  out->state = GUARD__RA_BAD;
  out->ms = 0;
  guard__strlcpy(out->why, why, sizeof out->why);
}

static const char *num_why(int r) {
  return r == NUM_NEGATIVE ? "negative" : r == NUM_INFINITE ? "infinite" : "unparsable";
}

/* Accepts seconds s as the reading if within the cap. */
static int accept(guard__ra *out, double s, double cap_s) {
  if (cap_s > 0 && s > cap_s) {
    set_bad(out, "over_cap");
    return 0;
  }
  out->state = GUARD__RA_OK;
  out->ms = s * 1000.0;
  out->why[0] = '\0';
  return 1;
}

/* Reads retry-after-ms, then Retry-After, into *out. */
void guard__retry_after(const char *ra_ms, const char *ra, double wall_now_s,
                        double cap_s, guard__ra *out) {
  out->state = GUARD__RA_NONE;
  out->ms = 0;
  out->why[0] = '\0';
  double v;
  if (ra_ms != NULL) {
    int r = parse_number(ra_ms, &v);
    if (r == NUM_OK) {
      if (accept(out, v / 1000.0, cap_s)) return;
    } else {
      set_bad(out, num_why(r));
    }
  }
  if (ra != NULL) {
    guard__ra mine = {GUARD__RA_NONE, 0, ""};
    int r = parse_number(ra, &v);
    if (r == NUM_OK) {
      if (accept(&mine, v, cap_s)) {
        *out = mine;
        return;
      }
    } else if (r != NUM_BAD) {
      set_bad(&mine, num_why(r));
    } else {
      double when;
      if (guard__http_date(ra, &when) == 0) {
        double s = when - wall_now_s;
        if (s < 0) s = 0; /* a date in the past: retry now */
        if (accept(&mine, s, cap_s)) {
          *out = mine;
          return;
        }
      } else {
        set_bad(&mine, "unparsable");
      }
    }
    if (out->state == GUARD__RA_NONE) *out = mine;
  }
}
