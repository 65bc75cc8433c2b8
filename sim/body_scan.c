/*
 * body_scan.c - the few top-level fields arrive() reads from a request body
 * (model, stream, input, whether it offers tools), read without building
 * cJSON's tree (issue 30: the tree cost 16 mallocs and ~7k instructions a
 * request, a tenth of the server's work per request).
 *
 * The scanner only answers when it is sure cJSON would read the same: it
 * takes strict JSON (RFC 8259 whitespace, numbers and escapes, no control
 * bytes in strings) whose root is an object, and says "ask cJSON" for
 * anything else: a body that is not JSON, a BOM, a surrogate escape, an
 * escaped top-level key or model, trailing bytes, deep nesting, or tools (the
 * caller needs their tree). Since strict JSON is a subset of what cJSON
 * accepts, a body it answers for is one cJSON parses the same way; the fuzz
 * target fuzz_body holds the two to that.
 */
#include <string.h>

#include "sim/server_int.h"

#define SCAN_DEPTH 64 /* deeper bodies are left to cJSON */

typedef struct {
  const unsigned char *p, *end;
} scan;

static void ws(scan *s) {
  const unsigned char *p = s->p;
  while (p < s->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  s->p = p;
}

static int hex(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A string at s->p (its opening quote): 1 and past it, with *esc set when it
   held an escape; 0 when not strict JSON. */
static int str(scan *s, int *esc) {
  /* The bytes that end a run of plain string bytes: the quote, a
     backslash, control bytes. One lookup a byte (the messages' text is
     most of a body), on a local pointer: s->p is written back once. */
  static const unsigned char STOP[256] = {[0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1};
  const unsigned char *p = s->p + 1, *end = s->end; /* past the quote */
  int ok = 0;
  *esc = 0;
  while (p < end) {
    while (p < end && !STOP[*p]) p++;
    if (p >= end) break;
    unsigned char c = *p++;
    if (c == '"') {
      ok = 1;
      break;
    }
    if (c < 0x20) break;
    if (c != '\\') continue;
    *esc = 1;
    if (p >= end) break;
    c = *p++;
    if (c == 'u') {
      if (end - p < 4 || !hex(p[0]) || !hex(p[1]) || !hex(p[2]) || !hex(p[3])) break;
      /* a surrogate half: cJSON pairs them by its own rules */
      if ((p[0] == 'd' || p[0] == 'D') && strchr("89abcdefABCDEF", p[1])) break;
      p += 4;
    } else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
      break;
    }
  }
  s->p = p;
  return ok;
}

/* A number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, short enough for
   cJSON's 63-byte copy, and not followed by a byte cJSON would take as
   part of it. */
static int num(scan *s) {
  const unsigned char *b = s->p;
#define DIGITS(min)                                                    \
  do {                                                                 \
    const unsigned char *d = s->p;                                     \
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') s->p++;      \
    if (s->p - d < (min)) return 0;                                    \
  } while (0)
  if (s->p < s->end && *s->p == '-') s->p++;
  if (s->p < s->end && *s->p == '0') s->p++;
  else DIGITS(1);
  if (s->p < s->end && *s->p == '.') {
    s->p++;
    DIGITS(1);
  }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    s->p++;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
    DIGITS(1);
  }
#undef DIGITS
  if (s->p - b > 60) return 0;
  return s->p == s->end || strchr("0123456789+-eE.", *s->p) == NULL;
}

static int word(scan *s, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, w, n) != 0) return 0;
  s->p += n;
  return 1;
}

/* A scalar at s->p: 1 and past it, 0 when not strict JSON. */
static int scalar(scan *s) {
  int esc;
  switch (*s->p) {
    case '"': return str(s, &esc);
    case 't': return word(s, "true");
    case 'f': return word(s, "false");
    case 'n': return word(s, "null");
    default: return (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) && num(s);
  }
}

/*
 * Any value at s->p, nested ones too (an explicit stack: one byte a level
 * saying object or array). When count is not NULL and the value is an
 * array, *count is its number of elements.
 */
static int value(scan *s, int *count) {
  unsigned char open[SCAN_DEPTH];
  int depth = 0, elems = 0;
  for (;;) {
    ws(s);
    if (s->p >= s->end) return 0;
    unsigned char c = *s->p;
    if (c == '{' || c == '[') {
      if (depth == SCAN_DEPTH) return 0;
      open[depth++] = c;
      s->p++;
      ws(s);
      if (s->p < s->end && *s->p == (c == '{' ? '}' : ']')) {
        s->p++;
        depth--;
        goto closed;
      }
      if (c == '[') {
        if (depth == 1) elems = 1;
        continue; /* its first element */
      }
    } else {
      if (!scalar(s)) return 0;
      goto closed;
    }
  member: /* inside an object, at a key */
    ws(s);
    {
      int esc;
      if (s->p >= s->end || *s->p != '"' || !str(s, &esc)) return 0;
    }
    ws(s);
    if (s->p >= s->end || *s->p++ != ':') return 0;
    continue; /* the member's value */
  closed: /* a value ended: what comes after it in its container */
    if (depth == 0) {
      if (count != NULL) *count = elems;
      return 1;
    }
    ws(s);
    if (s->p >= s->end) return 0;
    if (*s->p == ',') {
      s->p++;
      if (open[depth - 1] == '{') goto member;
      if (depth == 1) elems++;
      continue;
    }
    if (*s->p != (open[depth - 1] == '{' ? '}' : ']')) return 0;
    s->p++;
    depth--;
    goto closed;
  }
}

static int key_is(const unsigned char *k, size_t n, const char *name) {
  return strlen(name) == n && memcmp(k, name, n) == 0;
}

/* Reads a body's top-level fields; see server_int.h. */
int sim__body_scan(const char *body, size_t len, sim_body_fields *out) {
  memset(out, 0, sizeof *out);
  out->input_n = -1;
  scan s = {(const unsigned char *)body, (const unsigned char *)body + len};
  ws(&s);
  if (s.p >= s.end || *s.p++ != '{') return 0;
  ws(&s);
  int empty = s.p < s.end && *s.p == '}';
  if (empty) s.p++;
  while (!empty) {
    ws(&s);
    int esc;
    const unsigned char *k = s.p + 1;
    if (s.p >= s.end || *s.p != '"' || !str(&s, &esc) || esc) return 0;
    size_t kn = (size_t)(s.p - 1 - k);
    ws(&s);
    if (s.p >= s.end || *s.p++ != ':') return 0;
    ws(&s);
    if (s.p >= s.end) return 0;
    const unsigned char *v = s.p;
    int n = -1;
    if (!value(&s, &n)) return 0;
    /* cJSON's lookup finds a key's first member */
    if (key_is(k, kn, "model") && !out->has_model) {
      out->has_model = 1;
      if (*v == '"') {
        if (memchr(v + 1, '\\', (size_t)(s.p - 1 - (v + 1))) != NULL) return 0;
        out->model = (const char *)v + 1;
        out->model_len = (size_t)(s.p - 1 - (v + 1));
      }
    } else if (key_is(k, kn, "stream") && !out->has_stream) {
      out->has_stream = 1;
      out->stream = *v == 't';
    } else if (key_is(k, kn, "input") && !out->has_input) {
      out->has_input = 1;
      if (*v == '[') out->input_n = n;
    } else if (key_is(k, kn, "tools")) {
      return 0; /* sim__offered_tools reads their tree */
    }
    ws(&s);
    if (s.p < s.end && *s.p == ',') {
      s.p++;
      continue;
    }
    if (s.p >= s.end || *s.p++ != '}') return 0;
    break;
  }
  ws(&s);
  return s.p == s.end; /* trailing bytes: cJSON ignores them, we ask it */
}
