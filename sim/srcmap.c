/*
 * srcmap.c - where a key of a scenario's tables is written: the line of
 * `client = { attemps = 3 }`'s `attemps`.
 *
 * Lua tables keep no line numbers, so the load scans the file's text once:
 * a small Lua tokenizer (names, numbers, short and long strings, comments)
 * follows every table constructor and records, for each field, its key (a
 * name, ["string"], [integer] or a list position) and the line the key (or
 * a positional value) starts on, the constructor that is its value, and, when
 * the value is a bare name, that name, so `client = defaults` finds
 * `local defaults = { ... }`. A key path ("client.backoff.base",
 * "providers[2].name") is then walked down from the constructor passed to
 * the scenario{} call on a given line. No Lua here: it reads text only.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

#define SM_KEYLEN 64          /* longest key kept; longer keys never match */
#define SM_MAX_DEPTH 200      /* open brackets and blocks followed */
#define SM_MAX_ITEMS 100000   /* constructors, fields or names kept */

typedef struct sm_field {
  char key[SM_KEYLEN]; /* "" for a list position */
  long index;          /* list position (from 1), or an [integer] key; 0 = named */
  int line;            /* line of the key, or of a positional value */
  int value;           /* the constructor that is the value; -1 = none */
  char name[SM_KEYLEN];/* the value when it is one bare name; "" = not */
  int owner;           /* the constructor the field is in */
} sm_field;

typedef struct sm_ctor {
  int line;            /* line of the `{` */
  int call_line;       /* line of the name called with it (`scenario {`); 0 = none */
  char call[SM_KEYLEN];/* that name */
  int field;           /* the field whose value it is; -1 = none */
} sm_ctor;

typedef struct sm_assign {
  char name[SM_KEYLEN];
  int ctor;            /* `name = {` or `local name = {` */
} sm_assign;

struct sim_srcmap {
  sm_ctor *c;
  int nc, capc;
  sm_field *f;
  int nf, capf;
  sm_assign *a;
  int na, capa;
  int failed; /* out of memory or too large: lookups give 0 */
};

/* ------------------------------------------------------------ tokenizer */

enum { T_EOF = 0, T_NAME, T_STRING, T_NUMBER, T_PUNCT };

typedef struct sm_tok {
  int type;
  const char *s; /* the text (for strings: the contents, unescaped not) */
  size_t len;
  int line;
} sm_tok;

typedef struct sm_lex {
  const char *p, *end;
  int line;
} sm_lex;

/* The level of a long bracket at p ("[[" = 0, "[==[" = 2), or -1. */
static int long_level(const char *p, const char *end) {
  if (p >= end || *p != '[') return -1;
  int n = 0;
  const char *q = p + 1;
  while (q < end && *q == '=') {
    q++;
    n++;
  }
  return q < end && *q == '[' ? n : -1;
}

/* Skips a long bracket body of level n starting after its opening. */
static void skip_long(sm_lex *x, int n) {
  while (x->p < x->end) {
    if (*x->p == '\n') x->line++;
    if (*x->p == ']') {
      const char *q = x->p + 1;
      int k = 0;
      while (q < x->end && *q == '=') {
        q++;
        k++;
      }
      if (k == n && q < x->end && *q == ']') {
        x->p = q + 1;
        return;
      }
    }
    x->p++;
  }
}

/* Reads the next token; comments and white space are skipped. */
static sm_tok next_tok(sm_lex *x) {
  for (;;) {
    while (x->p < x->end && isspace((unsigned char)*x->p)) {
      if (*x->p == '\n') x->line++;
      x->p++;
    }
    if (x->p + 1 < x->end && x->p[0] == '-' && x->p[1] == '-') {
      x->p += 2;
      int n = long_level(x->p, x->end);
      if (n >= 0) {
        x->p += (size_t)n + 2;
        skip_long(x, n);
      } else {
        while (x->p < x->end && *x->p != '\n') x->p++;
      }
      continue;
    }
    break;
  }
  sm_tok t = {T_EOF, x->p, 0, x->line};
  if (x->p >= x->end) return t;
  const char *s = x->p;
  char c = *s;
  if (isalpha((unsigned char)c) || c == '_') {
    while (x->p < x->end && (isalnum((unsigned char)*x->p) || *x->p == '_')) x->p++;
    t.type = T_NAME;
  } else if (isdigit((unsigned char)c) || (c == '.' && s + 1 < x->end && isdigit((unsigned char)s[1]))) {
    while (x->p < x->end) {
      char d = *x->p;
      if ((d == 'e' || d == 'E' || d == 'p' || d == 'P') && x->p + 1 < x->end &&
          (x->p[1] == '+' || x->p[1] == '-'))
        x->p += 2;
      else if (isalnum((unsigned char)d) || d == '.')
        x->p++;
      else
        break;
    }
    t.type = T_NUMBER;
  } else if (c == '"' || c == '\'') {
    x->p++;
    t.s = x->p;
    while (x->p < x->end && *x->p != c && *x->p != '\n') {
      if (*x->p == '\\' && x->p + 1 < x->end) {
        x->p++;
        if (*x->p == '\n') x->line++;
        else if (*x->p == 'z') { /* \z skips the white space after it */
          while (x->p + 1 < x->end && isspace((unsigned char)x->p[1])) {
            if (x->p[1] == '\n') x->line++;
            x->p++;
          }
        }
      }
      x->p++;
    }
    t.len = (size_t)(x->p - t.s);
    if (x->p < x->end && *x->p == c) x->p++;
    t.type = T_STRING;
    return t;
  } else if (long_level(s, x->end) >= 0) {
    int n = long_level(s, x->end);
    x->p += (size_t)n + 2;
    t.s = x->p;
    skip_long(x, n);
    t.len = (size_t)(x->p - t.s);
    t.type = T_STRING;
    return t;
  } else {
    /* Two-character operators that matter: == ~= <= >= .. :: // << >> */
    static const char *const two[] = {"==", "~=", "<=", ">=", "..", "::", "//", "<<", ">>", NULL};
    x->p++;
    for (int i = 0; two[i]; i++)
      if (s + 1 < x->end && s[0] == two[i][0] && s[1] == two[i][1]) {
        x->p = s + 2;
        if (s[0] == '.' && x->p < x->end && *x->p == '.') x->p++; /* ... */
        break;
      }
    t.type = T_PUNCT;
  }
  t.len = (size_t)(x->p - s);
  return t;
}

static int is_punct(const sm_tok *t, const char *p) {
  return t->type == T_PUNCT && t->len == strlen(p) && memcmp(t->s, p, t->len) == 0;
}

static int is_name(const sm_tok *t, const char *n) {
  return t->type == T_NAME && t->len == strlen(n) && memcmp(t->s, n, t->len) == 0;
}

static void copy_key(char dst[SM_KEYLEN], const sm_tok *t) {
  size_t n = t->len < SM_KEYLEN - 1 ? t->len : SM_KEYLEN - 1;
  memcpy(dst, t->s, n);
  dst[n] = '\0';
  if (t->len >= SM_KEYLEN) dst[0] = '\1'; /* too long: never matches */
}

/* -------------------------------------------------------------- building */

/* Grows an array of `size`-byte items to hold one more: 0, -1 when out of
   memory, -2 when over SM_MAX_ITEMS. */
static int grow(void **v, int *cap, int n, size_t size) {
  if (n < *cap) return 0;
  if (n >= SM_MAX_ITEMS) return -2;
  int nc = *cap ? *cap * 2 : 16;
  void *nv = realloc(*v, (size_t)nc * size);
  if (nv == NULL) return -1;
  *v = nv;
  *cap = nc;
  return 0;
}

/* An open bracket or block while scanning. */
enum { F_CTOR = 1, F_PAREN, F_SQUARE, F_BLOCK };
typedef struct sm_frame {
  int kind;
  int ctor;      /* F_CTOR: the constructor */
  int at_start;  /* F_CTOR: the next token starts a field */
  int field;     /* F_CTOR: the field being read; -1 = none */
  int ntoks;     /* F_CTOR: tokens of the current field's value so far */
  long pos;      /* F_CTOR: list positions so far */
} sm_frame;

/* The constructor frame tokens at the top of the stack belong to directly
   (through nothing but parentheses), or NULL. */
static sm_frame *direct_ctor(sm_frame *st, int top) {
  for (int i = top; i >= 0; i--) {
    if (st[i].kind == F_CTOR) return &st[i];
    if (st[i].kind != F_PAREN) return NULL;
  }
  return NULL;
}

static int new_field(sim_srcmap *m, sm_frame *fr, int line) {
  int rc = grow((void **)&m->f, &m->capf, m->nf, sizeof *m->f);
  if (rc != 0) return rc;
  sm_field *f = &m->f[m->nf];
  memset(f, 0, sizeof *f);
  f->line = line;
  f->value = -1;
  f->owner = fr->ctor;
  fr->field = m->nf++;
  fr->ntoks = 0;
  fr->at_start = 0;
  return 0;
}

/* Scans the text into m: 0, -1 when out of memory, -2 when the text nests
   too deep or holds too many tables to follow. */
static int scan(sim_srcmap *m, const char *buf, size_t len) {
  sm_frame st[SM_MAX_DEPTH];
  int top = -1, rc;
  sm_lex x = {buf, buf + len, 1};
  sm_tok prev2 = {0}, prev = {0}, t = next_tok(&x);
  char pending_assign[SM_KEYLEN] = ""; /* `name =` just read at statement level */
  while (t.type != T_EOF) {
    sm_tok nt;
    sm_frame *fr = top >= 0 && st[top].kind == F_CTOR ? &st[top] : NULL;
    if (fr && fr->at_start && !is_punct(&t, "}")) {
      /* A field starts: name =, [key] =, or a positional value. */
      sm_lex save = x;
      nt = next_tok(&x);
      if (t.type == T_NAME && is_punct(&nt, "=")) {
        if ((rc = new_field(m, fr, t.line)) != 0) return rc;
        copy_key(m->f[fr->field].key, &t);
        prev2 = t;
        prev = nt;
        t = next_tok(&x);
        continue;
      }
      if (is_punct(&t, "[") && (nt.type == T_STRING || nt.type == T_NUMBER)) {
        sm_lex save2 = x;
        sm_tok c1 = next_tok(&x), c2 = next_tok(&x);
        if (is_punct(&c1, "]") && is_punct(&c2, "=")) {
          if ((rc = new_field(m, fr, t.line)) != 0) return rc;
          sm_field *f = &m->f[fr->field];
          if (nt.type == T_STRING) copy_key(f->key, &nt);
          else f->index = strtol(nt.s, NULL, 10);
          prev2 = c1;
          prev = c2;
          t = next_tok(&x);
          continue;
        }
        x = save2;
      }
      x = save;
      if ((rc = new_field(m, fr, t.line)) != 0) return rc;
      m->f[fr->field].index = ++fr->pos;
    }
    sm_frame *dc = direct_ctor(st, top);
    if (fr && fr->field >= 0) { /* a token of the current field's value */
      sm_field *f = &m->f[fr->field];
      if (!is_punct(&t, ",") && !is_punct(&t, ";") && !is_punct(&t, "}")) {
        fr->ntoks++;
        if (fr->ntoks == 1 && t.type == T_NAME) copy_key(f->name, &t);
        else if (fr->ntoks > 1) f->name[0] = '\0';
      }
    }
    if (is_punct(&t, "{")) {
      if (top + 1 >= SM_MAX_DEPTH) return -2;
      if ((rc = grow((void **)&m->c, &m->capc, m->nc, sizeof *m->c)) != 0) return rc;
      sm_ctor *c = &m->c[m->nc];
      memset(c, 0, sizeof *c);
      c->line = t.line;
      c->field = -1;
      /* Called with it: `name {` or `name ({`. */
      const sm_tok *callee = prev.type == T_NAME ? &prev
                             : is_punct(&prev, "(") && prev2.type == T_NAME ? &prev2 : NULL;
      if (callee && !is_name(callee, "return") && !is_name(callee, "local")) {
        copy_key(c->call, callee);
        c->call_line = callee->line;
      }
      if (dc && dc->field >= 0 && m->f[dc->field].value < 0) {
        m->f[dc->field].value = m->nc;
        c->field = dc->field;
      }
      if (pending_assign[0] && is_punct(&prev, "=")) {
        if ((rc = grow((void **)&m->a, &m->capa, m->na, sizeof *m->a)) != 0) return rc;
        memcpy(m->a[m->na].name, pending_assign, SM_KEYLEN);
        m->a[m->na++].ctor = m->nc;
      }
      st[++top] = (sm_frame){.kind = F_CTOR, .ctor = m->nc, .at_start = 1, .field = -1};
      m->nc++;
    } else if (is_punct(&t, "}")) {
      while (top >= 0 && st[top].kind != F_CTOR) top--;
      if (top >= 0) top--;
    } else if (is_punct(&t, "(") || is_punct(&t, "[")) {
      if (top + 1 >= SM_MAX_DEPTH) return -2;
      st[++top] = (sm_frame){.kind = t.s[0] == '(' ? F_PAREN : F_SQUARE};
    } else if (is_punct(&t, ")") || is_punct(&t, "]")) {
      int want = t.s[0] == ')' ? F_PAREN : F_SQUARE;
      while (top >= 0 && st[top].kind != want && st[top].kind != F_CTOR) top--;
      if (top >= 0 && st[top].kind == want) top--;
    } else if (is_name(&t, "function") || is_name(&t, "do") || is_name(&t, "if") ||
               is_name(&t, "repeat")) {
      if (top + 1 >= SM_MAX_DEPTH) return -2;
      st[++top] = (sm_frame){.kind = F_BLOCK};
    } else if (is_name(&t, "end") || is_name(&t, "until")) {
      while (top >= 0 && st[top].kind != F_BLOCK && st[top].kind != F_CTOR) top--;
      if (top >= 0 && st[top].kind == F_BLOCK) top--;
    } else if (fr && (is_punct(&t, ",") || is_punct(&t, ";"))) {
      fr->at_start = 1;
      fr->field = -1;
    }
    /* `name = {` at statement level (outside constructors). */
    if (t.type == T_NAME && !fr) copy_key(pending_assign, &t);
    else if (!is_punct(&t, "=")) pending_assign[0] = '\0';
    prev2 = prev;
    prev = t;
    t = next_tok(&x);
  }
  return 0;
}

/* Scans a scenario file's text; see sim_int.h. */
sim_srcmap *sim__srcmap_new(const char *buf, size_t len) {
  sim_srcmap *m = calloc(1, sizeof *m);
  if (m == NULL) return NULL;
  int rc = buf != NULL ? scan(m, buf, len) : 0;
  if (rc == -1) {
    sim__srcmap_free(m);
    return NULL;
  }
  m->failed = rc != 0;
  return m;
}

/* Releases a source map; NULL is a no-op. */
void sim__srcmap_free(sim_srcmap *m) {
  if (m == NULL) return;
  free(m->c);
  free(m->f);
  free(m->a);
  free(m);
}

/* ------------------------------------------------------------- lookups */

/* Splits the next segment off *path: a key ("client") or a list position
   ("[2]"). Returns 0 at the end, 1 with key or *index set. */
static int next_seg(const char **path, char key[SM_KEYLEN], long *index) {
  const char *p = *path;
  if (*p == '.') p++;
  if (*p == '\0') return 0;
  key[0] = '\0';
  *index = 0;
  if (*p == '[') {
    char *e;
    *index = strtol(p + 1, &e, 10);
    p = *e == ']' ? e + 1 : e;
  } else {
    size_t n = strcspn(p, ".[");
    if (n >= SM_KEYLEN) n = SM_KEYLEN - 1;
    memcpy(key, p, n);
    key[n] = '\0';
    p += strcspn(p, ".[");
  }
  *path = p;
  return 1;
}

static int field_in(const sim_srcmap *m, int ctor, const char *key, long index) {
  for (int i = 0; i < m->nf; i++)
    if (m->f[i].owner == ctor &&
        (key[0] ? strcmp(m->f[i].key, key) == 0 : m->f[i].index == index && !m->f[i].key[0]))
      return i;
  return -1;
}

/* The constructor a field's value is: written in place, or a name assigned
   a constructor (the last such assignment before the field). */
static int value_ctor(const sim_srcmap *m, const sm_field *f) {
  if (f->value >= 0) return f->value;
  int best = -1;
  for (int i = 0; f->name[0] && i < m->na; i++)
    if (strcmp(m->a[i].name, f->name) == 0 &&
        (best < 0 || m->c[m->a[i].ctor].line <= f->line))
      best = m->a[i].ctor;
  return best;
}

/* The line of path under the scenario{} call on root_line; see sim_int.h. */
int sim__srcmap_line(const sim_srcmap *m, int root_line, const char *path) {
  if (m == NULL || m->failed || path == NULL) return 0;
  int root = -1;
  for (int i = 0; i < m->nc && root < 0; i++)
    if (strcmp(m->c[i].call, "scenario") == 0 && m->c[i].call_line == root_line) root = i;
  if (root < 0) return 0;
  int ctor = root, line = m->c[root].line;
  char key[SM_KEYLEN];
  long index;
  const char *p = path;
  while (next_seg(&p, key, &index)) {
    if (ctor < 0) break;
    int f = field_in(m, ctor, key, index);
    if (f < 0) break;
    line = m->f[f].line;
    ctor = value_ctor(m, &m->f[f]);
  }
  return line;
}

/* The key path a message starts with; see sim_int.h. */
int sim__msg_path(const char *msg, char *path, size_t cap) {
  if (cap > 0) path[0] = '\0';
  if (msg == NULL || cap == 0) return 0;
  size_t n = 0;
  while (msg[n] && (isalnum((unsigned char)msg[n]) || msg[n] == '_' || msg[n] == '.' ||
                    msg[n] == '[' || msg[n] == ']' || msg[n] == '-'))
    n++;
  if (n == 0 || (msg[n] != ':' && msg[n] != ' ') || !isalpha((unsigned char)msg[0]) || n >= cap) return 0;
  memcpy(path, msg, n);
  path[n] = '\0';
  return 1;
}
