/*
 * html_timeline.c - the SVG timeline of one scenario in the HTML report: one
 * row per logical request (attempts as bars coloured by result, waits,
 * Retry-After windows, the deadline, side effects), named by what a person
 * knows (call N, the effect or tool, the provider). When a scenario has many
 * requests, alike ones (same effect or tool, same provider) are one band
 * with their count: a histogram of the attempts that began, coloured by
 * result, over the calls in flight (grey), so a herd of 100 clients is one
 * band that shows the herd instead of 100 rows. Every text from a trace is
 * untrusted and escaped.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/html_int.h"

#define MAX_ROWS 150     /* rows drawn per timeline; the rest are counted */
#define LABEL_W 270      /* px for row labels */
#define PLOT_W 740       /* px for the time axis */
#define ROW_H 20
#define BAR_H 12
#define TOP 26           /* px above the first row, for the axis */
#define LABEL_CHARS 42   /* characters of a row label that fit LABEL_W */
/* A deadline or a Retry-After window ending past FAR x the activity is not
   drawn to scale (it would squeeze the attempts into a sliver): the axis
   covers the activity and the far end is marked at its edge with its value. */
#define FAR 1.5
#define MIN_BAR_W 5.0    /* px: a fast attempt stays visible */
/* Attempts drawn per row: the first and the last ROW_ENDS; those between
   are one grey band that counts them, so a request retried 200,000 times
   does not make a page of 200,000 bars. */
#define ROW_ENDS 20
/* Side effects drawn: the first and the last FX_ENDS; the rest counted. */
#define FX_ENDS 100
/* More requests than BAND_OVER in a scenario: BAND_MIN or more alike ones
   are one band. A few requests stay rows, each readable. */
#define BAND_OVER 16
#define BAND_MIN 4
#define BAND_H 56        /* px of a band's row */
#define BIN_PX 4         /* px of one histogram column */
#define NBINS (PLOT_W / BIN_PX)
#define MAX_KINDS 64     /* distinct kinds of request counted for bands */

const char rpt__html_timeline_css[] =
    ".legend span{display:inline-block;margin-right:12px;font-size:12px;color:#444}"
    ".legend i{display:inline-block;width:14px;height:10px;margin-right:4px;border-radius:2px;"
    "vertical-align:-1px}"
    "svg.tl{display:block;max-width:100%;height:auto;background:#fff}"
    "svg.tl text{font:11px ui-monospace,monospace;fill:#333}"
    "svg.tl .axis{stroke:#ccc}svg.tl .grid{stroke:#eee}"
    ".ok{fill:#2e9e44}.transient{fill:#e0a800}.permanent{fill:#d03030}.shape{fill:#8a5cd0}"
    ".lost{fill:#8c8c8c}.error{fill:#5a0000}.open{fill:#d0d0d0;stroke:#777;"
    "stroke-dasharray:2 2}"
    ".wait{stroke:#999;stroke-dasharray:3 3;stroke-width:1.2}"
    ".ra{fill:#e0a800;fill-opacity:.16}"
    ".deadline{stroke:#d03030;stroke-width:1.5;stroke-dasharray:6 3}"
    ".fx-applied{fill:#1558b0}.fx-replayed{fill:#fff;stroke:#1558b0;stroke-width:1.5}"
    ".fx-repeat{fill:#d03030;stroke:#5a0000;stroke-width:1.5}"
    "svg.tl text.repeat{fill:#d03030;font-weight:700}svg.tl text.far{fill:#9a6700}"
    "svg.tl text.band-n{font-weight:700}svg.tl text.sub{fill:#777}"
    ".inflight{fill:#e6e6e6}.band-bg{fill:#fafafa;stroke:#ddd}.bin-hit{fill:transparent}"
    ".fx-conflict{fill:#d03030}.fx-lookup,.fx-ledger_down,.fx-other{fill:#fff;stroke:#555;"
    "stroke-width:1.2}";

void rpt__html_legend(FILE *f) {
  static const struct {
    const char *label, *colour;
  } items[] = {
      {"ok (2xx complete)", "#2e9e44"},
      {"transient (429, 5xx, 408)", "#e0a800"},
      {"permanent (4xx, quota)", "#d03030"},
      {"shape (truncated, garbage)", "#8a5cd0"},
      {"dropped / reset / abort / stalled", "#8c8c8c"},
      {"still open", "#d0d0d0"},
  };
  fputs("<p class=\"legend\">", f);
  for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
    fprintf(f, "<span><i style=\"background:%s\"></i>%s</span>", items[i].colour, items[i].label);
  fputs("<span><i style=\"background:#e0a800;opacity:.3\"></i>Retry-After window</span>"
        "<span><i style=\"background:#d03030;height:2px;vertical-align:3px\"></i>deadline</span>"
        "<span><i style=\"background:#1558b0;transform:rotate(45deg);width:8px;height:8px\"></i>"
        "side effect</span>"
        "<span><i style=\"background:#e6e6e6\"></i>calls in flight (a band of many calls; "
        "its bars: attempts that began)</span></p>\n",
        f);
}

/* ------------------------------------------------------------ axis */

/* The one unit of an axis reaching tmax: ms below 10 s, else s. */
static const char *axis_unit(double tmax, double *div) {
  if (tmax < 10000) {
    *div = 1;
    return "ms";
  }
  *div = 1000;
  return "s";
}

/* A "nice" tick step (1, 2 or 5 x 10^k ms) giving at most about 8 ticks. */
static double tick_step(double tmax) {
  double raw = tmax / 8, p = pow(10, floor(log10(raw > 0 ? raw : 1)));
  double steps[] = {1, 2, 5, 10};
  for (int i = 0; i < 4; i++)
    if (steps[i] * p >= raw) return steps[i] * p;
  return 10 * p;
}

static double X(double tmax, double t) {
  if (t < 0) t = 0;
  if (t > tmax) t = tmax; /* past the axis: drawn at its edge */
  return LABEL_W + t / tmax * PLOT_W;
}

/* 1 if item k of n is drawn (among the first or the last `ends`). */
static int drawn(int k, int n, int ends) { return k < ends || k >= n - ends; }

/* ------------------------------------------------------------ labels */

static const char *fx_class(const char *action) {
  static const char *const known[] = {"applied", "replayed", "conflict", "lookup", "ledger_down", NULL};
  for (int i = 0; known[i]; i++)
    if (strcmp(action, known[i]) == 0) return known[i];
  return "other";
}

/* The client call (its number) a request belongs to: among the calls whose
   span holds its first attempt, the one whose span best matches the
   request's (concurrent calls overlap); -1 when the trace has no client
   account of it. */
static int row_call(const rpt_trace *tr, const rpt__group *gr) {
  const rpt__arrival *a0 = &tr->arr[gr->idx[0]], *an = &tr->arr[gr->idx[gr->n - 1]];
  double end = an->has_end ? an->t_end : an->t_arrive;
  int best = -1;
  double miss = 0;
  for (int i = 0; i < tr->ncli; i++) {
    const rpt__client_ev *c = &tr->cli[i];
    if (c->external || c->total_ms < 0) continue;
    double c0 = c->t - c->total_ms;
    /* 5 ms of slack: a merged trace rebuilds t and total_ms rounded to the
       ms, which put a first attempt 1 ms outside its call (cli_shard_merge) */
    if (a0->t_arrive < c0 - 5 || a0->t_arrive > c->t + 5) continue;
    double m = fabs(a0->t_arrive - c0) + fabs(c->t - end);
    if (best < 0 || m < miss) {
      best = c->call;
      miss = m;
    }
  }
  return best;
}

/* What a request is about: "effect NAME" when a side effect ran in it
   (fx_of: the first named effect of each group, or -1), "tool NAME" when an
   answer called a tool, else "" (a chat). */
static void row_what(const rpt_trace *tr, int g, const int *fx_of, char *out, size_t n) {
  out[0] = '\0';
  if (fx_of[g] >= 0) {
    snprintf(out, n, "effect %.60s", tr->eff[fx_of[g]].name);
    return;
  }
  const rpt__group *gr = &tr->groups[g];
  for (int k = 0; k < gr->n; k++) {
    const char *tj = tr->arr[gr->idx[k]].tool_calls_json;
    const char *tc = tj ? strstr(tj, "\"name\":") : NULL;
    if (tc == NULL) continue;
    tc += 7;
    while (*tc == ' ' || *tc == '\t') tc++;
    if (*tc == '"') {
      size_t len = strcspn(tc + 1, "\"");
      snprintf(out, n, "tool %.*s", (int)(len < 60 ? len : 60), tc + 1);
      return;
    }
  }
}

/* The provider (or "first→last" along a chain) of a request; "" for the
   effect endpoint. */
static void row_who(const rpt_trace *tr, const rpt__group *gr, char *out, size_t n) {
  const rpt__arrival *a0 = &tr->arr[gr->idx[0]];
  const char *last = a0->provider;
  for (int k = 1; k < gr->n; k++)
    if (strcmp(tr->arr[gr->idx[k]].provider, a0->provider) != 0) last = tr->arr[gr->idx[k]].provider;
  if (strcmp(a0->provider, "(none)") == 0) out[0] = '\0';
  else if (last != a0->provider) snprintf(out, n, "%.40s\xE2\x86\x92%.40s", a0->provider, last);
  else snprintf(out, n, "%.60s", a0->provider);
}

/* "head · what · who" with the empty parts left out. */
static void join_label(char *out, size_t n, const char *head, const char *what, const char *who) {
  snprintf(out, n, "%s%s%s%s%s", head, what[0] ? " \xC2\xB7 " : "", what, who[0] ? " \xC2\xB7 " : "",
           who);
}

static uint64_t fnv(const char *a, const char *b) {
  uint64_t h = 1469598103934665603ULL;
  for (const char *s = a; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  h = (h ^ '|') * 1099511628211ULL;
  for (const char *s = b; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* ------------------------------------------------------------ layout */

/* One drawn row: a request (n == 1, g its group) or a band of alike ones. */
typedef struct slot {
  int g;        /* the first group of the row */
  int n;        /* groups in it */
  uint64_t kind; /* a band's kind */
  int y, h;
} slot;

typedef struct layout {
  slot *s;
  int ns, height;
  int *slot_of; /* per group: its slot, or -1 when not drawn */
  int *fx_of;   /* per group: its first named effect, or -1 */
  uint64_t *kind;
  int undrawn;  /* groups in no slot */
} layout;

static void layout_free(layout *L) {
  free(L->s);
  free(L->slot_of);
  free(L->fx_of);
  free(L->kind);
}

/* Sorts the requests into rows and bands. Returns 0, or -1 out of memory. */
static int layout_build(const rpt_trace *tr, layout *L) {
  int ng = tr->ngroups;
  memset(L, 0, sizeof *L);
  L->s = calloc(MAX_ROWS + 1, sizeof *L->s);
  L->slot_of = malloc(sizeof *L->slot_of * (size_t)(ng + 1));
  L->fx_of = malloc(sizeof *L->fx_of * (size_t)(ng + 1));
  L->kind = calloc((size_t)ng + 1, sizeof *L->kind);
  if (!L->s || !L->slot_of || !L->fx_of || !L->kind) return -1;
  for (int g = 0; g < ng; g++) L->fx_of[g] = -1;
  for (int i = 0; i < tr->neff; i++) {
    const rpt__arrival *a = rpt__trace_find(tr, tr->eff[i].id);
    if (a && tr->eff[i].name && L->fx_of[a->group] < 0) L->fx_of[a->group] = i;
  }
  /* The kinds and how many requests each has. */
  uint64_t kinds[MAX_KINDS];
  int kn[MAX_KINDS], nk = 0;
  for (int g = 0; g < ng && ng > BAND_OVER; g++) {
    char what[80], who[100];
    row_what(tr, g, L->fx_of, what, sizeof what);
    row_who(tr, &tr->groups[g], who, sizeof who);
    L->kind[g] = fnv(what, who);
    int k = 0;
    while (k < nk && kinds[k] != L->kind[g]) k++;
    if (k == nk && nk < MAX_KINDS) {
      kinds[nk] = L->kind[g];
      kn[nk++] = 0;
    }
    if (k < nk) kn[k]++;
  }
  int y = TOP;
  for (int g = 0; g < ng; g++) {
    L->slot_of[g] = -1;
    int band = 0;
    for (int k = 0; ng > BAND_OVER && k < nk; k++)
      if (kinds[k] == L->kind[g]) band = kn[k] >= BAND_MIN;
    if (band) { /* into its kind's band, made at its first request */
      int s = 0;
      while (s < L->ns && !(L->s[s].n && L->s[s].kind == L->kind[g] && L->s[s].h == BAND_H)) s++;
      if (s < L->ns) {
        L->s[s].n++;
        L->slot_of[g] = s;
        continue;
      }
    }
    if (L->ns == MAX_ROWS) {
      L->undrawn++;
      continue;
    }
    slot *sl = &L->s[L->ns];
    sl->g = g;
    sl->n = 1;
    sl->kind = L->kind[g];
    sl->y = y;
    sl->h = band ? BAND_H : ROW_H;
    y += sl->h;
    L->slot_of[g] = L->ns++;
  }
  L->height = y - TOP;
  return 0;
}

/* ------------------------------------------------------------ a row */

static void arrival_title(FILE *f, const rpt__arrival *a, double scale, double t_last) {
  char t1[32], t2[32];
  fprintf(f, "<title>attempt %d (#%ld) ", a->attempt, a->id);
  rpt__html_text(f, a->method);
  fputc(' ', f);
  rpt__html_text(f, a->path);
  fprintf(f, " at ");
  rpt__html_text(f, a->provider);
  fprintf(f, "\n%s to %s: ", rpt__fmt_ms(a->t_arrive, t1, sizeof t1),
          a->has_end ? rpt__fmt_ms(a->t_end, t2, sizeof t2) : "(still open)");
  if (a->has_end) {
    if (a->step) {
      rpt__html_text(f, a->step);
      fputc(' ', f);
    }
    if (a->status) fprintf(f, "%d ", a->status);
    rpt__html_text(f, a->how);
    if (a->code) {
      fputc(' ', f);
      rpt__html_text(f, a->code);
    }
    if (a->retry_after_ms >= 0)
      fprintf(f, "\nRetry-After %s (wait %s)", rpt__fmt_ms(a->retry_after_ms, t1, sizeof t1),
              rpt__fmt_ms(a->retry_after_ms * scale, t2, sizeof t2));
    if (a->tokens_in || a->tokens_out)
      fprintf(f, "\ntokens billed %ld in + %ld out", a->tokens_in, a->tokens_out);
  } else {
    fprintf(f, "open at the end of the trace (%s)", rpt__fmt_ms(t_last, t1, sizeof t1));
  }
  fputs("</title>", f);
}

/* The axis's reach and what a timeline is drawn against. */
typedef struct frame {
  const rpt__entry *e;
  const rpt_trace *tr;
  const layout *L;
  double tmax, first;
} frame;

/* One request's row: its Retry-After windows, waits, attempts, deadline. */
static void draw_row(FILE *f, const frame *fr, const slot *sl) {
  const rpt_trace *tr = fr->tr;
  const rpt__group *gr = &tr->groups[sl->g];
  const rpt__arrival *a0 = &tr->arr[gr->idx[0]];
  double tmax = fr->tmax, scale = fr->e->scale, mid = sl->y + ROW_H / 2.0;
  char tb[32], what[80], who[100], head[32], label[240];
  fprintf(f, "<text x=\"4\" y=\"%.1f\" dominant-baseline=\"middle\"><title>", mid);
  rpt__html_text(f, gr->key);
  fputs("</title>", f);
  row_what(tr, sl->g, fr->L->fx_of, what, sizeof what);
  row_who(tr, gr, who, sizeof who);
  int call = row_call(tr, gr);
  if (call >= 0) snprintf(head, sizeof head, "call %d", call);
  else snprintf(head, sizeof head, "request %d", sl->g + 1);
  join_label(label, sizeof label, head, what, who);
  rpt__html_label(f, label, LABEL_CHARS);
  fputs("</text>\n", f);
  /* Retry-After windows first, under the bars. */
  for (int k = 0; k < gr->n; k++) {
    const rpt__arrival *a = &tr->arr[gr->idx[k]];
    if (!drawn(k, gr->n, ROW_ENDS) || !a->has_end || a->retry_after_ms < 0) continue;
    double ra_end = a->t_end + a->retry_after_ms * scale;
    double x1 = X(tmax, a->t_end), x2 = X(tmax, ra_end);
    fprintf(f, "<rect class=\"ra\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
               "<title>Retry-After %s after attempt %d</title></rect>\n",
            x1, sl->y + 1, fmax(x2 - x1, 1), ROW_H - 2,
            rpt__fmt_ms(a->retry_after_ms * scale, tb, sizeof tb), a->attempt);
    if (ra_end > tmax)
      fprintf(f, "<text class=\"far\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
                 "dominant-baseline=\"middle\">Retry-After %s \xE2\x86\x92</text>\n",
              LABEL_W + PLOT_W - 2, mid, rpt__fmt_ms(a->retry_after_ms * scale, tb, sizeof tb));
  }
  /* Waits between successive attempts. */
  for (int k = 1; k < gr->n; k++) {
    const rpt__arrival *p = &tr->arr[gr->idx[k - 1]], *a = &tr->arr[gr->idx[k]];
    if (!drawn(k, gr->n, ROW_ENDS) || !drawn(k - 1, gr->n, ROW_ENDS)) continue;
    if (!p->has_end || a->t_arrive <= p->t_end) continue;
    fprintf(f, "<line class=\"wait\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
               "<title>waited %s</title></line>\n",
            X(tmax, p->t_end), mid, X(tmax, a->t_arrive), mid,
            rpt__fmt_ms(a->t_arrive - p->t_end, tb, sizeof tb));
  }
  /* Attempts: the first and last ROW_ENDS, the middle as one band. */
  if (gr->n > 2 * ROW_ENDS) {
    const rpt__arrival *m0 = &tr->arr[gr->idx[ROW_ENDS]];
    const rpt__arrival *m1 = &tr->arr[gr->idx[gr->n - ROW_ENDS - 1]];
    double x1 = X(tmax, m0->t_arrive), x2 = X(tmax, m1->has_end ? m1->t_end : tr->t_last);
    fprintf(f, "<rect class=\"omitted\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
               "style=\"fill:#bbb\"><title>attempts %d to %d (%d) not drawn one by one</title>"
               "</rect>\n",
            x1, mid - BAR_H / 2.0, fmax(x2 - x1, MIN_BAR_W), BAR_H, m0->attempt, m1->attempt,
            gr->n - 2 * ROW_ENDS);
  }
  for (int k = 0; k < gr->n; k++) {
    const rpt__arrival *a = &tr->arr[gr->idx[k]];
    if (!drawn(k, gr->n, ROW_ENDS)) continue;
    double end = a->has_end ? a->t_end : tr->t_last;
    double x1 = X(tmax, a->t_arrive), x2 = X(tmax, end);
    fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"2\">",
            rpt__arrival_class(a), x1, mid - BAR_H / 2.0, fmax(x2 - x1, MIN_BAR_W), BAR_H);
    arrival_title(f, a, scale, tr->t_last);
    fputs("</rect>\n", f);
  }
  /* The deadline of this request, when rows start at different times. */
  double dl = fr->e->deadline_ms;
  if (dl > 0 && a0->t_arrive - fr->first > tmax * 0.005 && a0->t_arrive + dl <= tmax) {
    double x = X(tmax, a0->t_arrive + dl);
    fprintf(f, "<line class=\"deadline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x,
            sl->y + 1, x, sl->y + ROW_H - 1);
  }
}

/* ------------------------------------------------------------ a band */

/* The result classes a band's histogram stacks, bottom first. */
static const char *const band_cls[] = {"ok", "transient", "permanent", "shape", "lost", "error", "open"};
#define NCLS (int)(sizeof band_cls / sizeof band_cls[0])

static int cls_index(const char *c) {
  for (int i = 0; i < NCLS; i++)
    if (strcmp(c, band_cls[i]) == 0) return i;
  return NCLS - 1;
}

typedef struct band_stats {
  int bins[NBINS][NCLS]; /* attempts that began in each column, by result */
  int flight[NBINS];     /* attempts in flight at each column's middle */
  int attempts, peak, top; /* top: the fullest column */
} band_stats;

/* An attempt's start (+1) or end (-1), for counting the ones in flight. */
typedef struct edge {
  double t;
  int d;
} edge;

/* By time; at the same instant an end before a start. */
static int cmp_edge(const void *a, const void *b) {
  const edge *x = a, *y = b;
  if (x->t != y->t) return x->t < y->t ? -1 : 1;
  return x->d - y->d;
}

/* The most attempts of the band in flight at once. Returns -1 out of
   memory. */
static int band_peak(const frame *fr, const slot *sl) {
  const rpt_trace *tr = fr->tr;
  int s = (int)(sl - fr->L->s), n = 0;
  for (int g = sl->g; g < tr->ngroups; g++)
    if (fr->L->slot_of[g] == s) n += tr->groups[g].n;
  edge *ev = malloc(sizeof *ev * (size_t)(2 * n + 1));
  if (ev == NULL) return -1;
  int m = 0;
  for (int g = sl->g; g < tr->ngroups; g++) {
    if (fr->L->slot_of[g] != s) continue;
    for (int k = 0; k < tr->groups[g].n; k++) {
      const rpt__arrival *a = &tr->arr[tr->groups[g].idx[k]];
      ev[m++] = (edge){a->t_arrive, 1};
      ev[m++] = (edge){a->has_end ? a->t_end : tr->t_last, -1};
    }
  }
  qsort(ev, (size_t)m, sizeof *ev, cmp_edge);
  int cur = 0, peak = 0;
  for (int i = 0; i < m; i++) {
    cur += ev[i].d;
    if (cur > peak) peak = cur;
  }
  free(ev);
  return peak;
}

static void band_collect(const frame *fr, const slot *sl, band_stats *b) {
  const rpt_trace *tr = fr->tr;
  int s = (int)(sl - fr->L->s);
  memset(b, 0, sizeof *b);
  double bin_ms = fr->tmax / NBINS;
  for (int g = sl->g; g < tr->ngroups; g++) {
    if (fr->L->slot_of[g] != s) continue;
    for (int k = 0; k < tr->groups[g].n; k++) {
      const rpt__arrival *a = &tr->arr[tr->groups[g].idx[k]];
      int i0 = (int)(a->t_arrive / bin_ms);
      if (i0 >= NBINS) i0 = NBINS - 1;
      if (i0 < 0) i0 = 0;
      b->bins[i0][cls_index(rpt__arrival_class(a))]++;
      b->attempts++;
      double end = a->has_end ? a->t_end : tr->t_last;
      for (int i = i0; i < NBINS && (i + 0.5) * bin_ms <= end; i++)
        if ((i + 0.5) * bin_ms >= a->t_arrive) b->flight[i]++;
    }
  }
  for (int i = 0; i < NBINS; i++) {
    int t = 0;
    for (int c = 0; c < NCLS; c++) t += b->bins[i][c];
    if (t > b->top) b->top = t;
    if (b->flight[i] > b->peak) b->peak = b->flight[i];
  }
}

/* A band of many alike requests: their count, the calls in flight and the
   attempts that began, column by column. Returns 0 or RPT_ENOMEM. */
static int draw_band(FILE *f, const frame *fr, const slot *sl) {
  const rpt_trace *tr = fr->tr;
  band_stats bs, *b = &bs;
  band_collect(fr, sl, b);
  int peak = band_peak(fr, sl);
  if (peak < 0) return RPT_ENOMEM;
  if (peak < b->peak) peak = b->peak;
  char what[80], who[100], head[48], label[240], t1[32], t2[32];
  row_what(tr, sl->g, fr->L->fx_of, what, sizeof what);
  row_who(tr, &tr->groups[sl->g], who, sizeof who);
  snprintf(head, sizeof head, "%d calls", sl->n);
  join_label(label, sizeof label, head, what, who);
  int y0 = sl->y + 2, h = BAND_H - 4;
  fprintf(f, "<g class=\"band\" data-calls=\"%d\">\n<rect class=\"band-bg\" x=\"%d\" y=\"%d\" "
             "width=\"%d\" height=\"%d\"/>\n",
          sl->n, LABEL_W, y0, PLOT_W, h);
  fprintf(f, "<text class=\"band-n\" x=\"4\" y=\"%d\"><title>%d requests drawn as one band; "
             "the first key: ",
          sl->y + 18, sl->n);
  rpt__html_text(f, tr->groups[sl->g].key);
  fputs("</title>", f);
  rpt__html_label(f, label, LABEL_CHARS);
  fprintf(f, "</text>\n<text class=\"sub\" x=\"4\" y=\"%d\">%d attempts \xC2\xB7 peak %d in "
             "flight</text>\n",
          sl->y + 34, b->attempts, peak);
  /* In flight: a grey area scaled to its peak. */
  double bw = (double)PLOT_W / NBINS;
  fprintf(f, "<polygon class=\"inflight\" points=\"%d,%d", LABEL_W, y0 + h);
  for (int i = 0; i < NBINS; i++) {
    double yy = y0 + h - (b->peak ? (double)b->flight[i] / b->peak * (h - 2) : 0);
    fprintf(f, " %.1f,%.1f %.1f,%.1f", LABEL_W + i * bw, yy, LABEL_W + (i + 1) * bw, yy);
  }
  fprintf(f, " %d,%d\"/>\n", LABEL_W + PLOT_W, y0 + h);
  /* Attempts that began: stacked by result, scaled to the fullest column. */
  double bin_ms = fr->tmax / NBINS;
  for (int i = 0; i < NBINS; i++) {
    int tot = 0;
    for (int c = 0; c < NCLS; c++) tot += b->bins[i][c];
    if (tot == 0) continue;
    double yb = y0 + h, x = LABEL_W + i * bw;
    for (int c = 0; c < NCLS; c++) {
      if (b->bins[i][c] == 0) continue;
      double hh = fmax((double)b->bins[i][c] / b->top * (h - 2), 1.5);
      yb -= hh;
      fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
              band_cls[c], x + 0.3, yb, bw - 0.6, hh);
    }
    fprintf(f, "<rect class=\"bin-hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"><title>"
               "%s to %s: %d attempt%s began (",
            x, y0, bw, h, rpt__fmt_ms(i * bin_ms, t1, sizeof t1),
            rpt__fmt_ms((i + 1) * bin_ms, t2, sizeof t2), tot, tot == 1 ? "" : "s");
    int sep = 0;
    for (int c = 0; c < NCLS; c++)
      if (b->bins[i][c]) fprintf(f, "%s%d %s", sep++ ? ", " : "", b->bins[i][c], band_cls[c]);
    fprintf(f, "); %d in flight</title></rect>\n", b->flight[i]);
  }
  fputs("</g>\n", f);
  return 0;
}

/* ------------------------------------------------------------ effects */

/* How many effects before effect i applied the same payload (name and
   fingerprint): 0 for the first application. */
static int applied_before(const rpt_trace *tr, int i) {
  const rpt__effect *fx = &tr->eff[i];
  if (strcmp(fx->action, "applied") != 0 || fx->fingerprint == NULL) return 0;
  int n = 0;
  for (int k = 0; k < i; k++) {
    const rpt__effect *o = &tr->eff[k];
    if (strcmp(o->action, "applied") == 0 && o->fingerprint &&
        strcmp(o->fingerprint, fx->fingerprint) == 0 &&
        strcmp(o->name ? o->name : "", fx->name ? fx->name : "") == 0)
      n++;
  }
  return n;
}

/* Side effects as diamonds on their request's row (or the effects row, y_fx),
   a repeated application red and labelled "applied twice". */
static void draw_effects(FILE *f, const frame *fr, int y_fx) {
  const rpt_trace *tr = fr->tr;
  char tb[32];
  for (int i = 0; i < tr->neff; i++) {
    const rpt__effect *fx = &tr->eff[i];
    if (!drawn(i, tr->neff, FX_ENDS)) continue;
    const rpt__arrival *a = rpt__trace_find(tr, fx->id);
    int s = a ? fr->L->slot_of[a->group] : -1;
    double cy = s >= 0 ? fr->L->s[s].y + fr->L->s[s].h / 2.0 : y_fx + ROW_H / 2.0;
    double cx = X(fr->tmax, fx->t);
    int before = applied_before(tr, i);
    int r = before ? 8 : 6;
    fprintf(f, "<polygon class=\"fx-%s\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\">",
            before ? "repeat" : fx_class(fx->action), cx, cy - r, cx + r, cy, cx, cy + r, cx - r, cy);
    fputs("<title>effect ", f);
    rpt__html_text(f, fx->name ? fx->name : "?");
    fputc(' ', f);
    rpt__html_text(f, fx->action);
    if (before) fprintf(f, " AGAIN: application %d of the same payload", before + 1);
    fputs(" (key ", f);
    rpt__html_text(f, fx->key ? fx->key : "none");
    fprintf(f, ", count %d) at %s</title></polygon>\n", fx->count, rpt__fmt_ms(fx->t, tb, sizeof tb));
    if (before) {
      char times[24];
      if (before == 1) snprintf(times, sizeof times, "twice");
      else snprintf(times, sizeof times, "%d times", before + 1);
      int left = cx > LABEL_W + PLOT_W - 110; /* near the right edge: write it to the left */
      fprintf(f, "<text class=\"repeat\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
                 "dominant-baseline=\"middle\">applied %s</text>\n",
              left ? cx - r - 3 : cx + r + 3, cy, left ? "end" : "start", times);
    }
  }
}

/* ------------------------------------------------------------ the whole */

/* The axis's end: the activity, stretched by windows and the deadline near
   it; *first: the first arrival. */
static double axis_reach(const rpt__entry *e, double *first) {
  const rpt_trace *tr = e->trace;
  double f0 = -1, act = tr->t_last;
  for (int i = 0; i < tr->narr; i++)
    if (f0 < 0 || tr->arr[i].t_arrive < f0) f0 = tr->arr[i].t_arrive;
  if (f0 < 0) f0 = 0;
  if (act < 1) act = 1;
  double tmax = act;
  for (int i = 0; i < tr->narr; i++) {
    const rpt__arrival *a = &tr->arr[i];
    double end = a->has_end && a->retry_after_ms >= 0 ? a->t_end + a->retry_after_ms * e->scale : -1;
    if (end > tmax && end <= act * FAR) tmax = end;
  }
  if (e->deadline_ms > 0 && f0 + e->deadline_ms > tmax && f0 + e->deadline_ms <= act * FAR)
    tmax = f0 + e->deadline_ms;
  tmax *= 1.02;
  *first = f0;
  return tmax < 1 ? 1 : tmax;
}

static void draw_axis(FILE *f, double tmax, int height) {
  double step = tick_step(tmax), udiv;
  const char *unit = axis_unit(tmax, &udiv);
  for (double t = 0; t <= tmax + 1e-9; t += step) {
    double x = X(tmax, t);
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, TOP - 4, x,
            height - 8);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g%s%s</text>\n", x, TOP - 10,
            t / udiv, t == 0 ? "" : " ", t == 0 ? "" : unit);
  }
  fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LABEL_W, TOP - 4,
          LABEL_W + PLOT_W, TOP - 4);
}

static void draw_deadline(FILE *f, const frame *fr, int height) {
  double dl = fr->e->deadline_ms;
  char tb[32];
  if (dl <= 0) return;
  if (fr->first + dl <= fr->tmax) {
    double x = X(fr->tmax, fr->first + dl);
    fprintf(f, "<line class=\"deadline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
               "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" style=\"fill:#d03030\">deadline "
               "%s</text>\n",
            x, TOP - 4, x, height - 14, x - 3, height - 3, rpt__fmt_ms(dl, tb, sizeof tb));
  } else {
    fprintf(f, "<text class=\"far\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
               "style=\"fill:#d03030\">deadline %s, beyond the axis \xE2\x86\x92</text>\n",
            LABEL_W + PLOT_W - 2, height - 3, rpt__fmt_ms(dl, tb, sizeof tb));
  }
}

int rpt__html_timeline(FILE *f, const rpt__entry *e) {
  const rpt_trace *tr = e->trace;
  if (tr == NULL) return 0;
  if (tr->narr == 0 && tr->neff == 0) {
    fputs("<p class=\"meta\">No request reached the provider.</p>\n", f);
    return 0;
  }
  layout L;
  if (layout_build(tr, &L)) {
    layout_free(&L);
    return RPT_ENOMEM;
  }
  int rc = 0;
  frame fr = {e, tr, &L, 0, 0};
  fr.tmax = axis_reach(e, &fr.first);
  int fx_row = 0; /* an extra row for effects not tied to a drawn request */
  for (int i = 0; i < tr->neff; i++) {
    const rpt__arrival *a = rpt__trace_find(tr, tr->eff[i].id);
    if (a == NULL || L.slot_of[a->group] < 0) fx_row = 1;
  }
  /* Below the rows: the effects row, and room for the deadline's value. */
  int y_fx = TOP + L.height, height = y_fx + fx_row * ROW_H + (e->deadline_ms > 0 ? 18 : 8), width = LABEL_W + PLOT_W + 20;
  fprintf(f,
          "<svg class=\"tl\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timeline\">\n",
          width, height, width, height);
  draw_axis(f, fr.tmax, height);
  for (int s = 0; s < L.ns; s++) {
    if (L.s[s].h == BAND_H) rc |= draw_band(f, &fr, &L.s[s]);
    else draw_row(f, &fr, &L.s[s]);
  }
  draw_effects(f, &fr, y_fx);
  if (fx_row)
    fprintf(f, "<text x=\"4\" y=\"%.1f\" dominant-baseline=\"middle\">effects</text>\n",
            y_fx + ROW_H / 2.0);
  draw_deadline(f, &fr, height);
  fputs("</svg>\n", f);
  if (tr->neff > 2 * FX_ENDS)
    fprintf(f, "<p class=\"meta\">%d side effects between the first and the last %d are "
               "not drawn.</p>\n", tr->neff - 2 * FX_ENDS, FX_ENDS);
  if (L.undrawn)
    fprintf(f, "<p class=\"meta\">%d more requests not drawn.</p>\n", L.undrawn);
  /* A report keeps the first arrivals of a long trace whole (run.c): the
     verdicts count every one, the timeline draws those kept. */
  if (rpt__trace_narr(tr) > tr->narr)
    fprintf(f, "<p class=\"meta\">%ld more attempts not drawn: the timeline shows the first "
               "%d of %ld.</p>\n", rpt__trace_narr(tr) - tr->narr, tr->narr, rpt__trace_narr(tr));
  layout_free(&L);
  return rc ? RPT_ENOMEM : 0;
}
