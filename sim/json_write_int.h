/*
 * json_write_int.h - JSON written straight from fields to bytes (issue 13):
 * the trace's lines and the answer bodies of the hot path, without
 * building a cJSON tree and printing it. One escaping rule for both:
 * strings escaped as cJSON_PrintUnformatted does, numbers as cJSON
 * prints them (integers digit by digit, others %.15g unless only %.17g
 * reads back within DBL_EPSILON), so the bytes are the ones cJSON would
 * print for the same tree.
 *
 * The trace sets `fix_utf8` (a trace line is always valid UTF-8); answer
 * bodies leave it 0 and pass a scenario's bytes on as cJSON and the shared
 * large-body writer (sim__json_escape_some) do.
 *
 * Commas are the writer's: a key or an array element gets one unless it
 * follows '{', '[' or ':'. A writer never grows past its maximum; past it,
 * or out of memory, it stops writing and `oom` says so.
 */
#ifndef FUSEBOX_JSON_WRITE_INT_H
#define FUSEBOX_JSON_WRITE_INT_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct sim_jw {
  char *p;       /* the bytes so far, not NUL-terminated until sim__jw_take */
  size_t n, cap;
  size_t max;    /* the most bytes this writer may hold */
  int oom;       /* over max or out of memory: nothing more is written */
  int fix_utf8;  /* 1: every invalid UTF-8 byte (F5-FF, overlong, surrogate)
                    is written as U+FFFD */
} sim_jw;

/* An empty writer that may grow to max bytes (its buffer is made on the
   first write), fix_utf8 0. */
void sim__jw_init(sim_jw *w, size_t max);
/* Forgets what was written, keeping the buffer for the next use. */
void sim__jw_reset(sim_jw *w);
/* Frees the buffer. */
void sim__jw_free(sim_jw *w);
/* The bytes as a NUL-terminated string, and the writer empty; NULL when
   the writer ran out of room or memory (then it is freed). Owned by the
   caller. */
char *sim__jw_take(sim_jw *w);

/* Raw bytes, as they are. */
void sim__jw_raw(sim_jw *w, const char *s, size_t n);
/* A literal run of JSON (a template's fixed part): `"object":"x","n":` is
   one copy, where the writer's calls would escape each key; it must leave
   the writer where its calls would (a value next after ':' or '{'). */
#define SIM__JW_LIT(w, lit) sim__jw_raw((w), (lit), sizeof(lit) - 1)
/* '{' or '[' (with the comma an element before it needs), and '}' or ']'. */
void sim__jw_open(sim_jw *w, char c);
void sim__jw_close(sim_jw *w, char c);
/* An object's key and its ':' (with the comma before it). */
void sim__jw_key(sim_jw *w, const char *key);

/* Values (each with the comma an array element needs). NULL s is "". */
void sim__jw_str(sim_jw *w, const char *s);
void sim__jw_strn(sim_jw *w, const char *s, size_t n);
void sim__jw_num(sim_jw *w, double d);
void sim__jw_bool(sim_jw *w, int v);
void sim__jw_null(sim_jw *w);
/* A cJSON tree, written as cJSON_PrintUnformatted would (nesting deeper
   than cJSON parses, CJSON_NESTING_LIMIT, is written as null). */
void sim__jw_cjson(sim_jw *w, const cJSON *j);

/* key: value where key is a string literal that needs no escaping and a
   field comes before it in its object: `,"key":` is one copy (the trace's
   lines and the hot bodies write a dozen such keys per request). */
#define SIM__JW_NEXT_STR(w, key, s) sim__jw_next_str((w), ",\"" key "\":", sizeof(key) + 3, (s))
#define SIM__JW_NEXT_NUM(w, key, d) sim__jw_next_num((w), ",\"" key "\":", sizeof(key) + 3, (d))
#define SIM__JW_NEXT_BOOL(w, key, v) sim__jw_next_bool((w), ",\"" key "\":", sizeof(key) + 3, (v))
#define SIM__JW_NEXT_INT(w, key, v) sim__jw_next_int((w), ",\"" key "\":", sizeof(key) + 3, (v))
/* A template's literal run, then a string or an integer, in one call. */
#define SIM__JW_LIT_STR(w, lit, s) sim__jw_next_str((w), (lit), sizeof(lit) - 1, (s))
#define SIM__JW_LIT_INT(w, lit, v) sim__jw_next_int((w), (lit), sizeof(lit) - 1, (v))
#define SIM__JW_NEXT_KEY(w, key) SIM__JW_LIT((w), ",\"" key "\":")
void sim__jw_next_str(sim_jw *w, const char *lit, size_t n, const char *s);
void sim__jw_next_num(sim_jw *w, const char *lit, size_t n, double d);
void sim__jw_next_bool(sim_jw *w, const char *lit, size_t n, int v);
/* An integer after lit, in one write: what sim__jw_next_num prints for it
   (the trace's counts and ids, issue 30). */
void sim__jw_next_int(sim_jw *w, const char *lit, size_t n, long long v);
/* us microseconds as milliseconds after lit (1234567 as 1234.567, 2000
   as 2): what sim__jw_next_num prints for us / 1000.0 (the trace's
   times). */
void sim__jw_next_us(sim_jw *w, const char *lit, size_t n, long long us);

/* key: value in one call. */
void sim__jw_kstr(sim_jw *w, const char *key, const char *s);
void sim__jw_knum(sim_jw *w, const char *key, double d);
void sim__jw_kbool(sim_jw *w, const char *key, int v);
void sim__jw_knull(sim_jw *w, const char *key);

/* Length of the valid UTF-8 sequence at s (0 if invalid), at most n bytes:
   the rule every JSON fusebox writes follows. */
size_t sim__utf8_len(const unsigned char *s, size_t n);

#endif
