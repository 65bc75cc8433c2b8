/*
 * redact.c - the one redaction rule of fusebox. Every output that may carry
 * a credential (traces, scenarios written by import and record, the record
 * log, captured client output in exec's reports) goes through these
 * functions; docs/trace.md states the rule and docs/security.md where it is
 * applied.
 *
 * The rule has two halves:
 *  - a secret NAME: a header, query parameter or JSON/form field whose name,
 *    ignoring case and surrounding blanks, contains "auth" (not "author"
 *    unless "authoriz", not "authenticate"), "key" (not "idempotency"), "token" (not "tokens",
 *    so token counters stay), "secret", "cookie", "signature", "password",
 *    "passwd", "credential" or "session". Its value is never written.
 *  - a secret VALUE anywhere in text: "sk-" + 8 or more key characters
 *    (OpenAI sk-, sk-proj-, Anthropic sk-ant-), "AIza" + 20 or more (Google),
 *    a run of exactly 32 hex digits (Azure api-key), "Bearer " or "Basic " +
 *    8 or more token characters, an account id ("org-" or "proj_" + 6 or
 *    more id characters, starting a word: openai-organization and
 *    openai-project values quoted in an error message), and NAME=value, NAME: value, "NAME":"value"
 *    where NAME is a secret name. "NAME: value" runs to the end of the line
 *    only on a header line (NAME starts the line); inside a line it is one
 *    word (a scheme word and its token). An exception class name (KeyError,
 *    openai.AuthenticationError) is not a secret name in text: what follows
 *    it is a message.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/sim.h"
#include "sim/sim_int.h"

#define REDACTED "[redacted]"
#define NAME_MAX_LEN 64 /* longer identifiers are not header or field names */

/* 1 when the rem bytes at p start with the literal lit. */
#define STARTS(p, rem, lit) ((rem) >= sizeof(lit) - 1 && memcmp((p), (lit), sizeof(lit) - 1) == 0)

/* The name rule on the lower-case, trimmed, NUL-terminated name, in one
   pass: each word is looked for only where its first letter stands (with
   memcmp of known lengths: strncmp per letter cost ~300 instructions a
   header name, issue 30). With `strict`, -1 for a name that is not lower
   case and trimmed (a capital or one of isspace's bytes): the quick test
   leaves such a name to the rule itself. */
static int name_rule(const char *low, int strict) {
  int key = 0, idempotency = 0;
  size_t n = strlen(low);
  for (size_t i = 0; i < n; i++) {
    const char *p = low + i;
    size_t rem = n - i;
    switch (*p) {
    case 's':
      if (STARTS(p, rem, "secret") || STARTS(p, rem, "signature") || STARTS(p, rem, "session"))
        return 1;
      break;
    case 'c':
      if (STARTS(p, rem, "cookie") || STARTS(p, rem, "credential")) return 1;
      break;
    case 'p':
      if (STARTS(p, rem, "password") || STARTS(p, rem, "passwd")) return 1;
      break;
    case 'a':
      if (!STARTS(p, rem, "auth")) break;
      if (STARTS(p, rem, "author") && !STARTS(p, rem, "authoriz")) break;
      if (STARTS(p, rem, "authenticate"))
        break; /* WWW-Authenticate is a challenge, not a credential */
      return 1;
    case 't':
      if (STARTS(p, rem, "token") && p[5] != 's') return 1; /* "tokens": counters stay */
      break;
    case 'k':
      if (STARTS(p, rem, "key")) key = 1;
      break;
    case 'i':
      if (STARTS(p, rem, "idempotency")) idempotency = 1;
      break;
    default:
      if (strict && ((*p >= 'A' && *p <= 'Z') || *p == ' ' || (*p >= '\t' && *p <= '\r')))
        return -1;
      break;
    }
  }
  return key && !idempotency;
}

static int name_secret_low(const char *low) { return name_rule(low, 0); }

/* The name rule on n bytes (no terminator needed): trimmed and lower-cased
   once into a buffer, then read in one pass (issue 13: the rule runs on
   every header of every request; it was a strncasecmp at every byte for
   every word). A name too long for memory is taken as secret. */
static int name_secret(const char *s, size_t n) {
  while (n > 0 && isspace((unsigned char)*s)) s++, n--;
  while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
  if (n == 0) return 0;
  char small[128];
  char *low = n < sizeof small ? small : malloc(n + 1);
  if (low == NULL) return 1;
  for (size_t i = 0; i < n; i++) {
    char c = (char)tolower((unsigned char)s[i]);
    low[i] = c == '\0' ? ' ' : c; /* a NUL would end the search early */
  }
  low[n] = '\0';
  int r = name_secret_low(low);
  if (low != small) free(low);
  return r;
}

/* 1 if a header, query parameter or field named name carries a credential. */
int sim_redact_name(const char *name) {
  return name != NULL && name_secret(name, strlen(name));
}

int sim__header_is_secret(const char *name) { return sim_redact_name(name); }

/* A growable output with a hard maximum (input length x 2 + 64). */
typedef struct out_buf {
  char *p;
  size_t len, cap;
} out_buf;

static void put(out_buf *b, const char *s, size_t n) {
  if (b->p == NULL || b->len + n + 1 > b->cap) {
    if (b->p != NULL) {
      size_t cap = b->cap * 2 + n + 1;
      char *q = realloc(b->p, cap);
      if (q == NULL) {
        free(b->p);
        b->p = NULL;
        return;
      }
      b->p = q;
      b->cap = cap;
    }
    if (b->p == NULL) return;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static int key_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_';
}
static int token_char(char c) {
  return key_char(c) || c == '.' || c == '/' || c == '+' || c == '=' || c == '~';
}
static int ident_char(char c) {
  return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

/* Length of a value pattern at s[i] (0: none); *prefix gets how many of its
   bytes stay in clear ("sk-", "Bearer "). */
static size_t value_at(const char *s, size_t n, size_t i, int after_repl, size_t *prefix) {
  int boundary = i == 0 || after_repl || !isalnum((unsigned char)s[i - 1]);
  if (!boundary) return 0;
  size_t j;
  if (i + 3 <= n && strncmp(s + i, "sk-", 3) == 0) {
    for (j = i + 3; j < n && key_char(s[j]); j++) {}
    if (j - i - 3 >= 8) return *prefix = 3, j - i;
  }
  if (i + 4 <= n && strncmp(s + i, "AIza", 4) == 0) {
    for (j = i + 4; j < n && key_char(s[j]); j++) {}
    if (j - i - 4 >= 20) return *prefix = 4, j - i;
  }
  /* Account ids start a word of id characters: "my-org-abcdef" is not one. */
  static const struct {
    const char *p;
    size_t n;
  } ACCOUNTS[] = {{"org-", 4}, {"proj_", 5}};
  for (size_t k = 0; k < sizeof ACCOUNTS / sizeof ACCOUNTS[0]; k++) {
    if (i + ACCOUNTS[k].n > n || strncmp(s + i, ACCOUNTS[k].p, ACCOUNTS[k].n) != 0) continue;
    if (i > 0 && !after_repl && (s[i - 1] == '-' || s[i - 1] == '_')) continue;
    for (j = i + ACCOUNTS[k].n; j < n && key_char(s[j]); j++) {}
    if (j - i - ACCOUNTS[k].n >= 6) return *prefix = ACCOUNTS[k].n, j - i;
  }
  static const char *const schemes[] = {"bearer", "basic", NULL};
  for (int k = 0; schemes[k]; k++) {
    size_t m = strlen(schemes[k]);
    if (i + m + 1 <= n && strncasecmp(s + i, schemes[k], m) == 0 && s[i + m] == ' ') {
      size_t v = i + m;
      while (v < n && s[v] == ' ') v++;
      for (j = v; j < n && token_char(s[j]); j++) {}
      if (j - v >= 8) return *prefix = v - i, j - i;
    }
  }
  if (isxdigit((unsigned char)s[i])) {
    for (j = i; j < n && isxdigit((unsigned char)s[j]); j++) {}
    if (j - i == 32 && (j == n || !isalnum((unsigned char)s[j]))) return *prefix = 0, 32;
  }
  return 0;
}

/* 1 when the n bytes at s name an exception class (KeyError,
   openai.AuthenticationError, TokenExpiredError): the last dotted part is
   letters and digits only and ends in Error, Exception or Warning. In text
   such a name is followed by its message, never by a credential, so the
   secret words inside it ("key", "auth", "token") do not make it a secret
   name. A header name has a '-' (X-Key-Error) and stays one. */
static int exception_name(const char *s, size_t n) {
  static const char *const SUFFIXES[] = {"Error", "Exception", "Warning", NULL};
  size_t b = n;
  while (b > 0 && s[b - 1] != '.') b--;
  for (size_t k = b; k < n; k++)
    if (!isalnum((unsigned char)s[k])) return 0;
  for (int k = 0; SUFFIXES[k]; k++) {
    size_t m = strlen(SUFFIXES[k]);
    if (n - b > m && memcmp(s + n - m, SUFFIXES[k], m) == 0) return 1;
  }
  return 0;
}

/* 1 when s[i] starts a header line in text: only blanks and the markers of
   a verbose HTTP log (curl -v's '>' and '<', '*') before it on its line. */
static int header_line_at(const char *s, size_t i, int after_repl) {
  if (after_repl) return 0; /* the output has ']' before s[i] */
  for (; i > 0 && s[i - 1] != '\n' && s[i - 1] != '\r'; i--)
    if (strchr(" \t><*", s[i - 1]) == NULL) return 0;
  return 1;
}

/* At s[i], an identifier that is a secret name followed by a separator and a
   value: returns the offset where the value starts and sets *vend; else 0.
   after_repl: s[i - 1] was replaced, so the output has ']' before s[i] (a
   second pass must see the same boundaries as the first). */
static size_t named_value_at(const char *s, size_t n, size_t i, int after_repl, size_t *vend) {
  if (i > 0 && !after_repl && ident_char(s[i - 1])) return 0;
  size_t j = i;
  while (j < n && ident_char(s[j]) && j - i <= NAME_MAX_LEN) j++;
  if (j == i || j - i > NAME_MAX_LEN || !name_secret(s + i, j - i)) return 0;
  if (exception_name(s + i, j - i)) return 0;
  int quoted_name = i > 0 && s[i - 1] == '"' && j < n && s[j] == '"';
  if (quoted_name) j++;
  while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
  if (j >= n || (s[j] != ':' && s[j] != '=')) return 0;
  char sep = s[j++];
  while (j < n && (s[j] == ' ' || s[j] == '\t')) j++;
  if (j < n && s[j] == '"') {
    size_t v = ++j;
    while (j < n && s[j] != '"') j += (s[j] == '\\' && j + 1 < n) ? 2 : 1;
    *vend = j;
    return j > v ? v : 0;
  }
  if (quoted_name && sep == ':') return 0; /* a JSON number or object: left as it is */
  if (n - j >= strlen(REDACTED) && strncmp(s + j, REDACTED, strlen(REDACTED)) == 0) {
    *vend = j + strlen(REDACTED); /* already redacted: skipped whole, so the rule is stable */
    return j;
  }
  size_t v = j;
  while (j < n && !isspace((unsigned char)s[j]) && strchr("&;,\"'<>)}]", s[j]) == NULL) j++;
  if (sep == ':' && !quoted_name && header_line_at(s, i, after_repl)) {
    /* a header line: the value runs to the end of the line */
    while (j < n && s[j] != '\n' && s[j] != '\r') j++;
  } else if (sep == ':' && j > v && j < n && (s[j] == ' ' || s[j] == '\t')) {
    /* mid-line "NAME: value": one word, or an auth scheme and its token
       ("Authorization: Bearer abc" inside a log line) */
    static const char *const SCHEMES[] = {"bearer", "basic", "token", "digest", "apikey",
                                          "negotiate", NULL};
    int scheme = 0;
    for (int k = 0; SCHEMES[k]; k++)
      if (j - v == strlen(SCHEMES[k]) && strncasecmp(s + v, SCHEMES[k], j - v) == 0) scheme = 1;
    size_t t = j;
    while (t < n && (s[t] == ' ' || s[t] == '\t')) t++;
    if (scheme && t < n && token_char(s[t]))
      for (j = t; j < n && !isspace((unsigned char)s[j]) && strchr("&;,\"'<>)}]", s[j]) == NULL; j++) {}
  }
  *vend = j;
  return j > v ? v : 0;
}

/* c in lower case when it is an ASCII capital. */
static char ascii_low(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* 1 when the rem bytes at s start with the lower-case word w, in any case. */
static int starts_any_case(const char *s, size_t rem, const char *w) {
  size_t i = 0;
  for (; w[i] != '\0'; i++)
    if (i >= rem || ascii_low(s[i]) != w[i]) return 0;
  return 1;
}

/* 1 when one of the secret-name rule's words (any case) is in the n bytes
   at s: a named value (NAME: value, NAME=value) can only be there then. */
static int has_name_word(const char *s, size_t n) {
  static const char *const WORDS[] = {"auth", "key", "token", "secret", "cookie", "signature",
                                      "password", "passwd", "credential", "session", NULL};
  for (size_t i = 0; i < n; i++) {
    char c = ascii_low(s[i]);
    if (c != 'a' && c != 'k' && c != 't' && c != 's' && c != 'c' && c != 'p') continue;
    for (int w = 0; WORDS[w] != NULL; w++)
      if (WORDS[w][0] == c && starts_any_case(s + i, n - i, WORDS[w])) return 1;
  }
  return 0;
}

/* 1 when no rule can match the n bytes at s, so the text is its own
   redaction: too short for a 32-digit key, no blank (a Bearer or Basic
   value needs one), no key prefix, and no ':' or '=' unless no secret
   name's word is there either (a named value needs both). Most header
   values are such (issue 13: each was scanned for every rule at every
   byte; issue 30: `Host: 127.0.0.1:PORT` was, for its ':'). */
static int nothing_to_find(const char *s, size_t n) {
  /* What each byte may start: 1 stops the scan, 2 is a separator, 3 a key
     prefix's first letter. One lookup a byte (issue 30). */
  static const unsigned char CLASS[256] = {[' '] = 1, ['\0'] = 1, [':'] = 2, ['='] = 2,
                                           ['s'] = 3, ['A'] = 3, ['o'] = 3, ['p'] = 3};
  if (n >= 32) return 0;
  int sep = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char k = CLASS[(unsigned char)s[i]];
    if (k == 0) continue;
    if (k == 1) return 0;
    if (k == 2) {
      sep = 1;
      continue;
    }
    const char *p = s + i;
    size_t rem = n - i;
    if (STARTS(p, rem, "sk-") || STARTS(p, rem, "AIza") || STARTS(p, rem, "org-") ||
        STARTS(p, rem, "proj_"))
      return 0;
  }
  return !sep || !has_name_word(s, n);
}

/*
 * Returns a copy of the n bytes at text with every secret value replaced
 * (the rule above), NUL-terminated; NULL when out of memory. The caller
 * owns the result and frees it.
 */
char *sim_redact_text(const char *text, size_t n) {
  out_buf b = {malloc(n + 64), 0, n + 64};
  if (b.p == NULL) return NULL;
  b.p[0] = '\0';
  if (nothing_to_find(text, n)) {
    put(&b, text, n);
    return b.p;
  }
  size_t i = 0, copied = 0, replaced_to = (size_t)-1;
  while (i < n) {
    size_t prefix = 0, vend = 0, v;
    int after_repl = i == replaced_to;
    size_t len = value_at(text, n, i, after_repl, &prefix);
    if (len > 0) {
      put(&b, text + copied, i + prefix - copied);
      put(&b, REDACTED, strlen(REDACTED));
      i += len;
      copied = replaced_to = i;
      continue;
    }
    if ((v = named_value_at(text, n, i, after_repl, &vend)) > 0) {
      put(&b, text + copied, v - copied); /* the name stays, the value goes */
      put(&b, REDACTED, strlen(REDACTED));
      i = copied = replaced_to = vend;
      continue;
    }
    i++;
  }
  put(&b, text + copied, n - copied);
  return b.p;
}

/* The text rule's quick answer; see sim_int.h. */
int sim__redact_text_clean(const char *text, size_t len) { return nothing_to_find(text, len); }

/* The header rule's quick answer (sim_int.h): the name is a lower-case
   token, so it is read as it is, without the trim and copy of name_secret. */
int sim__redact_header_clean(const char *name_low, const char *value, size_t len) {
  return name_rule(name_low, 1) == 0 && nothing_to_find(value, len);
}

/*
 * The value to write for a header: "[redacted]" when its name is secret,
 * else the value with secret values replaced. NULL value is "". The caller
 * owns the result; NULL when out of memory.
 */
char *sim_redact_header(const char *name, const char *value) {
  if (sim_redact_name(name)) return strdup(REDACTED);
  if (value == NULL) value = "";
  return sim_redact_text(value, strlen(value));
}
