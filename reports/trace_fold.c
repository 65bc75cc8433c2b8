/*
 * trace_fold.c - the verdicts' facts gathered as a trace streams past, in
 * bounded memory: each logical request is held open (its attempts' times,
 * provider, method, status, Retry-After) until it is the least recently
 * active of RPT__OPEN_MAX open requests, then folded into counts (requests
 * by number of attempts, the worst Retry-After gap, arrivals served,
 * streamed, unserved). What stays per request folded is a 64-bit
 * fingerprint of its key. A request folded and then seen again, an id
 * that may repeat one folded (ids of a trace grow: one under the highest
 * so far that is not open), or a request over RPT__GROUP_MAX attempts cannot
 * be folded exactly: the summary is marked broken and the report reads the
 * trace whole (rpt_run_add), so a fold never changes a verdict.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "reports/reports_int.h"

#define FOLDED_MAX (1u << 23) /* fingerprint slots: 64 MB at most, 6M requests */
#define NAMES_MAX 256         /* distinct providers and methods */
#define KEY_BUCKETS 8192
#define ID_BUCKETS 16384
#define VICTIM_TRIES 64       /* open requests passed over for one to fold */
#define HERD_MAX (1u << 20)   /* arrival times one herd window holds: 8 MB */
#define REORDER_MAX 4096      /* arrival times held back to sort them (32 KB) */

typedef struct fatt {
  long id;
  double ta, te, ra;
  int has_end, attempt, status, get, stream;
  const char *prov, *meth, *code; /* code: only when no_retry_after is folded */
} fatt;

typedef struct fgroup {
  char *key;
  long seq;              /* order of first arrival */
  fatt *a;
  int n, cap;
  int unended;           /* attempts without an end yet */
  struct fgroup *prev, *next; /* least recently active first */
  struct fgroup *hnext;
} fgroup;

typedef struct idnode {
  long id;
  fgroup *g;
  int k;
  struct idnode *next;
} idnode;

struct rpt__fold {
  double scale;
  rpt__sum *s;
  fgroup *keys[KEY_BUCKETS];
  idnode *ids[ID_BUCKETS];
  fgroup *lru_head, *lru_tail;
  int nopen;
  long nheld;            /* attempts of the open requests */
  long nseq;
  char *names[NAMES_MAX];
  int nnames;
  uint64_t *fp;          /* the folded keys' fingerprints */
  size_t fp_n, fp_cap;
  long max_id;           /* the highest arrival id so far */
  int any_id;
  double *ring;          /* herd: the arrival times in the window, oldest first */
  size_t ring_head, ring_n, ring_cap;
  double heap[REORDER_MAX]; /* herd: the last arrival times, held back to be sorted */
  size_t heap_n;
  double last_t;         /* the last time passed to the window */
  int any_t;
};

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}
static uint64_t hash_id(long id) {
  uint64_t x = (uint64_t)id * 0x9E3779B97F4A7C15ull;
  return x ^ (x >> 29);
}

/* The fingerprints (64-bit hashes) of the keys folded: open addressing, 0 =
   empty. A key folded and seen again is found (never a false no); a false
   yes, two keys of one hash, only reads the trace whole. */
static int fp_has(const rpt__fold *f, uint64_t h) {
  if (f->fp_cap == 0) return 0;
  h |= 1;
  for (size_t i = h & (f->fp_cap - 1); f->fp[i]; i = (i + 1) & (f->fp_cap - 1))
    if (f->fp[i] == h) return 1;
  return 0;
}
static int fp_put(rpt__fold *f, uint64_t h) {
  h |= 1;
  if ((f->fp_n + 1) * 4 > f->fp_cap * 3) {
    size_t nc = f->fp_cap ? f->fp_cap * 2 : 4096;
    if (nc > FOLDED_MAX) return -1;
    uint64_t *nf = calloc(nc, sizeof *nf);
    if (nf == NULL) return -1;
    for (size_t i = 0; i < f->fp_cap; i++) {
      if (!f->fp[i]) continue;
      size_t j = f->fp[i] & (nc - 1);
      while (nf[j]) j = (j + 1) & (nc - 1);
      nf[j] = f->fp[i];
    }
    free(f->fp);
    f->fp = nf;
    f->fp_cap = nc;
  }
  size_t i = h & (f->fp_cap - 1);
  while (f->fp[i] && f->fp[i] != h) i = (i + 1) & (f->fp_cap - 1);
  if (!f->fp[i]) f->fp_n++;
  f->fp[i] = h;
  return 0;
}

/* A fold for a trace of this time scale; NULL when out of memory. */
rpt__fold *rpt__fold_new(double scale, const char *expect_json) {
  rpt__fold *f = calloc(1, sizeof *f);
  if (f == NULL) return NULL;
  f->scale = scale;
  f->s = calloc(1, sizeof *f->s);
  if (f->s == NULL) {
    rpt__fold_free(f);
    return NULL;
  }
  f->s->first_unserved_id = -1;
  /* What herd and no_retry_after judge by (a bad value is judged whole,
     where its error is told). */
  int oom = 0;
  cJSON *ex = expect_json ? rpt__json_parse(expect_json, strlen(expect_json), &oom) : NULL;
  const cJSON *herd = cJSON_GetObjectItemCaseSensitive(ex, "herd");
  const cJSON *win = cJSON_GetObjectItemCaseSensitive(herd, "window");
  if (cJSON_IsNumber(win) && win->valuedouble > 0) {
    f->s->herd_on = 1;
    f->s->herd_w = win->valuedouble * 1000.0 * scale; /* as rpt__v_herd computes it */
  }
  const cJSON *nra = cJSON_GetObjectItemCaseSensitive(ex, "no_retry_after");
  if (nra && rpt__stop_set_read(nra, &f->s->nra_stops) == 0) f->s->nra_on = 1;
  cJSON_Delete(ex);
  if (oom) f->s->broken = 1;
  return f;
}

/* herd: slides the window over one more time, in sorted order, as
   rpt__v_herd does over the sorted times. */
static void herd_slide(rpt__fold *f, double t) {
  rpt__sum *s = f->s;
  if (f->ring_n == f->ring_cap) {
    size_t nc = f->ring_cap ? f->ring_cap * 2 : 1024;
    double *p = nc <= HERD_MAX ? malloc(nc * sizeof *p) : NULL;
    if (p == NULL) {
      s->broken = 1;
      return;
    }
    for (size_t i = 0; i < f->ring_n; i++) p[i] = f->ring[(f->ring_head + i) % f->ring_cap];
    free(f->ring);
    f->ring = p;
    f->ring_cap = nc;
    f->ring_head = 0;
  }
  f->ring[(f->ring_head + f->ring_n++) % f->ring_cap] = t;
  while (t - f->ring[f->ring_head] >= s->herd_w) {
    f->ring_head = (f->ring_head + 1) % f->ring_cap;
    f->ring_n--;
  }
  if ((long)f->ring_n > s->herd_peak) {
    s->herd_peak = (long)f->ring_n;
    s->herd_at = f->ring[f->ring_head];
  }
}

/* The earliest time held back for sorting: a min-heap of REORDER_MAX. */
static double heap_pop(rpt__fold *f) {
  double top = f->heap[0], last = f->heap[--f->heap_n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= f->heap_n) break;
    if (c + 1 < f->heap_n && f->heap[c + 1] < f->heap[c]) c++;
    if (last <= f->heap[c]) break;
    f->heap[i] = f->heap[c];
    i = c;
  }
  if (f->heap_n) f->heap[i] = last;
  return top;
}

/* Passes the earliest time held back to the window; one under a time
   already passed (an arrival more than REORDER_MAX out of order) cannot be
   slid over: the trace is read whole. */
static void herd_pass(rpt__fold *f) {
  double t = heap_pop(f);
  if (f->any_t && t < f->last_t) {
    f->s->broken = 1;
    return;
  }
  f->any_t = 1;
  f->last_t = t;
  herd_slide(f, t);
}

/* herd: one more arrival time, in the order they came; held back among
   the last REORDER_MAX so that times a little out of order are sorted. */
static void herd_add(rpt__fold *f, double t) {
  if (f->heap_n == REORDER_MAX) herd_pass(f);
  size_t i = f->heap_n++;
  while (i > 0 && f->heap[(i - 1) / 2] > t) {
    f->heap[i] = f->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  f->heap[i] = t;
}

/* The fold's one copy of a provider or method name; NULL (broken) past NAMES_MAX. */
static const char *name_of(rpt__fold *f, const char *s) {
  for (int i = 0; i < f->nnames; i++)
    if (strcmp(f->names[i], s) == 0) return f->names[i];
  if (f->nnames == NAMES_MAX || (f->names[f->nnames] = strdup(s)) == NULL) {
    f->s->broken = 1;
    return NULL;
  }
  return f->names[f->nnames++];
}

static void lru_unlink(rpt__fold *f, fgroup *g) {
  if (g->prev) g->prev->next = g->next;
  else f->lru_head = g->next;
  if (g->next) g->next->prev = g->prev;
  else f->lru_tail = g->prev;
  g->prev = g->next = NULL;
}
static void lru_push(rpt__fold *f, fgroup *g) {
  g->prev = f->lru_tail;
  g->next = NULL;
  if (f->lru_tail) f->lru_tail->next = g;
  else f->lru_head = g;
  f->lru_tail = g;
}

static int cmp_att(const void *x, const void *y) {
  const fatt *a = x, *b = y;
  if (a->attempt != b->attempt) return a->attempt < b->attempt ? -1 : 1;
  if (a->id != b->id) return a->id < b->id ? -1 : 1;
  return 0;
}

/* Keeps a copy of key as the evidence of slot *dst (replacing the old one). */
static void set_key(rpt__sum *s, char **dst, const char *key) {
  char *k = strdup(key);
  if (k == NULL) {
    s->broken = 1;
    return;
  }
  free(*dst);
  *dst = k;
}

/* no_retry_after over one request, by rpt__v_no_retry_after's rule: the
   first retry after a response that forbids one, the earliest request's. */
static void fold_no_retry(rpt__sum *s, const fgroup *g) {
  for (int k = 0; k < g->n; k++) {
    const fatt *a = &g->a[k];
    rpt__arrival x = {.has_end = a->has_end, .status = a->status, .code = a->code, .method = a->meth};
    if (!rpt__stops(&s->nra_stops, &x, &s->nra_uncoded)) continue;
    s->nra_seen++;
    for (int m = k + 1; m < g->n; m++) {
      const fatt *b = &g->a[m];
      if (b->prov != a->prov || b->meth != a->meth || b->ta < a->te) continue;
      if (s->nra_found && s->nra_seq < g->seq) return;
      s->nra_found = 1;
      s->nra_seq = g->seq;
      s->nra_attempt = b->attempt;
      s->nra_status = a->status;
      s->nra_gap = b->ta - a->te;
      set_key(s, &s->nra_key, g->key);
      set_key(s, &s->nra_provider, a->prov);
      free(s->nra_code);
      s->nra_code = NULL;
      if (a->code) set_key(s, &s->nra_code, a->code);
      return;
    }
  }
}

/* Folds one request into the summary, by the rules of rpt__v_attempts and
   rpt__v_retry_after (verdict_*.c): attempts ordered by attempt then id. */
static void fold_group(rpt__fold *f, fgroup *g) {
  rpt__sum *s = f->s;
  qsort(g->a, (size_t)g->n, sizeof *g->a, cmp_att);
  int nposts = 0;
  for (int k = 0; k < g->n; k++) nposts += !g->a[k].get;
  if (nposts > 0) {
    if (s->hist_n[nposts] == 0 || g->seq < s->hist_seq[nposts]) {
      s->hist_seq[nposts] = g->seq;
      set_key(s, &s->hist_key[nposts], g->key);
    }
    s->hist_n[nposts]++;
  }
  if (s->nra_on) fold_no_retry(s, g);
  for (int k = 0; k < g->n; k++) {
    const fatt *b = &g->a[k], *a = NULL;
    for (int m = k - 1; m >= 0 && a == NULL; m--)
      if (g->a[m].prov == b->prov && g->a[m].meth == b->meth) a = &g->a[m];
    if (a == NULL || !a->has_end || b->ta < a->te || a->ra < 0) continue;
    double ms = b->ta - a->te, margin = ms - a->ra * f->scale;
    s->ra_n++;
    if (s->ra_key == NULL || margin < s->ra_margin ||
        (margin == s->ra_margin && (g->seq < s->ra_seq || (g->seq == s->ra_seq && k < s->ra_k)))) {
      s->ra_margin = margin;
      s->ra_seq = g->seq;
      s->ra_k = k;
      s->ra_ms = ms;
      s->ra_attempt = b->attempt;
      s->ra_status = a->status;
      s->ra_asked_ms = a->ra;
      set_key(s, &s->ra_key, g->key);
    }
  }
}

/* Folds and frees an open request. */
static void close_group(rpt__fold *f, fgroup *g) {
  fold_group(f, g);
  if (fp_put(f, hash_str(g->key)) != 0) f->s->broken = 1;
  for (int k = 0; k < g->n; k++) {
    idnode **pp = &f->ids[hash_id(g->a[k].id) % ID_BUCKETS];
    while (*pp && !((*pp)->id == g->a[k].id && (*pp)->g == g)) pp = &(*pp)->next;
    if (*pp) {
      idnode *d = *pp;
      *pp = d->next;
      free(d);
    }
  }
  fgroup **pk = &f->keys[hash_str(g->key) % KEY_BUCKETS];
  while (*pk && *pk != g) pk = &(*pk)->hnext;
  if (*pk) *pk = g->hnext;
  lru_unlink(f, g);
  f->nopen--;
  f->nheld -= g->n;
  free(g->key);
  free(g->a);
  free(g);
}

static idnode *find_id(const rpt__fold *f, long id) {
  for (idnode *n = f->ids[hash_id(id) % ID_BUCKETS]; n; n = n->next)
    if (n->id == id) return n;
  return NULL;
}

/* 1 when the fold holds an open attempt with this id. */
int rpt__fold_has(const rpt__fold *f, long id) { return f && find_id(f, id) != NULL; }

/* 1 when an id may have been folded and closed already: ids of a trace
   grow, so one at or under the highest so far that is not open may be. */
int rpt__fold_seen_id(const rpt__fold *f, long id) { return f && f->any_id && id <= f->max_id; }

/* Folds the least recently active request whose attempts all ended (one
   still waiting for an end, a hung attempt, stays open). -1 (broken) when
   none of the VICTIM_TRIES oldest can be: too many requests at once. */
static int fold_oldest(rpt__fold *f) {
  fgroup *old = f->lru_head;
  for (int tries = 0; old && old->unended && tries < VICTIM_TRIES; tries++) old = old->next;
  if (old == NULL || old->unended) {
    f->s->broken = 1;
    return -1;
  }
  close_group(f, old);
  return 0;
}

/* Folds an arrival (its arrive event, as the reader parsed it). */
void rpt__fold_arrive(rpt__fold *f, const rpt__arrival *a) {
  rpt__sum *s = f->s;
  if (s->broken) return;
  if (!f->any_id || a->id > f->max_id) f->max_id = a->id;
  f->any_id = 1;
  s->narr++;
  if (s->herd_on) herd_add(f, a->t_arrive);
  int get = strcmp(a->method, "GET") == 0;
  if (get) s->nlookups++;
  else s->nposts++;
  if (a->stream) s->nstreams++;
  if (a->unserved) {
    if (s->nunserved++ == 0) {
      s->first_unserved_id = a->id;
      s->first_unserved_method = strdup(a->method);
      s->first_unserved_path = a->path ? strdup(a->path) : NULL;
      if (s->first_unserved_method == NULL) s->broken = 1;
    }
  } else {
    s->nserved++;
    if (a->stream) s->nserved_stream++;
    if (a->dialect && strcmp(a->dialect, "effect") == 0) s->nserved_effect++;
  }
  uint64_t hk = hash_str(a->key);
  fgroup *g = f->keys[hk % KEY_BUCKETS];
  while (g && strcmp(g->key, a->key) != 0) g = g->hnext;
  if (g == NULL) {
    /* A request folded already cannot take one more attempt. */
    if (fp_has(f, hk)) {
      s->broken = 1;
      return;
    }
    if (f->nopen == RPT__OPEN_MAX && fold_oldest(f) != 0) return;
    g = calloc(1, sizeof *g);
    if (g == NULL || (g->key = strdup(a->key)) == NULL) {
      free(g);
      s->broken = 1;
      return;
    }
    g->seq = f->nseq++;
    g->hnext = f->keys[hk % KEY_BUCKETS];
    f->keys[hk % KEY_BUCKETS] = g;
    f->nopen++;
  } else {
    lru_unlink(f, g);
  }
  lru_push(f, g);
  if (g->n == RPT__GROUP_MAX) {
    s->broken = 1;
    return;
  }
  if (g->n == g->cap) {
    int nc = g->cap ? g->cap * 2 : 4;
    fatt *p = realloc(g->a, (size_t)nc * sizeof *p);
    if (p == NULL) {
      s->broken = 1;
      return;
    }
    g->a = p;
    g->cap = nc;
  }
  idnode *n = malloc(sizeof *n);
  const char *prov = name_of(f, a->provider), *meth = name_of(f, a->method);
  if (n == NULL || prov == NULL || meth == NULL) {
    free(n);
    s->broken = 1;
    return;
  }
  g->a[g->n] = (fatt){.id = a->id, .ta = a->t_arrive, .ra = -1, .attempt = a->attempt,
                      .get = get, .stream = a->stream, .prov = prov, .meth = meth};
  *n = (idnode){a->id, g, g->n, f->ids[hash_id(a->id) % ID_BUCKETS]};
  f->ids[hash_id(a->id) % ID_BUCKETS] = n;
  g->n++;
  g->unended++;
  /* At most RPT__HELD_MAX attempts held in all: the oldest requests go. */
  for (f->nheld++; f->nheld > RPT__HELD_MAX && f->lru_head != g;)
    if (fold_oldest(f) != 0) return;
}

/* Folds an attempt's end (a: the fields of the end event as parsed). */
int rpt__fold_end(rpt__fold *f, long id, const rpt__arrival *a) {
  rpt__sum *s = f->s;
  if (s->broken) return 0;
  idnode *n = find_id(f, id);
  if (n == NULL) return 1;
  fatt *x = &n->g->a[n->k];
  if (x->has_end) return 2;
  if (a->retry_after_ms >= 0) s->asked++;
  if (id == s->first_unserved_id) s->first_unserved_status = a->status;
  if (!x->stream && a->step && strcmp(a->step, "stream") == 0) s->nstreams++;
  x->has_end = 1;
  n->g->unended--;
  x->te = a->t_end;
  x->status = a->status;
  x->ra = a->retry_after_ms;
  if (s->nra_on && a->code && (x->code = name_of(f, a->code)) == NULL) return 0; /* broken */
  return 0;
}

/* 1 once the fold cannot stand for the trace. */
int rpt__fold_broken(const rpt__fold *f) { return f && f->s && f->s->broken; }

/* Folds every request still open (in any order: the summary keeps the
   earliest by first arrival) and returns the summary; frees the fold. */
rpt__sum *rpt__fold_finish(rpt__fold *f) {
  if (f == NULL) return NULL;
  while (f->lru_head) close_group(f, f->lru_head);
  while (f->heap_n && !f->s->broken) herd_pass(f);
  rpt__sum *s = f->s;
  f->s = NULL;
  rpt__fold_free(f);
  return s;
}

void rpt__fold_free(rpt__fold *f) {
  if (f == NULL) return;
  while (f->lru_head) {
    fgroup *g = f->lru_head;
    f->lru_head = g->next;
    free(g->key);
    free(g->a);
    free(g);
  }
  for (int i = 0; i < ID_BUCKETS; i++)
    for (idnode *n = f->ids[i], *nx; n; n = nx) {
      nx = n->next;
      free(n);
    }
  for (int i = 0; i < f->nnames; i++) free(f->names[i]);
  free(f->ring);
  rpt__sum_free(f->s);
  free(f->fp);
  free(f);
}

void rpt__sum_free(rpt__sum *s) {
  if (s == NULL) return;
  for (int i = 0; i <= RPT__GROUP_MAX; i++) free(s->hist_key[i]);
  free(s->ra_key);
  free(s->nra_key);
  free(s->nra_code);
  free(s->nra_provider);
  free(s->first_unserved_method);
  free(s->first_unserved_path);
  free(s);
}

/* 1 when tr's arrivals were not all kept. */
int rpt__trace_folded(const rpt_trace *tr) {
  return tr && tr->sum && (tr->sum->broken || tr->sum->narr > tr->narr);
}

/* Arrivals of the whole trace. */
long rpt__trace_narr(const rpt_trace *tr) {
  if (tr == NULL) return 0;
  return tr->sum && tr->sum->narr > tr->narr ? tr->sum->narr : tr->narr;
}

/* Logical requests with an attempt that is not a lookup (GET). */
int rpt__trace_requests(const rpt_trace *tr) {
  int n = 0;
  if (tr == NULL) return 0;
  if (rpt__trace_folded(tr)) {
    for (int k = 1; k <= RPT__GROUP_MAX; k++) n += (int)tr->sum->hist_n[k];
    return n;
  }
  for (int g = 0; g < tr->ngroups; g++)
    if (tr->groups[g].n_post) n++;
  return n;
}

/* Attempts that are not lookups (GET), kept or folded. */
long rpt__trace_posts(const rpt_trace *tr) {
  long n = 0;
  if (tr == NULL) return 0;
  if (rpt__trace_folded(tr)) return tr->sum->nposts;
  for (int i = 0; i < tr->narr; i++)
    if (!tr->arr[i].method || strcmp(tr->arr[i].method, "GET") != 0) n++;
  return n;
}
