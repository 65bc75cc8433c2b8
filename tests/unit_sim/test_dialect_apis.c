/* test_dialect_apis.c - the exact wire bytes of the APIs that have no old
   tree to be held to (test_dialect_bytes.c holds the others): Ollama's
   /api/chat and /api/generate (bodies, errors, NDJSON lines) and Cohere's
   v2 chat (body, error, typed SSE events), Bedrock's Converse (body,
   errors) and the AWS event stream messages of ConverseStream, read back
   by a small reader here (tests/cli/eventstream_codec.sh decodes them
   with the AWS SDK's own codec). Ollama's created_at is the clock's: it
   is checked for its form, then blanked. */
#include <CUnit/CUnit.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim/dialect_int.h"

static sim_step base(void) {
  sim_step s;
  memset(&s, 0, sizeof s);
  s.kind = SIM_STEP_STREAM;
  s.usage_in = s.usage_out = -1;
  s.drop_after = s.stall_after = s.error_after = -1;
  return s;
}

/* Replaces every created_at value in s (RFC 3339, nanoseconds, Z) with T,
   failing when one is not of that form. Returns s. */
static char *blank_times(char *s) {
  static const char key[] = "\"created_at\":\"";
  for (char *p = s ? strstr(s, key) : NULL; p != NULL; p = strstr(p, key)) {
    p += sizeof key - 1;
    char *end = strchr(p, '"');
    CU_ASSERT_FATAL(end != NULL);
    /* 2026-12-02T07:00:00.123456789Z */
    CU_ASSERT_EQUAL(end - p, 30);
    CU_ASSERT(p[4] == '-' && p[10] == 'T' && p[19] == '.' && end[-1] == 'Z');
    memmove(p + 1, end, strlen(end) + 1);
    p[0] = 'T';
  }
  return s;
}

/* got (taken) must be want, byte for byte. */
static void same(const char *what, char *got, const char *want) {
  blank_times(got);
  if (got == NULL || strcmp(got, want) != 0)
    fprintf(stderr, "\n  %s:\n   got  %s\n   want %s\n", what, got ? got : "(null)", want);
  CU_ASSERT_STRING_EQUAL(got, want);
  free(got);
}

static sim_tool_call PARIS = {.id = "call_1", .name = "get_weather",
                              .arguments = "{\"city\": \"Paris\"}"};

static void test_ollama_bodies(void) {
  sim_step s = base();
  s.kind = SIM_STEP_CHAT;
  same("chat", sim__ollama_body(0, &s, "llama3.2", "Hi \"you\"", 2, 3),
       "{\"model\":\"llama3.2\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\","
       "\"content\":\"Hi \\\"you\\\"\"},\"done_reason\":\"stop\",\"done\":true,"
       "\"total_duration\":100000000,\"load_duration\":0,\"prompt_eval_count\":2,"
       "\"prompt_eval_duration\":40000000,\"eval_count\":3,\"eval_duration\":60000000}");
  same("generate", sim__ollama_body(1, &s, "llama3.2", "Hi", 0, 1),
       "{\"model\":\"llama3.2\",\"created_at\":\"T\",\"response\":\"Hi\",\"done_reason\":\"stop\","
       "\"done\":true,\"total_duration\":20000000,\"load_duration\":0,\"prompt_eval_count\":0,"
       "\"prompt_eval_duration\":0,\"eval_count\":1,\"eval_duration\":20000000}");
  s.finish = SIM_FINISH_LENGTH;
  s.tool_calls = &PARIS;
  s.ntool_calls = 1;
  same("chat, tool call, length", sim__ollama_body(0, &s, "m", NULL, 0, 0),
       "{\"model\":\"m\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\",\"content\":\"\","
       "\"tool_calls\":[{\"id\":\"call_1\",\"function\":{\"index\":0,\"name\":\"get_weather\","
       "\"arguments\":{\"city\":\"Paris\"}}}]},\"done_reason\":\"length\",\"done\":true,"
       "\"total_duration\":0,\"load_duration\":0,\"prompt_eval_count\":0,"
       "\"prompt_eval_duration\":0,\"eval_count\":0,\"eval_duration\":0}");
  same("generate has no tool calls", sim__ollama_body(1, &s, "m", "x", 0, 0),
       "{\"model\":\"m\",\"created_at\":\"T\",\"response\":\"x\",\"done_reason\":\"length\","
       "\"done\":true,\"total_duration\":0,\"load_duration\":0,\"prompt_eval_count\":0,"
       "\"prompt_eval_duration\":0,\"eval_count\":0,\"eval_duration\":0}");
  same("error", sim__ollama_error_body(503, NULL),
       "{\"error\":\"The engine is currently overloaded, please try again later.\"}");
  same("error, message", sim__ollama_error_body(404, "model \"x\" not found"),
       "{\"error\":\"model \\\"x\\\" not found\"}");
  same("error via the dispatcher",
       sim__error_body_retry(SIM_DIALECT_OLLAMA_GENERATE, 400, "c", "t", "bad", 3),
       "{\"error\":\"bad\"}");
}

static void test_ollama_stream(void) {
  sim_step s = base();
  s.tool_calls = &PARIS;
  s.ntool_calls = 1;
  s.status = 429;
  char *texts[] = {"Hel", "lo\n"};
  sim_sse o;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_OLLAMA_CHAT, &s, "id", "m", 1, texts, 2, &o),
                        SIM_OK);
  CU_ASSERT_STRING_EQUAL(o.pre, "");
  CU_ASSERT_STRING_EQUAL(o.tail, "");
  CU_ASSERT_EQUAL_FATAL(o.nchunks, 3);
  CU_ASSERT_STRING_EQUAL(blank_times(o.chunk[0]),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\","
                         "\"content\":\"Hel\"},\"done\":false}\n");
  CU_ASSERT_STRING_EQUAL(blank_times(o.chunk[1]),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\","
                         "\"content\":\"lo\\n\"},\"done\":false}\n");
  CU_ASSERT_STRING_EQUAL(blank_times(o.chunk[2]),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\","
                         "\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\",\"function\":{"
                         "\"index\":0,\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}"
                         "}}]},\"done\":false}\n");
  /* tokens out: "Hel", "lo\n" and the call (sim__sse_build's estimate) */
  CU_ASSERT_STRING_EQUAL(blank_times(o.marker),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"message\":{\"role\":\"assistant\","
                         "\"content\":\"\"},\"done_reason\":\"stop\",\"done\":true,"
                         "\"total_duration\":200000000,\"load_duration\":0,"
                         "\"prompt_eval_count\":1,\"prompt_eval_duration\":20000000,"
                         "\"eval_count\":9,\"eval_duration\":180000000}\n");
  CU_ASSERT_STRING_EQUAL(o.error,
                         "{\"error\":\"Rate limit reached. Please try again later.\"}\n");
  CU_ASSERT_EQUAL(o.done, SIM_STATE_COMPLETE);
  sim__sse_clear(&o);
  /* /api/generate: text lines only, the calls are not its */
  s.usage_out = 5;
  CU_ASSERT_EQUAL_FATAL(
      sim__sse_build(SIM_DIALECT_OLLAMA_GENERATE, &s, "id", "m", 0, texts, 1, &o), SIM_OK);
  CU_ASSERT_EQUAL_FATAL(o.nchunks, 1);
  CU_ASSERT_STRING_EQUAL(blank_times(o.chunk[0]),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"response\":\"Hel\","
                         "\"done\":false}\n");
  CU_ASSERT_STRING_EQUAL(blank_times(o.marker),
                         "{\"model\":\"m\",\"created_at\":\"T\",\"response\":\"\","
                         "\"done_reason\":\"stop\",\"done\":true,\"total_duration\":100000000,"
                         "\"load_duration\":0,\"prompt_eval_count\":0,\"prompt_eval_duration\":0,"
                         "\"eval_count\":5,\"eval_duration\":100000000}\n");
  sim__sse_clear(&o);
  CU_ASSERT_STRING_EQUAL(sim__dialect_stream_ctype(SIM_DIALECT_OLLAMA_CHAT),
                         "application/x-ndjson");
  CU_ASSERT_EQUAL(sim__dialect_streams_by_default(SIM_DIALECT_OLLAMA_GENERATE), 1);
  CU_ASSERT_EQUAL(sim__dialect_streams_by_default(SIM_DIALECT_COHERE), 0);
  CU_ASSERT_EQUAL(sim__dialect_tool_form(SIM_DIALECT_OLLAMA_CHAT), 1);
  CU_ASSERT_EQUAL(sim__dialect_tool_form(SIM_DIALECT_OLLAMA_GENERATE), 0);
  CU_ASSERT_EQUAL(sim__dialect_tool_form(SIM_DIALECT_COHERE), 2);
}

#define CO_USAGE(in, out)                                                                  \
  "\"usage\":{\"billed_units\":{\"input_tokens\":" #in ",\"output_tokens\":" #out "},"     \
  "\"tokens\":{\"input_tokens\":" #in ",\"output_tokens\":" #out "}}"

static void test_cohere(void) {
  sim_step s = base();
  s.kind = SIM_STEP_CHAT;
  same("body", sim__cohere_body(&s, "r1", "Hi", 4, 1),
       "{\"id\":\"r1\",\"finish_reason\":\"COMPLETE\",\"message\":{\"role\":\"assistant\","
       "\"content\":[{\"type\":\"text\",\"text\":\"Hi\"}]}," CO_USAGE(4, 1) "}");
  s.finish = SIM_FINISH_LENGTH;
  same("max tokens", sim__cohere_body(&s, "r1", NULL, 0, 0),
       "{\"id\":\"r1\",\"finish_reason\":\"MAX_TOKENS\",\"message\":{\"role\":\"assistant\","
       "\"content\":[{\"type\":\"text\",\"text\":\"\"}]}," CO_USAGE(0, 0) "}");
  s.finish = SIM_FINISH_STOP;
  s.tool_calls = &PARIS;
  s.ntool_calls = 1;
  same("tool call", sim__cohere_body(&s, "r1", "Looking.", 0, 2),
       "{\"id\":\"r1\",\"finish_reason\":\"TOOL_CALL\",\"message\":{\"role\":\"assistant\","
       "\"tool_plan\":\"Looking.\",\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
       "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]"
       "}," CO_USAGE(0, 2) "}");
  same("error", sim__error_body(SIM_DIALECT_COHERE, 429, "code", "type", NULL),
       "{\"message\":\"Rate limit reached. Please try again later.\"}");
  same("error, id", sim__cohere_error_body(500, "r2", "boom"),
       "{\"id\":\"r2\",\"message\":\"boom\"}");

  s.kind = SIM_STEP_STREAM;
  s.usage_out = 7;
  s.tool_calls = &PARIS;
  char *texts[] = {"A"};
  sim_sse o;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_COHERE, &s, "r3", "m", 2, texts, 1, &o),
                        SIM_OK);
  /* an answer that calls tools: its text is the tool plan, no content block */
  CU_ASSERT_STRING_EQUAL(
      o.pre,
      "event: message-start\ndata: {\"type\":\"message-start\",\"id\":\"r3\",\"delta\":{"
      "\"message\":{\"role\":\"assistant\"}}}\n\n");
  CU_ASSERT_EQUAL_FATAL(o.nchunks, 4); /* the text, 17 bytes of arguments in 3 pieces */
  CU_ASSERT_STRING_EQUAL(o.chunk[0],
                         "event: tool-plan-delta\ndata: {\"type\":\"tool-plan-delta\",\"delta\":"
                         "{\"message\":{\"tool_plan\":\"A\"}}}\n\n");
  CU_ASSERT_STRING_EQUAL(
      o.chunk[1],
      "event: tool-call-start\ndata: {\"type\":\"tool-call-start\",\"index\":0,\"delta\":{"
      "\"message\":{\"tool_calls\":{\"id\":\"call_1\",\"type\":\"function\",\"function\":{"
      "\"name\":\"get_weather\",\"arguments\":\"\"}}}}}\n\n"
      "event: tool-call-delta\ndata: {\"type\":\"tool-call-delta\",\"index\":0,\"delta\":{"
      "\"message\":{\"tool_calls\":{\"function\":{\"arguments\":\"{\\\"city\\\":\"}}}}}\n\n");
  CU_ASSERT_STRING_EQUAL(
      o.chunk[3],
      "event: tool-call-delta\ndata: {\"type\":\"tool-call-delta\",\"index\":0,\"delta\":{"
      "\"message\":{\"tool_calls\":{\"function\":{\"arguments\":\"}\"}}}}}\n\n");
  CU_ASSERT_STRING_EQUAL(o.tail,
                         "event: tool-call-end\ndata: {\"type\":\"tool-call-end\",\"index\":0}\n\n");
  CU_ASSERT_STRING_EQUAL(o.marker,
                         "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{"
                         "\"finish_reason\":\"TOOL_CALL\"," CO_USAGE(2, 7) "}}\n\n");
  CU_ASSERT_STRING_EQUAL(o.error,
                         "event: message-end\ndata: {\"type\":\"message-end\",\"delta\":{"
                         "\"finish_reason\":\"ERROR\",\"error\":\"The server had an error while "
                         "processing your request.\"," CO_USAGE(2, 7) "}}\n\n");
  sim__sse_clear(&o);
  /* text, no calls: content-start in pre, content-deltas, content-end in the tail */
  s.ntool_calls = 0;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_COHERE, &s, "r3", "m", 2, texts, 1, &o),
                        SIM_OK);
  CU_ASSERT_STRING_EQUAL(
      o.pre,
      "event: message-start\ndata: {\"type\":\"message-start\",\"id\":\"r3\",\"delta\":{"
      "\"message\":{\"role\":\"assistant\"}}}\n\n"
      "event: content-start\ndata: {\"type\":\"content-start\",\"index\":0,\"delta\":{"
      "\"message\":{\"content\":{\"type\":\"text\",\"text\":\"\"}}}}\n\n");
  CU_ASSERT_STRING_EQUAL(o.chunk[0],
                         "event: content-delta\ndata: {\"type\":\"content-delta\",\"index\":0,"
                         "\"delta\":{\"message\":{\"content\":{\"text\":\"A\"}}}}\n\n");
  CU_ASSERT_STRING_EQUAL(o.tail,
                         "event: content-end\ndata: {\"type\":\"content-end\",\"index\":0}\n\n");
  sim__sse_clear(&o);
  /* no text, no calls: an empty content block, closed in the tail */
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_COHERE, &s, "r3", "m", 2, texts, 0, &o),
                        SIM_OK);
  CU_ASSERT_EQUAL(o.nchunks, 0);
  CU_ASSERT(strstr(o.pre, "content-start") != NULL);
  CU_ASSERT_STRING_EQUAL(o.tail,
                         "event: content-end\ndata: {\"type\":\"content-end\",\"index\":0}\n\n");
  CU_ASSERT(strstr(o.marker, "\"finish_reason\":\"COMPLETE\"") != NULL);
  sim__sse_clear(&o);
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* One event stream message read back: its headers as "name=value;..."
   and its payload; fails on a bad length or CRC. Returns the bytes it
   took. */
static size_t es_read(const char *m, size_t avail, char *hdrs, size_t hcap, char *payload,
                      size_t pcap) {
  const unsigned char *u = (const unsigned char *)m;
  CU_ASSERT_FATAL(avail >= 16);
  uint32_t total = be32(u), hlen = be32(u + 4);
  CU_ASSERT_FATAL(total <= avail && hlen + 16 <= total);
  CU_ASSERT_EQUAL(be32(u + 8), crc32(0, u, 8));
  CU_ASSERT_EQUAL(be32(u + total - 4), crc32(0, u, total - 4));
  size_t at = 12, h = 0;
  hdrs[0] = '\0';
  while (at < 12 + hlen) {
    size_t nl = u[at++];
    CU_ASSERT_EQUAL_FATAL(u[at + nl], 7); /* string */
    size_t vl = (size_t)u[at + nl + 1] << 8 | u[at + nl + 2];
    h += (size_t)snprintf(hdrs + h, hcap - h, "%.*s=%.*s;", (int)nl, m + at, (int)vl,
                          m + at + nl + 3);
    at += nl + 3 + vl;
  }
  CU_ASSERT_EQUAL_FATAL(at, 12 + hlen);
  size_t plen = total - 16 - hlen;
  CU_ASSERT_FATAL(plen < pcap);
  memcpy(payload, m + at, plen);
  payload[plen] = '\0';
  return total;
}

static void test_eventstream(void) {
  /* AWS's "empty message" test vector */
  size_t len = 0;
  char *m = sim__es_message(NULL, NULL, 0, NULL, 0, &len);
  static const unsigned char empty[] = {0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00,
                                        0x05, 0xc2, 0x48, 0xeb, 0x7d, 0x98, 0xc8, 0xff};
  CU_ASSERT_EQUAL_FATAL(len, sizeof empty);
  CU_ASSERT(memcmp(m, empty, sizeof empty) == 0);
  free(m);
  char hdrs[512], payload[1024];
  m = sim__es_event("contentBlockDelta", "{\"a\":1}", &len);
  CU_ASSERT_EQUAL(es_read(m, len, hdrs, sizeof hdrs, payload, sizeof payload), len);
  CU_ASSERT_STRING_EQUAL(hdrs, ":event-type=contentBlockDelta;:content-type=application/json;"
                               ":message-type=event;");
  CU_ASSERT_STRING_EQUAL(payload, "{\"a\":1}");
  CU_ASSERT_EQUAL(len, 12 + (1 + 11 + 3 + 17) + (1 + 13 + 3 + 16) + (1 + 13 + 3 + 5) + 7 + 4);
  free(m);
  m = sim__es_exception("throttlingException", "{}", &len);
  es_read(m, len, hdrs, sizeof hdrs, payload, sizeof payload);
  CU_ASSERT_STRING_EQUAL(hdrs, ":exception-type=throttlingException;:content-type=application/json;"
                               ":message-type=exception;");
  free(m);
  char longname[300];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  const char *names[] = {longname}, *values[] = {"v"};
  CU_ASSERT_PTR_NULL(sim__es_message(names, values, 1, "", 0, &len)); /* name over 255 */

  /* ConverseStream: every frame is whole messages, in order */
  sim_step s = base();
  s.tool_calls = &PARIS;
  s.ntool_calls = 1;
  s.status = 429;
  s.usage_out = 4;
  char *texts[] = {"Hi \"x\"", " caf\xc3\xa9"};
  sim_sse o;
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_BEDROCK, &s, "id", "m", 3, texts, 2, &o),
                        SIM_OK);
  CU_ASSERT_EQUAL(o.binary, 1);
  CU_ASSERT_EQUAL_FATAL(o.nchunks, 2 + 3);
  char all[8192] = "";
  size_t n = 0;
  const char *frames[16];
  size_t lens[16];
  int nf = 0;
  frames[nf] = o.pre, lens[nf++] = o.pre_len;
  for (int i = 0; i < o.nchunks; i++) frames[nf] = o.chunk[i], lens[nf++] = o.lens[i];
  frames[nf] = o.tail, lens[nf++] = o.tail_len;
  frames[nf] = o.marker, lens[nf++] = o.marker_len;
  frames[nf] = o.error, lens[nf++] = o.error_len;
  for (int f = 0; f < nf; f++) {
    for (size_t at = 0; at < lens[f];) {
      at += es_read(frames[f] + at, lens[f] - at, hdrs, sizeof hdrs, payload, sizeof payload);
      n += (size_t)snprintf(all + n, sizeof all - n, "%d %s %s\n", f, strchr(hdrs, '=') + 1,
                            payload);
    }
  }
  CU_ASSERT_STRING_EQUAL(
      all,
      "0 messageStart;:content-type=application/json;:message-type=event; {\"role\":\"assistant\"}\n"
      "1 contentBlockDelta;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":0,\"delta\":{\"text\":\"Hi \\\"x\\\"\"}}\n"
      "2 contentBlockDelta;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":0,\"delta\":{\"text\":\" caf\xc3\xa9\"}}\n"
      "3 contentBlockStop;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":0}\n"
      "3 contentBlockStart;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":1,\"start\":{\"toolUse\":{\"toolUseId\":\"call_1\",\"name\":"
      "\"get_weather\"}}}\n"
      "3 contentBlockDelta;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"{\\\"city\\\":\"}}}\n"
      "4 contentBlockDelta;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\" \\\"Paris\\\"\"}}}\n"
      "5 contentBlockDelta;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":1,\"delta\":{\"toolUse\":{\"input\":\"}\"}}}\n"
      "6 contentBlockStop;:content-type=application/json;:message-type=event; "
      "{\"contentBlockIndex\":1}\n"
      "7 messageStop;:content-type=application/json;:message-type=event; "
      "{\"stopReason\":\"tool_use\"}\n"
      "7 metadata;:content-type=application/json;:message-type=event; "
      "{\"usage\":{\"inputTokens\":3,\"outputTokens\":4,\"totalTokens\":7},"
      "\"metrics\":{\"latencyMs\":100}}\n"
      "8 throttlingException;:content-type=application/json;:message-type=exception; "
      "{\"message\":\"Rate limit reached. Please try again later.\"}\n");
  sim__sse_clear(&o);
  CU_ASSERT_STRING_EQUAL(sim__dialect_stream_ctype(SIM_DIALECT_BEDROCK),
                         "application/vnd.amazon.eventstream");
}

/* InvokeModelWithResponseStream: each Anthropic event a chunk message
   {"bytes": base64 of its JSON}, in the same frames; the error an
   exception message. */
static void test_invoke_stream(void) {
  sim_step s = base();
  s.status = 503;
  char *texts[] = {"Hi", "!"};
  sim_sse o, an;
  CU_ASSERT_EQUAL_FATAL(
      sim__sse_build(SIM_DIALECT_BEDROCK_INVOKE, &s, "msg_1", "m", 1, texts, 2, &o), SIM_OK);
  CU_ASSERT_EQUAL_FATAL(sim__sse_build(SIM_DIALECT_ANTHROPIC, &s, "msg_1", "m", 1, texts, 2, &an),
                        SIM_OK);
  CU_ASSERT_EQUAL_FATAL(o.nchunks, an.nchunks);
  CU_ASSERT_EQUAL(o.binary, 1);
  char hdrs[256], payload[2048];
  es_read(o.chunk[0], o.lens[0], hdrs, sizeof hdrs, payload, sizeof payload);
  CU_ASSERT_STRING_EQUAL(hdrs, ":event-type=chunk;:content-type=application/json;"
                               ":message-type=event;");
  /* {"bytes":"..."}: the base64 of the Anthropic frame's data */
  const char *data = strstr(an.chunk[0], "data: ") + 6;
  size_t dn = (size_t)(strstr(data, "\n\n") - data);
  static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  CU_ASSERT_FATAL(strncmp(payload, "{\"bytes\":\"", 10) == 0);
  char dec[2048];
  size_t k = 0;
  unsigned acc = 0;
  int bits = 0;
  for (const char *p = payload + 10; *p && *p != '"' && *p != '='; p++) {
    acc = acc << 6 | (unsigned)(strchr(A, *p) - A);
    bits += 6;
    if (bits >= 8) dec[k++] = (char)(acc >> (bits -= 8) & 0xff);
  }
  dec[k] = '\0';
  CU_ASSERT_EQUAL(k, dn);
  CU_ASSERT(strncmp(dec, data, dn) == 0);
  CU_ASSERT(strstr(dec, "\"text\":\"Hi\"") != NULL);
  es_read(o.error, o.error_len, hdrs, sizeof hdrs, payload, sizeof payload);
  CU_ASSERT_STRING_EQUAL(hdrs, ":exception-type=serviceUnavailableException;"
                               ":content-type=application/json;:message-type=exception;");
  /* pre: message_start, content_block_start, ping: three chunk messages */
  size_t at = 0;
  int n = 0;
  while (at < o.pre_len) at += es_read(o.pre + at, o.pre_len - at, hdrs, sizeof hdrs, payload,
                                       sizeof payload), n++;
  CU_ASSERT_EQUAL(n, 3);
  sim__sse_clear(&o);
  sim__sse_clear(&an);
}

static void test_bedrock_body(void) {
  sim_step s = base();
  s.kind = SIM_STEP_CHAT;
  same("converse", sim__bedrock_body(&s, "Hi", 2, 1),
       "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"text\":\"Hi\"}]}},"
       "\"stopReason\":\"end_turn\",\"usage\":{\"inputTokens\":2,\"outputTokens\":1,"
       "\"totalTokens\":3},\"metrics\":{\"latencyMs\":100}}");
  s.tool_calls = &PARIS;
  s.ntool_calls = 1;
  s.finish = SIM_FINISH_LENGTH;
  same("converse, tool use, max tokens", sim__bedrock_body(&s, NULL, 0, 0),
       "{\"output\":{\"message\":{\"role\":\"assistant\",\"content\":[{\"toolUse\":{"
       "\"toolUseId\":\"call_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}}}]}},"
       "\"stopReason\":\"max_tokens\",\"usage\":{\"inputTokens\":0,\"outputTokens\":0,"
       "\"totalTokens\":0},\"metrics\":{\"latencyMs\":100}}");
  s.finish = SIM_FINISH_FILTER;
  char *b = sim__bedrock_body(&s, "x", 0, 0);
  CU_ASSERT(b && strstr(b, "\"stopReason\":\"content_filtered\"") != NULL);
  free(b);
  same("error", sim__error_body(SIM_DIALECT_BEDROCK, 503, "c", "t", NULL),
       "{\"message\":\"The engine is currently overloaded, please try again later.\"}");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(429, NULL), "ThrottlingException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(503, ""), "ServiceUnavailableException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(408, NULL), "ModelTimeoutException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(400, NULL), "ValidationException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(403, NULL), "AccessDeniedException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(502, NULL), "InternalServerException");
  CU_ASSERT_STRING_EQUAL(sim__bedrock_error_type(429, "ModelNotReadyException"),
                         "ModelNotReadyException");
}

/* The paths that name these APIs, and the ones that do not. */
static void test_routes(void) {
  static const struct { const char *path; int hit; sim_dialect d; } rows[] = {
      {"/api/chat", 1, SIM_DIALECT_OLLAMA_CHAT},
      {"/api/generate", 1, SIM_DIALECT_OLLAMA_GENERATE},
      {"/v2/chat", 1, SIM_DIALECT_COHERE},
      {"/api/chat/", 0, 0},
      {"/api/tags", 0, 0},
      {"/v2/chatx", 0, 0},
      {"/v1/chat", 0, 0},
      {"/api", 0, 0},
      {"/model/m1/converse", 1, SIM_DIALECT_BEDROCK},
      {"/model/m1/converse-stream", 1, SIM_DIALECT_BEDROCK},
      {"/model/m1/invoke", 1, SIM_DIALECT_BEDROCK_INVOKE},
      {"/model/m1/invoke-with-response-stream", 1, SIM_DIALECT_BEDROCK_INVOKE},
      {"/model/m1/invoke-with-bidirectional-stream", 0, 0},
      {"/model//converse", 0, 0},
      {"/model/m1/converse/x", 0, 0},
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    sim_dialect d = SIM_DIALECT_OPENAI;
    char model[64] = "";
    int stream = 0;
    int hit = sim__route_own_path(rows[i].path, &d, model, sizeof model, &stream);
    CU_ASSERT_EQUAL(hit, rows[i].hit);
    if (hit) CU_ASSERT_EQUAL(d, rows[i].d);
    CU_ASSERT_EQUAL(stream, hit && strstr(rows[i].path, "stream") != NULL);
    if (hit && sim__dialect_binary(d)) CU_ASSERT_STRING_EQUAL(model, "m1");
  }
  char small[3];
  sim_dialect d;
  int st = 0;
  CU_ASSERT_EQUAL(sim__route_own_path("/model/abc/converse", &d, small, sizeof small, &st), 0);
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_OLLAMA_CHAT), "ollama-chat");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_OLLAMA_GENERATE), "ollama-generate");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_COHERE), "cohere");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_BEDROCK), "bedrock-converse");
  CU_ASSERT_STRING_EQUAL(sim__dialect_name(SIM_DIALECT_BEDROCK_INVOKE), "bedrock-invoke");
  CU_ASSERT_STRING_EQUAL(sim__request_id_header(SIM_DIALECT_BEDROCK_INVOKE), "x-amzn-requestid");
}

int suite_dialect_apis(void) {
  CU_pSuite s = CU_add_suite("dialect_apis", NULL, NULL);
  if (s == NULL) return CU_get_error();
  CU_add_test(s, "Ollama bodies and errors: exact bytes", test_ollama_bodies);
  CU_add_test(s, "Ollama NDJSON lines: exact bytes", test_ollama_stream);
  CU_add_test(s, "Cohere v2 body, errors and events: exact bytes", test_cohere);
  CU_add_test(s, "AWS event stream messages and ConverseStream frames", test_eventstream);
  CU_add_test(s, "Bedrock Converse body and errors: exact bytes", test_bedrock_body);
  CU_add_test(s, "Bedrock InvokeModelWithResponseStream chunks", test_invoke_stream);
  CU_add_test(s, "paths of Ollama, Cohere and Bedrock", test_routes);
  return CU_get_error();
}
