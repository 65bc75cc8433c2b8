/*
 * trace_merge.c - one timeline from the traces of a fleet. Every server of
 * a fleet (serve --state) writes its own trace on the fleet's shared
 * session clock, with arrival numbers the fleet shares; this file groups
 * such traces by their session and merges each group into one trace,
 * events ordered by time and tagged with the server that wrote them, so
 * that the usual reader and verdicts judge the fleet as one provider.
 *
 * A fleet server that lost its shared state (an `error` event of kind
 * "state") makes the whole run invalid: its attempt counts, ledger and
 * rate limit no longer describe one provider, so nothing is judged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/reports.h"
#include "reports/reports_int.h"

#define MERGE_MAX_BYTES ((size_t)256 << 20) /* of one fleet trace */

typedef struct mev {
  cJSON *o;
  double t;
  int file, line;
} mev;

/* Reads the first line of path and returns its fleet session (caller frees),
   or NULL when it has none or cannot be read. */
static char *fleet_session(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *line = malloc(RPT_MAX_LINE);
  char *out = NULL;
  if (line != NULL && fgets(line, RPT_MAX_LINE, f) != NULL) {
    cJSON *o = cJSON_Parse(line);
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "fleet");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(fl, "session");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(o, "ev");
    if (cJSON_IsString(ev) && strcmp(ev->valuestring, "session") == 0 && cJSON_IsString(s))
      out = strdup(s->valuestring);
    cJSON_Delete(o);
  }
  free(line);
  fclose(f);
  return out;
}

static int cmp_mev(const void *x, const void *y) {
  const mev *a = x, *b = y;
  if (a->t != b->t) return a->t < b->t ? -1 : 1;
  if (a->file != b->file) return a->file < b->file ? -1 : 1;
  return a->line < b->line ? -1 : a->line > b->line;
}

/* Appends s and a newline to the growing text g. */
static int put(char **g, size_t *n, size_t *cap, const char *s) {
  size_t l = strlen(s);
  if (*n + l + 2 > *cap) {
    size_t nc = *cap ? *cap : 1 << 16;
    while (*n + l + 2 > nc) nc *= 2;
    if (nc > MERGE_MAX_BYTES * 4) return RPT_ETOOBIG;
    char *ng = realloc(*g, nc);
    if (ng == NULL) return RPT_ENOMEM;
    *g = ng;
    *cap = nc;
  }
  memcpy(*g + *n, s, l);
  *n += l;
  (*g)[(*n)++] = '\n';
  (*g)[*n] = '\0';
  return 0;
}

/*
 * Merges the traces files[0..nf) of one fleet session into g->text, and
 * sets g->invalid when a server lost its state.
 */
static int merge(rpt_group *g, const char *const *files, int nf, char err[RPT_ERRLEN]) {
  mev *ev = NULL;
  size_t nev = 0, cev = 0;
  cJSON *session = NULL, *instances = cJSON_CreateArray();
  int rc = instances ? 0 : RPT_ENOMEM, ndone = 0, nstate = 0;
  double t_done = 0, arrivals = 0, t_state = 0;
  char first_state[160] = "";
  for (int f = 0; f < nf && rc == 0; f++) {
    size_t len = 0;
    char *text = NULL;
    rc = rpt__read_file(files[f], MERGE_MAX_BYTES, &text, &len, err);
    if (rc != RPT_OK) break;
    char inst[64] = "";
    int line = 0;
    for (char *p = text, *nl; p < text + len && rc == 0; p = nl + 1, line++) {
      nl = strchr(p, '\n');
      if (nl == NULL) nl = text + len;
      *nl = '\0';
      cJSON *o = cJSON_Parse(p); /* a line cut by a kill does not parse: skipped */
      const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "ev");
      const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "t");
      if (!cJSON_IsString(k) || !cJSON_IsNumber(t)) {
        cJSON_Delete(o);
        continue;
      }
      if (strcmp(k->valuestring, "session") == 0) {
        const cJSON *fl = cJSON_GetObjectItemCaseSensitive(o, "fleet");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(fl, "instance");
        snprintf(inst, sizeof inst, "%s", cJSON_IsString(in) ? in->valuestring : files[f]);
        cJSON_AddItemToArray(instances, cJSON_CreateString(inst));
        if (session == NULL) session = o;
        else cJSON_Delete(o);
        continue;
      }
      if (strcmp(k->valuestring, "done") == 0) {
        ndone++;
        if (t->valuedouble > t_done) t_done = t->valuedouble;
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "arrivals");
        if (cJSON_IsNumber(a)) arrivals += a->valuedouble;
        cJSON_Delete(o);
        continue;
      }
      const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
      if (strcmp(k->valuestring, "error") == 0 && cJSON_IsString(kind) &&
          strcmp(kind->valuestring, "state") == 0) {
        if (nstate++ == 0 || t->valuedouble < t_state) {
          const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "message");
          t_state = t->valuedouble;
          snprintf(first_state, sizeof first_state, "%.60s: %.90s", inst,
                   cJSON_IsString(m) ? m->valuestring : "?");
        }
      }
      cJSON_DeleteItemFromObjectCaseSensitive(o, "instance");
      cJSON_AddStringToObject(o, "instance", inst);
      if (nev == cev) {
        size_t nc = cev ? cev * 2 : 1024;
        mev *ne = nc <= RPT_MAX_EVENTS ? realloc(ev, nc * sizeof *ev) : NULL;
        if (ne == NULL) {
          cJSON_Delete(o);
          rc = nc <= RPT_MAX_EVENTS ? RPT_ENOMEM : RPT_ETOOBIG;
          break;
        }
        ev = ne;
        cev = nc;
      }
      ev[nev++] = (mev){o, t->valuedouble, f, line};
    }
    free(text);
  }
  if (rc == 0 && session == NULL) {
    snprintf(err, RPT_ERRLEN, "%.200s: no session event", files[0]);
    rc = RPT_ETRACE;
  }
  size_t n = 0, cap = 0;
  if (rc == 0) {
    qsort(ev, nev, sizeof *ev, cmp_mev);
    cJSON *fl = cJSON_GetObjectItemCaseSensitive(session, "fleet");
    cJSON_DeleteItemFromObjectCaseSensitive(fl, "instance");
    cJSON_AddItemToObject(fl, "instances", instances);
    instances = NULL;
    char *s = cJSON_PrintUnformatted(session);
    rc = s ? put(&g->text, &n, &cap, s) : RPT_ENOMEM;
    free(s);
  }
  for (size_t i = 0; i < nev && rc == 0; i++) {
    char *s = cJSON_PrintUnformatted(ev[i].o);
    rc = s ? put(&g->text, &n, &cap, s) : RPT_ENOMEM;
    free(s);
  }
  if (rc == 0 && ndone == nf) { /* complete only when every server stopped cleanly */
    char done[96];
    snprintf(done, sizeof done, "{\"ev\":\"done\",\"t\":%.3f,\"arrivals\":%.0f}", t_done, arrivals);
    rc = put(&g->text, &n, &cap, done);
  }
  g->len = n;
  if (rc == 0 && nstate > 0) {
    char why[512];
    snprintf(why, sizeof why,
             "invalid run, not a client failure: the fleet lost its shared state (Redis) "
             "%d time%s, first at %.0f ms on %s; attempts, ledger and rate limit no longer "
             "describe one provider, so nothing was judged",
             nstate, nstate == 1 ? "" : "s", t_state, first_state);
    g->invalid = strdup(why);
    if (g->invalid == NULL) rc = RPT_ENOMEM;
  }
  for (size_t i = 0; i < nev; i++) cJSON_Delete(ev[i].o);
  free(ev);
  cJSON_Delete(session);
  cJSON_Delete(instances);
  if (rc != 0 && err[0] == '\0') snprintf(err, RPT_ERRLEN, "%s", rpt_strerror(rc));
  return rc;
}

/* Groups and merges traces; see reports.h. */
int rpt_traces_group(const char *const *paths, int n, rpt_group **out, int *n_out,
                     char err[RPT_ERRLEN]) {
  *out = NULL;
  *n_out = 0;
  err[0] = '\0';
  if (n < 0 || (n > 0 && paths == NULL)) return RPT_EINVAL;
  rpt_group *g = calloc((size_t)(n ? n : 1), sizeof *g);
  char **sess = calloc((size_t)(n ? n : 1), sizeof *sess);
  const char **files = calloc((size_t)(n ? n : 1), sizeof *files);
  int *done = calloc((size_t)(n ? n : 1), sizeof *done);
  int ng = 0, rc = (g && sess && files && done) ? 0 : RPT_ENOMEM;
  for (int i = 0; i < n && rc == 0; i++) sess[i] = fleet_session(paths[i]);
  for (int i = 0; i < n && rc == 0; i++) {
    if (done[i]) continue;
    rpt_group *gr = &g[ng++];
    if (sess[i] == NULL) { /* a lone trace, read as always */
      gr->path = paths[i];
      gr->name = strdup(paths[i]);
      gr->ntraces = 1;
      if (gr->name == NULL) rc = RPT_ENOMEM;
      continue;
    }
    int nf = 0;
    size_t nlen = 0;
    for (int j = i; j < n; j++)
      if (!done[j] && sess[j] && strcmp(sess[j], sess[i]) == 0) {
        done[j] = 1;
        files[nf++] = paths[j];
        nlen += strlen(paths[j]) + 3;
      }
    gr->ntraces = nf;
    gr->name = malloc(nlen + 1);
    if (gr->name == NULL) {
      rc = RPT_ENOMEM;
      break;
    }
    gr->name[0] = '\0';
    for (int k = 0; k < nf; k++) {
      if (k) strcat(gr->name, " + ");
      strcat(gr->name, files[k]);
    }
    rc = merge(gr, files, nf, err);
  }
  for (int i = 0; i < n && sess; i++) free(sess ? sess[i] : NULL);
  free(sess);
  free(files);
  free(done);
  if (rc != 0) {
    rpt_groups_free(g, ng);
    if (err[0] == '\0') snprintf(err, RPT_ERRLEN, "%s", rpt_strerror(rc));
    return rc;
  }
  *out = g;
  *n_out = ng;
  return 0;
}

/* Releases groups; NULL is a no-op. */
void rpt_groups_free(rpt_group *g, int n) {
  if (g == NULL) return;
  for (int i = 0; i < n; i++) {
    free(g[i].name);
    free(g[i].text);
    free(g[i].invalid);
  }
  free(g);
}
