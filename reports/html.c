/*
 * html.c - one self-contained HTML page for a run: a summary, then per
 * scenario its verdicts with evidence and an SVG timeline (one row per
 * logical request: attempts as bars coloured by result, waits, Retry-After
 * windows, the deadline, side effects). Inline CSS and SVG, and one inline
 * script (the summary's filter, allowed by its hash); no external request
 * (a Content-Security-Policy says so to the browser).
 * Every text from a trace is untrusted and escaped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reports/reports_int.h"

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

/* The summary's filter (all / failed / n/a / passed): plain script in the
   page, no request. The link #failed (and so a URL ending in it) shows only
   the failed rows and cards. The Content-Security-Policy lets exactly this
   script run, by its SHA-256: change one and recompute the other
   (printf '%s' "$js" | openssl dgst -sha256 -binary | base64);
   tests/cli/html_chromium.sh fails when they disagree. */
static const char filter_js[] =
    "(function(){var W={all:1,failed:1,na:1,passed:1};function show(){var k=location.hash.slice(1);if(!W[k]){if(document.body.getAttribute('data-show'))return;k='all';}document.body.setAttribute('data-show',k);var e=document.querySelectorAll('[data-st]');for(var i=0;i<e.length;i++)e[i].hidden=k!=='all'&&e[i].getAttribute('data-st')!==k;var b=document.querySelectorAll('a.flt');for(i=0;i<b.length;i++)b[i].className=b[i].getAttribute('href')==='#'+k?'flt on':'flt';}window.addEventListener('hashchange',show);show();})();";
#define FILTER_JS_SHA256 "sha256-IxqZPmugmoQvbw2Lp1ml04LQIoZvan+bC+ROGtL16K0="

/* 1 if item k of n is drawn (among the first or the last `ends`). */
static int drawn(int k, int n, int ends) { return k < ends || k >= n - ends; }

static void text(FILE *f, const char *s) { rpt__put_xml(f, s, 0); }

/* Writes at most max characters of s as escaped text, "…" when cut. */
static void put_label(FILE *f, const char *s, int max) {
  int n = 0;
  size_t i = 0, len = strlen(s);
  while (i < len && n < max) {
    size_t step = 1;
    while (i + step < len && ((unsigned char)s[i + step] & 0xC0) == 0x80) step++;
    i += step;
    n++;
  }
  if (i >= len) {
    text(f, s);
    return;
  }
  char buf[256];
  /* Cut one character earlier, to make room for the ellipsis. */
  size_t cut = i;
  do cut--; while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80);
  snprintf(buf, sizeof buf, "%.*s\xE2\x80\xA6", (int)cut, s);
  text(f, buf);
}

static const char css[] =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;"
    "padding:24px 32px;color:#1d1d1f;background:#fafafa}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:0 0 6px}"
    ".summary{font-size:15px;margin:0 0 16px}"
    "table{border-collapse:collapse;margin:8px 0 16px}"
    "th,td{text-align:left;padding:3px 10px;border-bottom:1px solid #e3e3e3;vertical-align:top}"
    "th{font-weight:600;color:#555}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "a{color:#1558b0;text-decoration:none}a:hover{text-decoration:underline}"
    "section{background:#fff;border:1px solid #ddd;border-radius:8px;padding:14px 18px;"
    "margin:0 0 18px}section.fail,section.error{border-left:5px solid #d03030}"
    "section.pass{border-left:5px solid #2e9e44}"
    ".badge{display:inline-block;font-size:12px;font-weight:700;color:#fff;border-radius:4px;"
    "padding:1px 7px;margin-right:6px;vertical-align:2px}"
    ".badge.pass{background:#2e9e44}.badge.fail,.badge.error{background:#d03030}"
    ".meta{color:#666;margin:0 0 8px;font-size:13px}.warn{color:#9a6700;margin:4px 0}"
    "ul.verdicts{list-style:none;padding:0;margin:6px 0 10px}"
    "ul.verdicts li{padding:2px 0}ul.verdicts b{font-family:ui-monospace,monospace;"
    "font-size:13px;margin-right:6px}"
    ".v-pass:before{content:'\\2713  ';color:#2e9e44;font-weight:700}"
    ".v-fail:before{content:'\\2717  ';color:#d03030;font-weight:700}"
    ".v-na:before{content:'n/a  ';color:#a07000;font-weight:700}"
    ".v-na{color:#777}.v-fail{color:#8b1a1a}"
    "section.na{border-left:5px solid #d0a000}.badge.na{background:#b08800}"
    ".headline{background:#fbe0dd;border:1px solid #d03030;padding:8px 12px;font-weight:700}"
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
    ".fx-conflict{fill:#d03030}.fx-lookup,.fx-ledger_down,.fx-other{fill:#fff;stroke:#555;"
    "stroke-width:1.2}"
    "details{margin:6px 0}summary{cursor:pointer;color:#555}"
    ".filters a.flt{display:inline-block;margin:0 4px;padding:2px 10px;border:1px solid #bbb;"
    "border-radius:12px;color:#333}.filters a.flt.on{background:#1d1d1f;color:#fff}"
    "td.fv{font-family:ui-monospace,monospace;font-size:12px;color:#8b1a1a}"
    "td.ev{font-size:12px;color:#444;max-width:520px}ul.tally{margin:4px 0 12px}"
    "[hidden]{display:none!important}";

/* The legend, drawn once at the top of the page. */
static void legend(FILE *f) {
  static const struct {
    const char *cls, *label, *colour;
  } items[] = {
      {"ok", "ok (2xx complete)", "#2e9e44"},
      {"transient", "transient (429, 5xx, 408)", "#e0a800"},
      {"permanent", "permanent (4xx, quota)", "#d03030"},
      {"shape", "shape (truncated, garbage)", "#8a5cd0"},
      {"lost", "dropped / reset / abort / stalled", "#8c8c8c"},
      {"open", "still open", "#d0d0d0"},
  };
  fputs("<p class=\"legend\">", f);
  for (size_t i = 0; i < sizeof items / sizeof items[0]; i++)
    fprintf(f, "<span><i style=\"background:%s\"></i>%s</span>", items[i].colour, items[i].label);
  fputs("<span><i style=\"background:#e0a800;opacity:.3\"></i>Retry-After window</span>"
        "<span><i style=\"background:#d03030;height:2px;vertical-align:3px\"></i>deadline</span>"
        "<span><i style=\"background:#1558b0;transform:rotate(45deg);width:8px;height:8px\"></i>"
        "side effect</span></p>\n",
        f);
}

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

typedef struct scale_x {
  double tmax;
} scale_x;

static double X(const scale_x *s, double t) {
  if (t < 0) t = 0;
  if (t > s->tmax) t = s->tmax; /* past the axis: drawn at its edge */
  return LABEL_W + t / s->tmax * PLOT_W;
}

static const char *fx_class(const char *action) {
  static const char *const known[] = {"applied", "replayed", "conflict", "lookup", "ledger_down", NULL};
  for (int i = 0; known[i]; i++)
    if (strcmp(action, known[i]) == 0) return known[i];
  return "other";
}

static void arrival_title(FILE *f, const rpt__arrival *a, double scale, double t_last) {
  char t1[32], t2[32];
  fprintf(f, "<title>attempt %d (#%ld) ", a->attempt, a->id);
  text(f, a->method);
  fputc(' ', f);
  text(f, a->path);
  fprintf(f, " at ");
  text(f, a->provider);
  fprintf(f, "\n%s to %s: ", rpt__fmt_ms(a->t_arrive, t1, sizeof t1),
          a->has_end ? rpt__fmt_ms(a->t_end, t2, sizeof t2) : "(still open)");
  if (a->has_end) {
    if (a->step) {
      text(f, a->step);
      fputc(' ', f);
    }
    if (a->status) fprintf(f, "%d ", a->status);
    text(f, a->how);
    if (a->code) {
      fputc(' ', f);
      text(f, a->code);
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

/* The client call (its number) whose span holds arrival a, or -1 when the
   trace has no client account of it. */
static int row_call(const rpt_trace *tr, const rpt__arrival *a) {
  for (int i = 0; i < tr->ncli; i++) {
    const rpt__client_ev *c = &tr->cli[i];
    if (c->external || c->total_ms < 0) continue;
    if (a->t_arrive >= c->t - c->total_ms - 1 && a->t_arrive <= c->t + 1) return c->call;
  }
  return -1;
}

/* What a row is about, for its label: "effect NAME" when a side effect ran
   in it, "tool NAME" when an answer called a tool, else "" (a chat). */
static void row_what(const rpt_trace *tr, const rpt__group *gr, char *out, size_t n) {
  out[0] = '\0';
  for (int k = 0; k < gr->n; k++) {
    const rpt__arrival *a = &tr->arr[gr->idx[k]];
    for (int i = 0; i < tr->neff; i++)
      if (tr->eff[i].id == a->id && tr->eff[i].name) {
        snprintf(out, n, "effect %.60s", tr->eff[i].name);
        return;
      }
    const char *tc = a->tool_calls_json ? strstr(a->tool_calls_json, "\"name\":") : NULL;
    if (tc) {
      tc += 7;
      while (*tc == ' ' || *tc == '\t') tc++;
      if (*tc == '"') {
        size_t len = strcspn(tc + 1, "\"");
        snprintf(out, n, "tool %.*s", (int)(len < 60 ? len : 60), tc + 1);
        return;
      }
    }
  }
}

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

/* The SVG timeline of one scenario. */
static void timeline(FILE *f, const rpt__entry *e) {
  const rpt_trace *tr = e->trace;
  if (tr == NULL) return;
  if (tr->narr == 0 && tr->neff == 0) {
    fputs("<p class=\"meta\">No request reached the provider.</p>\n", f);
    return;
  }
  int rows = tr->ngroups < MAX_ROWS ? tr->ngroups : MAX_ROWS;
  int fx_row = 0; /* an extra row for effects not tied to a drawn arrival */
  for (int i = 0; i < tr->neff; i++) {
    const rpt__arrival *a = rpt__trace_find(tr, tr->eff[i].id);
    if (a == NULL || a->group >= rows) fx_row = 1;
  }
  double first = -1;
  double act = tr->t_last; /* the activity: the trace's last event */
  for (int i = 0; i < tr->narr; i++) {
    const rpt__arrival *a = &tr->arr[i];
    if (first < 0 || a->t_arrive < first) first = a->t_arrive;
  }
  if (first < 0) first = 0;
  if (act < 1) act = 1;
  /* Windows and the deadline near the activity stretch the axis; far ones
     are marked at its edge. */
  double tmax = act;
  for (int i = 0; i < tr->narr; i++) {
    const rpt__arrival *a = &tr->arr[i];
    double end = a->has_end && a->retry_after_ms >= 0 ? a->t_end + a->retry_after_ms * e->scale : -1;
    if (end > tmax && end <= act * FAR) tmax = end;
  }
  if (e->deadline_ms > 0 && first + e->deadline_ms > tmax && first + e->deadline_ms <= act * FAR)
    tmax = first + e->deadline_ms;
  tmax *= 1.02;
  if (tmax < 1) tmax = 1;
  scale_x sx = {tmax};
  int nrows = rows + fx_row;
  int height = TOP + nrows * ROW_H + 8;
  int width = LABEL_W + PLOT_W + 20;
  fprintf(f,
          "<svg class=\"tl\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
          "viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"timeline\">\n",
          width, height, width, height);
  /* Axis and grid. */
  double step = tick_step(tmax);
  double udiv;
  const char *unit = axis_unit(tmax, &udiv);
  char tb[32];
  for (double t = 0; t <= tmax + 1e-9; t += step) {
    double x = X(&sx, t);
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", x, TOP - 4, x,
            height - 8);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g%s%s</text>\n", x,
            TOP - 10, t / udiv, t == 0 ? "" : " ", t == 0 ? "" : unit);
  }
  fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", LABEL_W, TOP - 4,
          LABEL_W + PLOT_W, TOP - 4);
  /* Rows. */
  for (int g = 0; g < rows; g++) {
    const rpt__group *gr = &tr->groups[g];
    int y = TOP + g * ROW_H;
    double mid = y + ROW_H / 2.0;
    const rpt__arrival *a0 = &tr->arr[gr->idx[0]];
    fprintf(f, "<text x=\"4\" y=\"%.1f\" dominant-baseline=\"middle\"><title>", mid);
    text(f, gr->key);
    fputs("</title>", f);
    /* Named by what a person knows: the call, the effect or tool, the
       provider ("first→last" along a chain); the key is in the tooltip. */
    const char *last = a0->provider;
    for (int k = 1; k < gr->n; k++)
      if (strcmp(tr->arr[gr->idx[k]].provider, a0->provider) != 0)
        last = tr->arr[gr->idx[k]].provider;
    char who[100], what[80], label[240];
    if (last != a0->provider)
      snprintf(who, sizeof who, "%.40s\xE2\x86\x92%.40s", a0->provider, last);
    else
      snprintf(who, sizeof who, "%.60s", a0->provider);
    row_what(tr, gr, what, sizeof what);
    int call = row_call(tr, a0);
    if (strcmp(a0->provider, "(none)") == 0) who[0] = '\0'; /* an effect endpoint */
    char head[32];
    if (call >= 0) snprintf(head, sizeof head, "call %d", call);
    else snprintf(head, sizeof head, "request %d", g + 1);
    snprintf(label, sizeof label, "%s%s%s%s%s", head, what[0] ? " \xC2\xB7 " : "", what,
             who[0] ? " \xC2\xB7 " : "", who);
    put_label(f, label, LABEL_CHARS);
    fputs("</text>\n", f);
    /* Retry-After windows first, under the bars. */
    for (int k = 0; k < gr->n; k++) {
      const rpt__arrival *a = &tr->arr[gr->idx[k]];
      if (!drawn(k, gr->n, ROW_ENDS) || !a->has_end || a->retry_after_ms < 0) continue;
      double ra_end = a->t_end + a->retry_after_ms * e->scale;
      double x1 = X(&sx, a->t_end), x2 = X(&sx, ra_end);
      fprintf(f, "<rect class=\"ra\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
                 "<title>Retry-After %s after attempt %d</title></rect>\n",
              x1, y + 1, fmax(x2 - x1, 1), ROW_H - 2,
              rpt__fmt_ms(a->retry_after_ms * e->scale, tb, sizeof tb), a->attempt);
      if (ra_end > sx.tmax)
        fprintf(f, "<text class=\"far\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
                   "dominant-baseline=\"middle\">Retry-After %s \xE2\x86\x92</text>\n",
                LABEL_W + PLOT_W - 2, mid, rpt__fmt_ms(a->retry_after_ms * e->scale, tb, sizeof tb));
    }
    /* Waits between successive attempts. */
    for (int k = 1; k < gr->n; k++) {
      const rpt__arrival *p = &tr->arr[gr->idx[k - 1]], *a = &tr->arr[gr->idx[k]];
      if (!drawn(k, gr->n, ROW_ENDS) || !drawn(k - 1, gr->n, ROW_ENDS)) continue;
      if (!p->has_end || a->t_arrive <= p->t_end) continue;
      fprintf(f, "<line class=\"wait\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
                 "<title>waited %s</title></line>\n",
              X(&sx, p->t_end), mid, X(&sx, a->t_arrive), mid,
              rpt__fmt_ms(a->t_arrive - p->t_end, tb, sizeof tb));
    }
    /* Attempts: the first and last ROW_ENDS, the middle as one band. */
    if (gr->n > 2 * ROW_ENDS) {
      const rpt__arrival *m0 = &tr->arr[gr->idx[ROW_ENDS]];
      const rpt__arrival *m1 = &tr->arr[gr->idx[gr->n - ROW_ENDS - 1]];
      double x1 = X(&sx, m0->t_arrive), x2 = X(&sx, m1->has_end ? m1->t_end : tr->t_last);
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
      double x1 = X(&sx, a->t_arrive), x2 = X(&sx, end);
      fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" rx=\"2\">",
              rpt__arrival_class(a), x1, mid - BAR_H / 2.0, fmax(x2 - x1, MIN_BAR_W), BAR_H);
      arrival_title(f, a, e->scale, tr->t_last);
      fputs("</rect>\n", f);
    }
    /* The deadline of this request, when rows start at different times. */
    if (e->deadline_ms > 0 && a0->t_arrive - first > tmax * 0.005 &&
        a0->t_arrive + e->deadline_ms <= sx.tmax) {
      double x = X(&sx, a0->t_arrive + e->deadline_ms);
      fprintf(f, "<line class=\"deadline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>\n", x,
              y + 1, x, y + ROW_H - 1);
    }
  }
  /* Side effects. */
  for (int i = 0; i < tr->neff; i++) {
    const rpt__effect *fx = &tr->eff[i];
    if (!drawn(i, tr->neff, FX_ENDS)) continue;
    const rpt__arrival *a = rpt__trace_find(tr, fx->id);
    int row = (a && a->group < rows) ? a->group : rows;
    double cx = X(&sx, fx->t), cy = TOP + row * ROW_H + ROW_H / 2.0;
    int before = applied_before(tr, i);
    int r = before ? 8 : 6;
    fprintf(f, "<polygon class=\"fx-%s\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\">",
            before ? "repeat" : fx_class(fx->action), cx, cy - r, cx + r, cy, cx, cy + r, cx - r, cy);
    fputs("<title>effect ", f);
    text(f, fx->name ? fx->name : "?");
    fputc(' ', f);
    text(f, fx->action);
    if (before) fprintf(f, " AGAIN: application %d of the same payload", before + 1);
    fputs(" (key ", f);
    text(f, fx->key ? fx->key : "none");
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
  if (fx_row)
    fprintf(f, "<text x=\"4\" y=\"%.1f\" dominant-baseline=\"middle\">effects</text>\n",
            TOP + rows * ROW_H + ROW_H / 2.0);
  /* The deadline, from the first arrival. */
  if (e->deadline_ms > 0 && first + e->deadline_ms <= sx.tmax) {
    double x = X(&sx, first + e->deadline_ms);
    fprintf(f, "<line class=\"deadline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
               "<text x=\"%.1f\" y=\"%d\" text-anchor=\"end\" style=\"fill:#d03030\">deadline "
               "%s</text>\n",
            x, TOP - 4, x, height - 8, x - 3, height - 1,
            rpt__fmt_ms(e->deadline_ms, tb, sizeof tb));
  } else if (e->deadline_ms > 0) {
    fprintf(f, "<text class=\"far\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
               "style=\"fill:#d03030\">deadline %s, beyond the axis \xE2\x86\x92</text>\n",
            LABEL_W + PLOT_W - 2, height - 1, rpt__fmt_ms(e->deadline_ms, tb, sizeof tb));
  }
  fputs("</svg>\n", f);
  if (tr->neff > 2 * FX_ENDS)
    fprintf(f, "<p class=\"meta\">%d side effects between the first and the last %d are "
               "not drawn.</p>\n", tr->neff - 2 * FX_ENDS, FX_ENDS);
  if (tr->ngroups > rows)
    fprintf(f, "<p class=\"meta\">%d more requests not drawn.</p>\n", tr->ngroups - rows);
}

static void calls_table(FILE *f, const rpt_trace *tr) {
  if (tr == NULL || tr->ncli == 0) return;
  char tb[32];
  fprintf(f, "<details><summary>Client account: %d call%s</summary>\n<table><tr><th>call</th>"
             "<th>outcome</th><th>time</th><th>attempts</th><th>tokens</th><th>reason</th></tr>\n",
          tr->ncli, tr->ncli == 1 ? "" : "s");
  for (int i = 0; i < tr->ncli && i < 500; i++) {
    const rpt__client_ev *c = &tr->cli[i];
    fprintf(f, "<tr><td class=\"n\">%d</td><td>", c->call);
    text(f, c->outcome);
    fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%d</td><td class=\"n\">",
            c->total_ms >= 0 ? rpt__fmt_ms(c->total_ms, tb, sizeof tb) : "", c->nattempts);
    if (c->has_tokens) fprintf(f, "%ld", c->tokens);
    fputs("</td><td>", f);
    text(f, c->reason);
    fputs("</td></tr>\n", f);
  }
  fputs("</table></details>\n", f);
}

/* The CSS class of a scenario status word ("n/a" is "na"). */
static const char *st_class(const char *st) { return strcmp(st, "n/a") == 0 ? "na" : st; }

/* 0 failed (or error), 1 n/a, 2 passed: the summary's order. */
static int status_rank(const char *st) {
  return strcmp(st, "pass") == 0 ? 2 : strcmp(st, "n/a") == 0 ? 1 : 0;
}

/* The filter a status belongs to: "failed", "na" or "passed". */
static const char *filter_word(const char *st) {
  static const char *const w[] = {"failed", "na", "passed"};
  return w[status_rank(st)];
}

/* Up to MAX_TALLY verdict names, each with the scenarios it failed in. */
#define MAX_TALLY 64
typedef struct tally_row {
  const char *name;
  int n;
} tally_row;

/* "retry_after_honoured failed in 9 scenarios: #3 #7 ...", most first, each
   number a link to its card. */
static void tally(FILE *f, const rpt_run *run) {
  tally_row t[MAX_TALLY];
  int nt = 0;
  for (int i = 0; i < run->n; i++) {
    const rpt_judgement *j = run->e[i].j;
    for (int v = 0; j && v < j->n; v++) {
      if (j->v[v].status != RPT_FAIL) continue;
      int k = 0;
      while (k < nt && strcmp(t[k].name, j->v[v].name) != 0) k++;
      if (k == nt) {
        if (nt == MAX_TALLY) continue;
        t[nt].name = j->v[v].name;
        t[nt++].n = 0;
      }
      t[k].n++;
    }
  }
  if (nt == 0) return;
  for (int a = 1; a < nt; a++) /* by count, most first; stable */
    for (int b = a; b > 0 && t[b].n > t[b - 1].n; b--) {
      tally_row x = t[b];
      t[b] = t[b - 1];
      t[b - 1] = x;
    }
  fputs("<details class=\"tally\" open><summary>Failed verdicts across the run</summary>\n"
        "<ul class=\"tally\">\n", f);
  for (int k = 0; k < nt; k++) {
    fputs("<li><b>", f);
    text(f, t[k].name);
    fprintf(f, "</b> failed in %d scenario%s:", t[k].n, t[k].n == 1 ? "" : "s");
    for (int i = 0; i < run->n; i++) {
      const rpt_judgement *j = run->e[i].j;
      int hit = 0;
      for (int v = 0; j && v < j->n && !hit; v++)
        hit = j->v[v].status == RPT_FAIL && strcmp(j->v[v].name, t[k].name) == 0;
      if (!hit) continue;
      fprintf(f, " <a href=\"#s%d\" title=\"", i + 1);
      text(f, run->e[i].name);
      fprintf(f, "\">#%d</a>", i + 1);
    }
    fputs("</li>\n", f);
  }
  fputs("</ul></details>\n", f);
}

static void scenario_section(FILE *f, const rpt__entry *e, int idx) {
  const char *st = rpt__entry_status(e);
  char tb[32];
  fprintf(f, "<section id=\"s%d\" class=\"%s\" data-st=\"%s\">\n<h2><span class=\"badge %s\">%s</span>",
          idx, st_class(st), filter_word(st), st_class(st),
          strcmp(st, "pass") == 0 ? "PASS" : strcmp(st, "fail") == 0 ? "FAIL"
          : strcmp(st, "n/a") == 0 ? "N/A" : "ERROR");
  text(f, e->name);
  if (e->client) {
    fputs(" <small>[", f);
    text(f, e->client);
    fputs("]</small>", f);
  }
  fputs("</h2>\n<p class=\"meta\">", f);
  if (e->file) {
    text(f, e->file);
    fputs(" · ", f);
  }
  fprintf(f, "%s", rpt__fmt_ms(rpt__entry_time(e), tb, sizeof tb));
  if (e->trace) {
    int att = rpt__entry_attempts(e), killed, code = rpt__entry_exit(e, &killed);
    fprintf(f, " · %d attempt%s · time scale %g", att, att == 1 ? "" : "s", e->scale);
    if (killed) fputs(" · killed by --timeout", f);
    else if (code >= 0) fprintf(f, " · exit %d", code);
    if (e->deadline_ms > 0) fprintf(f, " · deadline %s", rpt__fmt_ms(e->deadline_ms, tb, sizeof tb));
  }
  if (e->trace_path) {
    fputs(" · trace ", f);
    text(f, e->trace_path);
  }
  fputs("</p>\n", f);
  if (e->error) {
    fputs("<p class=\"v-fail\">", f);
    text(f, e->error);
    fputs("</p>\n</section>\n", f);
    return;
  }
  if (e->trace && !rpt_trace_complete(e->trace)) {
    fputs("<p class=\"warn\">", f);
    text(f, e->trace->warning);
    fputs("</p>\n", f);
  }
  fputs("<ul class=\"verdicts\">\n", f);
  for (int i = 0; e->j && i < e->j->n; i++) {
    const rpt_verdict *v = &e->j->v[i];
    fprintf(f, "<li class=\"v-%s\"><b>",
            v->status == RPT_PASS ? "pass" : v->status == RPT_FAIL ? "fail" : "na");
    text(f, v->name);
    fputs("</b>", f);
    text(f, v->evidence);
    fputs("</li>\n", f);
  }
  if (e->j == NULL || e->j->n == 0) fputs("<li>No expectation.</li>\n", f);
  fputs("</ul>\n", f);
  timeline(f, e);
  calls_table(f, e->trace);
  fputs("</section>\n", f);
}

/* Writes the run as one self-contained HTML page to path ("-" = stdout). */
int rpt_run_write_html(const rpt_run *run, const char *path, char err[RPT_ERRLEN]) {
  if (run == NULL || err == NULL) return RPT_EINVAL;
  FILE *f = rpt__open_out(path, err);
  if (f == NULL) return RPT_EIO;
  rpt_summary s;
  rpt_run_summary(run, &s);
  char tb[32];
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src '" FILTER_JS_SHA256 "'\">\n"
        "<title>fusebox report</title>\n<style>",
        f);
  fputs(css, f);
  fputs("</style>\n</head>\n<body>\n<h1>fusebox report</h1>\n", f);
  char head[RPT_ERRLEN * 2];
  if (rpt_run_headline(run, head, sizeof head)) {
    fputs("<p class=\"headline\">", f);
    text(f, head);
    fputs("</p>\n", f);
  }
  fprintf(f, "<p class=\"summary\"><b>%d scenario%s</b>: %d passed, %d failed", s.scenarios,
          s.scenarios == 1 ? "" : "s", s.passed, s.failed);
  if (s.errors) fprintf(f, ", %d error%s", s.errors, s.errors == 1 ? "" : "s");
  if (s.not_applicable) fprintf(f, ", %d n/a", s.not_applicable);
  fprintf(f, " · %d/%d verdicts hold", s.verdicts - s.verdicts_failed - s.verdicts_skipped,
          s.verdicts - s.verdicts_skipped);
  if (s.verdicts_skipped) fprintf(f, ", %d n/a", s.verdicts_skipped);
  if (s.incomplete) fprintf(f, " · %d incomplete trace%s", s.incomplete, s.incomplete == 1 ? "" : "s");
  fprintf(f, " · %s</p>\n", rpt__fmt_ms(s.time_ms, tb, sizeof tb));
  /* Failed first, then n/a, then passed: the order a person triages in. */
  int *order = malloc(sizeof *order * (size_t)(run->n > 0 ? run->n : 1));
  if (order == NULL) {
    fclose(f);
    snprintf(err, RPT_ERRLEN, "out of memory");
    return RPT_ENOMEM;
  }
  int no = 0;
  for (int rank = 0; rank < 3; rank++)
    for (int i = 0; i < run->n; i++)
      if (status_rank(rpt__entry_status(&run->e[i])) == rank) order[no++] = i;
  int nfail = 0, nna = 0, npass = 0;
  for (int i = 0; i < run->n; i++) {
    int r = status_rank(rpt__entry_status(&run->e[i]));
    nfail += r == 0;
    nna += r == 1;
    npass += r == 2;
  }
  fprintf(f, "<p class=\"filters\">Show: <a class=\"flt on\" href=\"#all\">all (%d)</a>"
             "<a class=\"flt\" href=\"#failed\">failed (%d)</a>"
             "<a class=\"flt\" href=\"#na\">n/a (%d)</a>"
             "<a class=\"flt\" href=\"#passed\">passed (%d)</a></p>\n",
          run->n, nfail, nna, npass);
  tally(f, run);
  legend(f);
  fputs("<table class=\"index\">\n<tr><th>#</th><th>Scenario</th><th>Result</th>"
        "<th>Failed verdicts</th><th>First failure</th><th>Verdicts</th>"
        "<th>Attempts</th><th>Time</th></tr>\n",
        f);
  for (int k = 0; k < no; k++) {
    int i = order[k];
    const rpt__entry *e = &run->e[i];
    int passed, judged;
    rpt__entry_counts(e, &passed, &judged);
    const char *st = rpt__entry_status(e);
    fprintf(f, "<tr data-st=\"%s\"><td class=\"n\">%d</td><td><a href=\"#s%d\">",
            filter_word(st), i + 1, i + 1);
    text(f, e->name);
    if (e->client) {
      fputs(" [", f);
      text(f, e->client);
      fputc(']', f);
    }
    fprintf(f, "</a></td><td><span class=\"badge %s\">%s</span></td><td class=\"fv\">",
            st_class(st), st);
    const rpt_verdict *first_bad = NULL;
    int nb = 0;
    for (int v = 0; e->j && v < e->j->n; v++) {
      if (e->j->v[v].status != RPT_FAIL) continue;
      if (first_bad == NULL) first_bad = &e->j->v[v];
      if (nb++) fputs(", ", f);
      text(f, e->j->v[v].name);
    }
    fputs("</td><td class=\"ev\">", f);
    const char *ev = e->error ? e->error : first_bad ? first_bad->evidence : NULL;
    if (ev) {
      char line[400];
      snprintf(line, sizeof line, "%.*s", (int)strcspn(ev, "\n"), ev);
      put_label(f, line, 160);
    }
    fputs("</td>", f);
    if (e->error) {
      fputs("<td class=\"n\">–</td><td class=\"n\">–</td>", f);
    } else {
      int killed, code = rpt__entry_exit(e, &killed);
      fprintf(f, "<td class=\"n\">%d/%d</td><td class=\"n\">%d", passed, judged,
              rpt__entry_attempts(e));
      if (killed) fputs(" · killed", f);
      else if (code >= 0) fprintf(f, " · exit %d", code);
      fputs("</td>", f);
    }
    fprintf(f, "<td class=\"n\">%s</td></tr>\n", rpt__fmt_ms(rpt__entry_time(e), tb, sizeof tb));
  }
  fputs("</table>\n", f);
  for (int k = 0; k < no; k++) scenario_section(f, &run->e[order[k]], order[k] + 1);
  free(order);
  fprintf(f, "<script>%s</script>\n", filter_js);
  fputs("</body>\n</html>\n", f);
  return rpt__close_out(f, path, err);
}
