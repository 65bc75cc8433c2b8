/*
 * lua.c - a schedule written as a standard scenario file: its faults on
 * attempts 1..n of every logical request, then the answer, with the
 * best-practice expect table a hunt judges by.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explore/explore_int.h"

/* A Lua string literal of s: quoted, with every byte that needs it escaped. */
void xpl__add_quoted(xpl__sbuf *b, const char *s) {
  xpl__add(b, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') xpl__add(b, "\\%c", *p);
    else if (*p < 0x20 || *p == 0x7f) xpl__add(b, "\\%03d", *p);
    else xpl__add(b, "%c", *p);
  }
  xpl__add(b, "\"");
}

static const char *const TOOL_OK =
    "tool_calls = { { name = \"get_weather\", arguments = { city = \"Paris\" } } }";
static const char *const CHUNKS = "chunks = { \"The answer \", \"is \", \"forty-two.\" }, interval = 0.01";

/* The step that answers the call well. */
static void add_answer(xpl__sbuf *b, int call) {
  switch (call) {
  case XPL_CALL_STREAM: xpl__add(b, "stream { %s }", CHUNKS); break;
  case XPL_CALL_TOOLS: xpl__add(b, "chat { %s }", TOOL_OK); break;
  case XPL_CALL_STREAM_TOOLS: xpl__add(b, "stream { %s }", TOOL_OK); break;
  default: xpl__add(b, "chat { content = \"The answer is forty-two.\" }"); break;
  }
}

/* A fail step's table body for the statuses every API shapes alike. */
static void add_fail(xpl__sbuf *b, const xpl_step *st) {
  switch (st->kind) {
  case XPL_S_5XX: xpl__add(b, "fail { status = %d }", xpl__5xx[st->a]); break;
  case XPL_S_4XX: xpl__add(b, "fail { status = %d }", xpl__4xx[st->a]); break;
  case XPL_S_429:
    if (st->a == 0) xpl__add(b, "fail { status = 429 }");
    else if (st->a == 1) xpl__add(b, "fail { status = 429, retry_after = %d }", xpl__ra_s[st->b]);
    else if (st->a == 2) xpl__add(b, "fail { status = 429, retry_after_ms = %d }", xpl__ra_s[st->b] * 1000);
    else xpl__add(b, "fail { status = 429, retry_after_date = %d }", xpl__ra_s[st->b]);
    break;
  case XPL_S_QUOTA:
    xpl__add(b, "fail { status = 429, code = \"insufficient_quota\", type = \"insufficient_quota\", "
           "message = \"You exceeded your current quota, please check your plan and billing "
           "details.\" }");
    break;
  case XPL_S_529: xpl__add(b, "fail { status = 529, type = \"overloaded_error\", message = \"Overloaded\" }"); break;
  case XPL_S_SHOULD_RETRY:
    xpl__add(b, "fail { status = %d, headers = { [\"x-should-retry\"] = \"%s\" } }", st->a ? 409 : 500,
        st->a ? "true" : "false");
    break;
  default: xpl__add(b, "fail { status = 503 }"); break;
  }
}

/* The stream a stream fault cuts: text, or the tool call. */
static const char *stream_body(int call) { return call == XPL_CALL_STREAM_TOOLS ? TOOL_OK : CHUNKS; }

static void add_step(xpl__sbuf *b, int call, const xpl_step *st) {
  /* chunks: only the stream kinds' b indexes that ladder (UBSan caught a
     429's b read past it) */
  int n = st->b < 3 ? xpl__chunks[st->b] : 0;
  switch (st->kind) {
  case XPL_S_DROP: xpl__add(b, "drop {}"); break;
  case XPL_S_RESET: xpl__add(b, "reset {}"); break;
  case XPL_S_HANG: xpl__add(b, "hang {}"); break;
  case XPL_S_GARBAGE: xpl__add(b, "garbage {}"); break;
  case XPL_S_DELAY:
    xpl__add(b, "delay { %g, ", xpl__delay_s[st->b]);
    add_answer(b, call);
    xpl__add(b, " }");
    break;
  case XPL_S_TRUNCATE:
    xpl__add(b, "truncate { ");
    add_answer(b, call);
    xpl__add(b, ", at = %d, mode = \"%s\" }", xpl__trunc_at[st->b], st->a ? "early-close" : "short-body");
    break;
  case XPL_S_STREAM_DROP: xpl__add(b, "stream { %s, drop_after = %d }", stream_body(call), n); break;
  case XPL_S_STREAM_STALL:
    xpl__add(b, "stream { %s, stall_after = %d, stall = 60 }", stream_body(call), n);
    break;
  case XPL_S_STREAM_ERROR:
    xpl__add(b, "stream { %s, error_after = %d, error = { type = \"server_error\", "
           "message = \"The server had an error while processing your request.\" } }",
        stream_body(call), n);
    break;
  case XPL_S_STREAM_NO_END: xpl__add(b, "stream { %s, no_end = true }", CHUNKS); break;
  case XPL_S_TOOL_CUT: xpl__add(b, "stream { %s, drop_after = 1 }", TOOL_OK); break;
  case XPL_S_TOOL_BAD_JSON:
    xpl__add(b, "chat { tool_calls = { { name = \"get_weather\", arguments = '{\"city\": \"Par' } } }");
    break;
  case XPL_S_TOOL_UNKNOWN:
    xpl__add(b, "chat { tool_calls = { { name = \"delete_all_files\", arguments = { path = \"/\" } } } }");
    break;
  default: add_fail(b, st); break;
  }
}

/* At the effect endpoint every fault is an effect step. */
static void add_effect_step(xpl__sbuf *b, const xpl_step *st) {
  static const char *const respond[3] = {"drop", "reset", "hang"};
  if (st->kind == XPL_S_EFFECT_DROP) xpl__add(b, "effect { apply = true, respond = \"%s\" }", respond[st->a]);
  else if (st->kind == XPL_S_EFFECT_LOST) xpl__add(b, "effect { apply = false, respond = \"drop\" }");
  else {
    xpl__add(b, "effect { apply = false, respond = ");
    add_fail(b, st);
    xpl__add(b, " }");
  }
}

char *xpl_schedule_lua(const xpl_schedule *s, const xpl_lua_opts *o) {
  xpl__sbuf b = {0};
  char text[1024];
  xpl_schedule_text(s, text, sizeof text);
  char code[512];
  xpl_schedule_code(s, code, sizeof code);
  xpl__add(&b, "-- written by fusebox hunt\n-- schedule: %s\nreturn scenario {\n  name = ", code);
  xpl__add_quoted(&b, o->name ? o->name : "hunt");
  xpl__add(&b, ",\n  doc = ");
  xpl__add_quoted(&b, o->doc ? o->doc : text);
  xpl__add(&b, ",\n  tags = { \"hunt\" },\n\n");
  int effect = s->call == XPL_CALL_EFFECT;
  xpl__add(&b, effect ? "  effects = {\n" : "  provider = {\n");
  for (int i = 0; i < s->n; i++) {
    xpl__add(&b, "    ");
    if (effect) add_effect_step(&b, &s->s[i]);
    else add_step(&b, s->call, &s->s[i]);
    xpl__add(&b, ",\n");
  }
  xpl__add(&b, "    ");
  if (effect) xpl__add(&b, "effect { apply = true }");
  else add_answer(&b, s->call);
  xpl__add(&b, ",\n  },\n");
  if (effect) xpl__add(&b, "  idempotency = \"honoured\",\n");
  xpl__add(&b, "\n  client = { call = \"%s\"", xpl_call_name(s->call));
  if (o->dialect && !effect) xpl__add(&b, ", dialect = \"%s\"", o->dialect);
  xpl__add(&b, ", deadline = 30 },\n\n  expect = {\n");
  if (o->point) {
    xpl__add(&b, "    point = { ");
    xpl__add_quoted(&b, o->point);
    xpl__add(&b, " },\n");
  }
  xpl__add(&b, "    max_requests = %d,\n", o->max_requests > 0 ? o->max_requests : 10);
  xpl__add(&b, "    no_retry_after = { \"permanent\", \"quota\" },\n"
          "    retry_after_honoured = true,\n"
          "    side_effects = true,\n"
          "    no_stream_splice = true,\n"
          "    tool_integrity = true,\n");
  xpl__add(&b, "  },\n}\n");
  if (b.oom) {
    free(b.p);
    return NULL;
  }
  return b.p;
}
