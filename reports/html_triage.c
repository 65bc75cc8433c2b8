/*
 * html_triage.c - the parts of an HTML page that help a person triage, shared
 * by the run page (html.c) and the matrix page (matrix_html.c): failed
 * first, then n/a, then passed; an offline filter (a link #failed shows only
 * the failed rows and cards, by one inline script the page's CSP allows by
 * hash); per-verdict counts across the run linking to where they failed; the
 * failed verdicts' names and the first failure's first line.
 */
#include <string.h>

#include "reports/html_int.h"

/* Shows the rows and cards (anything with data-st) of the filter named by
   the URL's hash; plain script, no request. */
const char rpt__html_filter_js[] =
    "(function(){var W={all:1,failed:1,na:1,passed:1};function show(){var k=location.hash.slice(1);if(!W[k]){if(document.body.getAttribute('data-show'))return;k='all';}document.body.setAttribute('data-show',k);var e=document.querySelectorAll('[data-st]');for(var i=0;i<e.length;i++)e[i].hidden=k!=='all'&&e[i].getAttribute('data-st')!==k;var b=document.querySelectorAll('a.flt');for(i=0;i<b.length;i++)b[i].className=b[i].getAttribute('href')==='#'+k?'flt on':'flt';}window.addEventListener('hashchange',show);show();})();";

const char rpt__html_filter_css[] =
    ".filters a.flt{display:inline-block;margin:0 4px;padding:2px 10px;border:1px solid #bbb;"
    "border-radius:12px;color:#333}.filters a.flt.on{background:#1d1d1f;color:#fff}"
    "td.fv{font-family:ui-monospace,monospace;font-size:12px;color:#8b1a1a}"
    "td.ev{font-size:12px;color:#444;max-width:520px}ul.tally{margin:4px 0 12px}"
    "[hidden]{display:none!important}";

void rpt__html_text(FILE *f, const char *s) { rpt__put_xml(f, s, 0); }

void rpt__html_label(FILE *f, const char *s, int max) {
  int n = 0;
  size_t i = 0, len = strlen(s);
  while (i < len && n < max) {
    size_t step = 1;
    while (i + step < len && ((unsigned char)s[i + step] & 0xC0) == 0x80) step++;
    i += step;
    n++;
  }
  if (i >= len) {
    rpt__html_text(f, s);
    return;
  }
  char buf[256];
  /* Cut one character earlier, to make room for the ellipsis. */
  size_t cut = i;
  do cut--; while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80);
  snprintf(buf, sizeof buf, "%.*s\xE2\x80\xA6", (int)cut, s);
  rpt__html_text(f, buf);
}

int rpt__html_rank(const char *st) {
  return strcmp(st, "pass") == 0 ? 2 : strcmp(st, "n/a") == 0 ? 1 : 0;
}

const char *rpt__html_filter_word(const char *st) {
  static const char *const w[] = {"failed", "na", "passed"};
  return w[rpt__html_rank(st)];
}

const char *rpt__html_st_class(const char *st) { return strcmp(st, "n/a") == 0 ? "na" : st; }

void rpt__html_filters(FILE *f, int all, int nfail, int nna, int npass) {
  fprintf(f, "<p class=\"filters\">Show: <a class=\"flt on\" href=\"#all\">all (%d)</a>"
             "<a class=\"flt\" href=\"#failed\">failed (%d)</a>"
             "<a class=\"flt\" href=\"#na\">n/a (%d)</a>"
             "<a class=\"flt\" href=\"#passed\">passed (%d)</a></p>\n",
          all, nfail, nna, npass);
}

/* 1 when verdict `name` failed in entry e. */
static int failed_in(const rpt__entry *e, const char *name) {
  for (int v = 0; e->j && v < e->j->n; v++)
    if (e->j->v[v].status == RPT_FAIL && strcmp(e->j->v[v].name, name) == 0) return 1;
  return 0;
}

/* Up to MAX_TALLY verdict names, each with the places it failed in. */
#define MAX_TALLY 64
typedef struct tally_row {
  const char *name;
  int n;
} tally_row;

void rpt__html_tally(FILE *f, const rpt__html_ref *refs, int n, const char *unit) {
  tally_row t[MAX_TALLY];
  int nt = 0;
  for (int i = 0; i < n; i++) {
    const rpt_judgement *j = refs[i].e->j;
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
    rpt__html_text(f, t[k].name);
    fprintf(f, "</b> failed in %d %s%s:", t[k].n, unit, t[k].n == 1 ? "" : "s");
    for (int i = 0; i < n; i++) {
      if (!failed_in(refs[i].e, t[k].name)) continue;
      fprintf(f, " <a href=\"#%s\" title=\"", refs[i].anchor);
      rpt__html_text(f, refs[i].title ? refs[i].title : "");
      fprintf(f, "\">%s</a>", refs[i].label);
    }
    fputs("</li>\n", f);
  }
  fputs("</ul></details>\n", f);
}

void rpt__html_first_failure(FILE *f, const rpt__entry *e) {
  const char *ev = e->error;
  for (int v = 0; ev == NULL && e->j && v < e->j->n; v++)
    if (e->j->v[v].status == RPT_FAIL) ev = e->j->v[v].evidence;
  if (ev == NULL) return;
  char line[400];
  snprintf(line, sizeof line, "%.*s", (int)strcspn(ev, "\n"), ev);
  rpt__html_label(f, line, 160);
}

int rpt__html_failed_names(FILE *f, const rpt__entry *e) {
  int nb = 0;
  for (int v = 0; e->j && v < e->j->n; v++) {
    if (e->j->v[v].status != RPT_FAIL) continue;
    if (nb++) fputs(", ", f);
    rpt__html_text(f, e->j->v[v].name);
  }
  return nb;
}
