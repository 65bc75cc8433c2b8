/*
 * http_date.c - HTTP dates (IMF-fixdate, "Sun, 06 Nov 1994 08:49:37 GMT"),
 * the one place sim writes and reads them: the Retry-After dates the server
 * sends and the Retry-After and Date headers `fusebox import` reads back.
 * (The guarded client reads them on its own side, guard/retry_after.c,
 * which also accepts the obsolete forms a real provider might send.)
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sim/sim_int.h"

/* Formats wall time now_s + seconds_ahead, rounded up; see sim_int.h. */
void sim__http_date(double now_s, double seconds_ahead, char out[40]) {
  /* Never format an unchecked time: clamp (NaN too), and if gmtime_r still
     fails, say the epoch rather than print stack contents. */
  if (!(seconds_ahead >= -SIM_RETRY_DATE_MAX)) seconds_ahead = -SIM_RETRY_DATE_MAX;
  if (seconds_ahead > SIM_RETRY_DATE_MAX) seconds_ahead = SIM_RETRY_DATE_MAX;
  time_t t = (time_t)ceil(now_s + seconds_ahead);
  struct tm tm = {0};
  if (gmtime_r(&t, &tm) == NULL) t = 0, gmtime_r(&t, &tm);
  strftime(out, 40, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* Parses an IMF-fixdate into epoch seconds; see sim.h. */
int sim_http_date_parse(const char *s, double *epoch_s) {
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
