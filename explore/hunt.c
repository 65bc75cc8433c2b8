/*
 * hunt.c - the search: batches of schedules (random ones, and neighbours of
 * those that made the client do something new), each played once (results
 * cached by schedule), a failing one checked against the guarded client and
 * shrunk to the smallest schedule that fails the same verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

#define MAX_NAMES 32
#define MAX_CANDIDATES 256

typedef struct seen {
  xpl_schedule s;
  int reference;
  uint32_t fail, pass; /* bit per interned verdict name */
  int attempts;
  long run;            /* its run's number, from 1 */
} seen;

typedef struct hunt {
  const xpl_hunt_opts *o;
  xpl_play_fn play;
  void *play_arg;
  xpl_progress_fn progress;
  void *progress_arg;
  xpl_hunt_result *res;
  long budget;
  char names[MAX_NAMES][XPL_NAMELEN];
  int nnames;
  uint32_t breaking;   /* the verdicts a finding may fail */
  seen *cache;
  size_t ncache, capcache;
  uint64_t *sigs;      /* behaviours seen, for the guided search */
  size_t nsigs, capsigs;
  xpl_schedule *corpus;
  size_t ncorpus, capcorpus;
  long index;          /* next schedule index of the search */
  char *err;
} hunt;

static int intern(hunt *h, const char *name) {
  for (int i = 0; i < h->nnames; i++)
    if (strcmp(h->names[i], name) == 0) return i;
  if (h->nnames >= MAX_NAMES) return -1;
  snprintf(h->names[h->nnames], XPL_NAMELEN, "%s", name);
  return h->nnames++;
}

static int grow(void **p, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 64;
  while (nc < need) nc *= 2;
  void *np = realloc(*p, nc * size);
  if (!np) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

static long find(const hunt *h, const xpl_schedule *s, int reference) {
  for (size_t i = 0; i < h->ncache; i++)
    if (h->cache[i].reference == reference && xpl__same(&h->cache[i].s, s)) return (long)i;
  return -1;
}

/* Plays those of s[0..n) not yet played (reference or not) and returns
   their cache entries in got[]; the outcome of the first failure of a
   breaking verdict in each newly played one is kept in ev[i] (when ev).
   -1 on a play error or out of memory. */
static int play_batch(hunt *h, int reference, const xpl_schedule *s, int n, seen **got,
                      xpl_outcome *outs) {
  char *lua[XPL_BATCH];
  long idx[XPL_BATCH];
  int which[XPL_BATCH], np = 0;
  long at[XPL_BATCH]; /* cache positions: pointers would move as it grows */
  for (int i = 0; i < n; i++) {
    got[i] = NULL;
    at[i] = find(h, &s[i], reference);
    if (at[i] >= 0) continue;
    if (h->res->runs + np >= h->budget) continue; /* left unplayed: got[i] stays NULL */
    char name[64];
    snprintf(name, sizeof name, "hunt schedule %ld", h->res->runs + np + 1);
    xpl_lua_opts lo = h->o->lua;
    lo.name = name;
    lua[np] = xpl_schedule_lua(&s[i], &lo);
    if (!lua[np]) {
      for (int j = 0; j < np; j++) free(lua[j]);
      snprintf(h->err, XPL_ERRLEN, "out of memory");
      return -1;
    }
    idx[np] = h->res->runs + np;
    which[np++] = i;
  }
  if (np == 0) {
    for (int i = 0; i < n; i++) {
      if (at[i] >= 0) got[i] = &h->cache[at[i]];
      outs[i].nv = -1; /* from the cache: no evidence at hand */
    }
    return 0;
  }
  memset(outs, 0, sizeof *outs * (size_t)np);
  int rc = h->play(h->play_arg, reference, np, lua, idx, outs, h->err);
  for (int j = 0; j < np; j++) free(lua[j]);
  if (rc != 0) return -1;
  h->res->runs += np;
  if (!reference) {
    h->res->client_runs += np;
    for (int j = 0; j < np; j++) h->res->silent += outs[j].attempts == 0 && !outs[j].error;
  }
  if (grow((void **)&h->cache, &h->capcache, h->ncache + (size_t)np, sizeof *h->cache) != 0) {
    snprintf(h->err, XPL_ERRLEN, "out of memory");
    return -1;
  }
  for (int j = 0; j < np; j++) {
    const xpl_outcome *oc = &outs[j];
    if (oc->error) {
      snprintf(h->err, XPL_ERRLEN, "%s", oc->nv > 0 ? oc->v[0].evidence : "a schedule could not be played");
      return -1;
    }
    seen *e = &h->cache[h->ncache++];
    memset(e, 0, sizeof *e);
    e->s = s[which[j]];
    e->reference = reference;
    e->attempts = oc->attempts;
    e->run = h->res->runs - np + j + 1;
    for (int k = 0; k < oc->nv; k++) {
      int id = intern(h, oc->v[k].name);
      if (id < 0) continue;
      if (oc->v[k].status == 1) e->fail |= 1u << id;
      else if (oc->v[k].status == 0) e->pass |= 1u << id;
    }
    at[which[j]] = (long)(h->ncache - 1);
  }
  for (int i = 0; i < n; i++)
    if (at[i] >= 0) got[i] = &h->cache[at[i]];
  /* outs[j] belongs to which[j]: move them into place for the caller */
  for (int j = np - 1; j >= 0; j--)
    if (which[j] != j) outs[which[j]] = outs[j];
  for (int i = 0; i < n; i++) {
    int fresh = 0;
    for (int j = 0; j < np; j++) fresh |= which[j] == i;
    if (!fresh) outs[i].nv = -1; /* from the cache: no evidence at hand */
  }
  return 0;
}

/* The first breaking verdict e fails, or -1. */
static int first_break(const hunt *h, const seen *e) {
  uint32_t m = e->fail & h->breaking;
  for (int i = 0; i < h->nnames; i++)
    if ((m >> i) & 1u) return i;
  return -1;
}

static void evidence_of(const xpl_outcome *oc, const char *name, char *out) {
  if (oc->nv < 0) return;
  for (int k = 0; k < oc->nv; k++)
    if (strcmp(oc->v[k].name, name) == 0) {
      snprintf(out, XPL_EVIDENCE, "%s", oc->v[k].evidence);
      return;
    }
}

/* 1 when the guarded client does not fail verdict id on s (or no check is
   asked); 0 when it does; 2 when the budget left no run to check it;
   -1 on error. */
static int reference_ok(hunt *h, const xpl_schedule *s, int id) {
  if (!h->o->reference) return 1;
  seen *got[1];
  xpl_outcome *oc = calloc(1, sizeof *oc);
  if (!oc) return -1;
  int rc = play_batch(h, 1, s, 1, got, oc);
  free(oc);
  if (rc != 0) return -1;
  if (!got[0]) return 2; /* the budget ran out: unchecked is no finding */
  return ((got[0]->fail >> id) & 1u) ? 0 : 1;
}

static void report(hunt *h, const char *phase) {
  if (h->progress) h->progress(h->progress_arg, h->res->runs, h->res->nfindings, phase);
}

/* Shrinks f->shrunk (failing verdict id) as far as it goes. */
static int shrink(hunt *h, xpl_finding *f, int id) {
  xpl_schedule *cand = malloc(sizeof *cand * MAX_CANDIDATES);
  xpl_outcome *outs = malloc(sizeof *outs * XPL_BATCH);
  if (!cand || !outs) {
    free(cand);
    free(outs);
    snprintf(h->err, XPL_ERRLEN, "out of memory");
    return -1;
  }
  long start = h->res->runs;
  int progress = 1, rc = 0;
  while (progress && rc == 0) {
    progress = 0;
    int nc = xpl_shrink_candidates(&f->shrunk, &h->o->space, cand, MAX_CANDIDATES);
    for (int at = 0; at < nc && !progress && rc == 0; at += XPL_BATCH) {
      if (h->res->runs >= h->budget || (h->o->stop && h->o->stop(h->play_arg))) {
        f->cut_short = 1;
        break;
      }
      int n = nc - at < XPL_BATCH ? nc - at : XPL_BATCH;
      seen *got[XPL_BATCH];
      if (play_batch(h, 0, cand + at, n, got, outs) != 0) { rc = -1; break; }
      uint32_t fails[XPL_BATCH]; /* copied: the reference check grows the cache */
      for (int i = 0; i < n; i++) fails[i] = got[i] ? got[i]->fail : 0;
      for (int i = 0; i < n; i++) {
        if (!((fails[i] >> id) & 1u)) continue;
        int ok = reference_ok(h, &cand[at + i], id);
        if (ok < 0) { rc = -1; break; }
        if (ok != 1) continue;
        f->shrunk = cand[at + i];
        f->shrink_steps++;
        evidence_of(&outs[i], h->names[id], f->evidence);
        progress = 1;
        break;
      }
      report(h, "shrinking");
    }
  }
  f->shrink_runs += h->res->runs - start;
  free(cand);
  free(outs);
  return rc;
}

/* The shape that makes two findings the same: verdict and kinds (the same
   fault breaking a chat and a stream the same way is one finding). */
static int same_shape(const xpl_finding *a, const xpl_schedule *s, const char *verdict) {
  if (strcmp(a->verdict, verdict) != 0 || a->shrunk.n != s->n) return 0;
  for (int i = 0; i < s->n; i++)
    if (a->shrunk.s[i].kind != s->s[i].kind) return 0;
  return 1;
}

/* A new behaviour (attempts, verdict results) makes s a parent of the
   guided search. */
static int note_behaviour(hunt *h, const seen *e) {
  uint64_t sig = ((uint64_t)e->s.call << 56) ^ ((uint64_t)(e->attempts & 0xff) << 48) ^
                 ((uint64_t)e->fail << 24) ^ (uint64_t)e->pass;
  for (size_t i = 0; i < h->nsigs; i++)
    if (h->sigs[i] == sig) return 0;
  if (grow((void **)&h->sigs, &h->capsigs, h->nsigs + 1, sizeof *h->sigs) != 0 ||
      grow((void **)&h->corpus, &h->capcorpus, h->ncorpus + 1, sizeof *h->corpus) != 0)
    return -1;
  h->sigs[h->nsigs++] = sig;
  h->corpus[h->ncorpus++] = e->s;
  return 0;
}

/* The next schedule of the search not tried yet (up to 50 draws); --from
   is the first. */
static void next_schedule(hunt *h, xpl_schedule *out) {
  if (h->o->from && h->index == 0) {
    h->index++;
    *out = *h->o->from;
    return;
  }
  for (int tries = 0; tries < 50; tries++) {
    long i = h->index++;
    uint64_t seed = h->o->seed;
    if (h->o->guided && h->ncorpus > 0 && xpl__pick(seed, i, 5, 2) == 1)
      xpl_gen_mutate(&h->o->space, seed, i, &h->corpus[xpl__pick(seed, i, 6, (uint32_t)h->ncorpus)], out);
    else
      xpl_gen_random(&h->o->space, seed, i, out);
    if (find(h, out, 0) < 0) return;
  }
}

static int add_finding(hunt *h, const xpl_finding *f) {
  xpl_finding *nf = realloc(h->res->findings, sizeof *nf * (size_t)(h->res->nfindings + 1));
  if (!nf) return -1;
  h->res->findings = nf;
  nf[h->res->nfindings++] = *f;
  return 0;
}

/* A failing schedule: checked, shrunk, kept when new. */
static int consider(hunt *h, const seen *e, const xpl_outcome *oc, int id) {
  int ok = reference_ok(h, &e->s, id); /* e is the caller's copy: the cache may move */
  if (ok < 0) return -1;
  if (ok != 1) { /* failed by the guard too, or not checked for want of budget */
    h->res->rejected += ok == 0;
    return 0;
  }
  xpl_finding f;
  memset(&f, 0, sizeof f);
  f.found = f.shrunk = e->s;
  snprintf(f.verdict, sizeof f.verdict, "%s", h->names[id]);
  evidence_of(oc, f.verdict, f.evidence);
  f.found_at = e->run;
  f.reference = h->o->reference;
  for (int i = 0; i < h->res->nfindings; i++)
    if (same_shape(&h->res->findings[i], &f.found, f.verdict)) return 0;
  if (shrink(h, &f, id) != 0) return -1;
  for (int i = 0; i < h->res->nfindings; i++)
    if (same_shape(&h->res->findings[i], &f.shrunk, f.verdict)) return 0;
  if (add_finding(h, &f) != 0) {
    snprintf(h->err, XPL_ERRLEN, "out of memory");
    return -1;
  }
  return 0;
}

static int setup(hunt *h, char err[XPL_ERRLEN]) {
  const char *p = h->o->verdicts;
  if (!p || !*p) {
    snprintf(err, XPL_ERRLEN, "no verdicts to hunt for");
    return -1;
  }
  while (*p) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    while (len && *p == ' ') p++, len--;
    char name[XPL_NAMELEN];
    if (len == 0 || len >= sizeof name) {
      snprintf(err, XPL_ERRLEN, "bad verdict list '%s'", h->o->verdicts);
      return -1;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    int id = intern(h, name);
    if (id < 0) {
      snprintf(err, XPL_ERRLEN, "more than %d verdicts", MAX_NAMES);
      return -1;
    }
    h->breaking |= 1u << id;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

int xpl_hunt(const xpl_hunt_opts *o, xpl_play_fn play, void *play_arg, xpl_progress_fn progress,
             void *progress_arg, xpl_hunt_result *res, char err[XPL_ERRLEN]) {
  memset(res, 0, sizeof *res);
  hunt h = {.o = o, .play = play, .play_arg = play_arg, .progress = progress,
            .progress_arg = progress_arg, .res = res, .err = err};
  h.budget = o->budget > 0 ? o->budget : 200;
  int max_findings = o->max_findings > 0 ? o->max_findings : 1;
  if (setup(&h, err) != 0) return -1;
  /* --from: its neighbours are the guided search's first parents */
  if (o->from) {
    if (grow((void **)&h.corpus, &h.capcorpus, 1, sizeof *h.corpus) != 0) {
      snprintf(err, XPL_ERRLEN, "out of memory");
      return -1;
    }
    h.corpus[h.ncorpus++] = *o->from;
  }
  xpl_outcome *outs = malloc(sizeof *outs * XPL_BATCH);
  int rc = outs ? 0 : -1;
  if (!outs) snprintf(err, XPL_ERRLEN, "out of memory");
  while (rc == 0 && res->runs < h.budget && res->nfindings < max_findings) {
    if (o->stop && o->stop(play_arg)) break;
    xpl_schedule batch[XPL_BATCH];
    seen *got[XPL_BATCH];
    for (int i = 0; i < XPL_BATCH; i++) next_schedule(&h, &batch[i]);
    long before = res->runs;
    if (play_batch(&h, 0, batch, XPL_BATCH, got, outs) != 0) { rc = -1; break; }
    res->schedules += res->runs - before;
    report(&h, "searching");
    seen mine[XPL_BATCH]; /* copied: checking and shrinking grow the cache */
    int fresh[XPL_BATCH];
    for (int i = 0; i < XPL_BATCH; i++) {
      fresh[i] = got[i] && outs[i].nv >= 0; /* played now, not seen before */
      if (fresh[i]) mine[i] = *got[i];
    }
    for (int i = 0; i < XPL_BATCH && rc == 0 && res->nfindings < max_findings; i++) {
      if (!fresh[i]) continue;
      if (note_behaviour(&h, &mine[i]) != 0) {
        snprintf(err, XPL_ERRLEN, "out of memory");
        rc = -1;
        break;
      }
      int id = first_break(&h, &mine[i]);
      if (id >= 0) rc = consider(&h, &mine[i], &outs[i], id);
    }
    if (res->runs == before) break; /* nothing new left to try */
  }
  res->stopped = res->runs >= h.budget || (o->stop && o->stop(play_arg));
  free(outs);
  free(h.cache);
  free(h.sigs);
  free(h.corpus);
  return rc;
}

void xpl_hunt_result_clear(xpl_hunt_result *res) {
  free(res->findings);
  memset(res, 0, sizeof *res);
}
