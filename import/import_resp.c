/*
 * import_resp.c - the response model of `fusebox import`: what the provider did with one
 * attempt (status, headers, error fields, stream chunks), as the readers
 * fill it in.
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

/* ============================================================ responses */

/* A response with nothing known yet: no usage, an applied effect. */
void imp__resp_init(imp_resp *r) {
  memset(r, 0, sizeof *r);
  r->usage_in = r->usage_out = -1;
  r->effect_apply = 1;
  r->frames = -1;
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
  for (int i = 0; i < r->ntools; i++) {
    free(r->tools[i].id);
    free(r->tools[i].name);
    free(r->tools[i].args);
  }
  free(r->tools);
  free(r->model);
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

static int set_once(char **dst, const char *s) {
  if (s == NULL || *dst != NULL) return SIM_OK;
  size_t n = strlen(s);
  if (n > IMP_MAX_TEXT) n = IMP_MAX_TEXT;
  *dst = strndup(s, n);
  return *dst ? SIM_OK : SIM_ENOMEM;
}

/* A tool call's parts; see import_int.h. */
int imp__resp_tool(imp_resp *r, int key, const char *id, const char *name, const char *args) {
  imp_tool *t = NULL;
  for (int i = 0; key >= 0 && i < r->ntools; i++)
    if (r->tools[i].key == key) t = &r->tools[i];
  if (t == NULL) {
    if (r->ntools >= IMP_MAX_TOOLS) return SIM_OK;
    if (r->ntools == r->captools) {
      int cap = r->captools ? r->captools * 2 : 4;
      imp_tool *v = realloc(r->tools, (size_t)cap * sizeof *v);
      if (v == NULL) return SIM_ENOMEM;
      r->tools = v;
      r->captools = cap;
    }
    t = &r->tools[r->ntools++];
    memset(t, 0, sizeof *t);
    t->key = key;
  }
  if (set_once(&t->id, id) != SIM_OK || set_once(&t->name, name) != SIM_OK) return SIM_ENOMEM;
  if (args == NULL) return SIM_OK;
  size_t a = t->args ? strlen(t->args) : 0, n = strlen(args);
  if (a + n > IMP_MAX_TEXT) n = a < IMP_MAX_TEXT ? IMP_MAX_TEXT - a : 0;
  char *p = realloc(t->args, a + n + 1);
  if (p == NULL) return SIM_ENOMEM;
  memcpy(p + a, args, n);
  p[a + n] = '\0';
  t->args = p;
  return SIM_OK;
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

/* The stream frames a replay sends before a cut: the text chunks, then
   each tool call's arguments in the pieces the server streams them in
   (8 bytes; a Gemini call is one chunk), as the trace counts them. */
int imp__resp_frames(const imp_resp *r) {
  if (r->frames >= 0) return r->frames;
  int n = r->nchunks;
  for (int i = 0; i < r->ntools; i++) {
    const imp_tool *t = &r->tools[i];
    if (t->name == NULL || t->name[0] == '\0') continue;
    size_t len = t->args && t->args[0] ? strlen(t->args) : 2; /* none: "{}" */
    n += r->api && strcmp(r->api, "gemini") == 0 ? 1 : (int)((len + 7) / 8);
  }
  return n;
}

/* Retry-After as an HTTP-date, made relative to when the response was sent. */
void imp__resp_ra_date(imp_resp *r, double ref_epoch_ms) {
  const char *ra = imp__resp_get_header(r, "retry-after");
  double when;
  if (ra == NULL || sim_http_date_parse(ra, &when) != 0) return;
  const char *date = imp__resp_get_header(r, "date");
  double ref_s;
  if (date == NULL || sim_http_date_parse(date, &ref_s) != 0) {
    if (ref_epoch_ms <= 0) return;
    ref_s = ref_epoch_ms / 1000.0;
  }
  double delta = floor(when - ref_s + 0.5);
  if (delta < 0 || delta > IMP_MAX_DATE_AHEAD) return; /* an odd date: kept as sent */
  r->has_ra_date = 1;
  r->ra_date_s = delta;
}

