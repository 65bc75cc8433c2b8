/*
 * dialect_int.h - what the per-API body writers (sim/dialect_*.c) share:
 * default error fields per status, SSE framing and tool arguments, all
 * written with the JSON writer (sim/json_write_int.h), so no answer builds a
 * cJSON tree to print it. Only sim/dialect*.c include it; the rest of
 * sim/ calls the dispatchers in sim_int.h.
 */
#ifndef FUSEBOX_DIALECT_INT_H
#define FUSEBOX_DIALECT_INT_H

#include "sim/json_write_int.h"
#include "sim/sim_int.h"

/* Bytes one answer body may take once written: a 30 MB step text (what the
   Lua budget holds) escaped, with room to spare. */
#define SIM__BODY_MAX ((size_t)256 << 20)

/* Default error fields per status: OpenAI type and code, Anthropic type,
   Google status. */
typedef struct sim__err_default {
  int status;
  const char *oa_type;
  const char *oa_code;
  const char *an_type;
  const char *message;
} sim__err_default;

/* The defaults for status, or NULL when the table has none. */
const sim__err_default *sim__err_default_for(int status);
/* The message a step gives, else the status's default. Borrowed. */
const char *sim__err_message(int status, const char *message);

/* Starts an SSE frame in w: "event: NAME\n" (none when event is NULL), then
   "data: {" with the object's fields to follow (sim__jw_k*). Frames written
   one after another in one writer are one string of frames. */
void sim__sse_open(sim_jw *w, const char *event);
/* Ends the frame sim__sse_open began: "}\n\n". */
void sim__sse_close(sim_jw *w);
/* key: the tool call's arguments as the JSON cJSON prints once it parses
   them, or {} when they are not valid JSON (the raw text is what streams
   carry). */
void sim__put_args(sim_jw *w, const char *key, const sim_tool_call *tc);

/* Per-API writers: each fills the answer body, the error object or body,
   and the frames of a stream in its provider's shape. Bodies and frames are
   owned by the caller (NULL when out of memory or past SIM__BODY_MAX). */
char *sim__openai_chat_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out);
/* OpenAI's error object {message, type, param, code} as the value of w's
   current key or element. */
void sim__openai_error_write(sim_jw *w, int status, const char *code, const char *type,
                             const char *message);
/* {"error":{...}}, the body of every OpenAI API's error. */
char *sim__openai_error_body(int status, const char *code, const char *type,
                             const char *message);
int sim__openai_chat_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out);
char *sim__completions_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out);
int sim__completions_sse(const sim_step *s, const char *id, const char *model,
                         char **texts, int ntexts, sim_sse *out);
char *sim__models_body(const char *model);

char *sim__anthropic_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out);
char *sim__anthropic_error_body(int status, const char *type, const char *message);
int sim__anthropic_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out);

char *sim__responses_body(const sim_step *s, const char *id, const char *model,
                          const char *text, int tokens_in, int tokens_out);
/* SIM_STATE_INCOMPLETE when a response of s is "incomplete", else
   SIM_STATE_COMPLETE: what its body, or its stream's last event, says. */
sim_end_state sim__responses_done(const sim_step *s);
int sim__responses_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out);

char *sim__gemini_body(const sim_step *s, const char *model, const char *text,
                       int tokens_in, int tokens_out);
char *sim__gemini_error_body(int status, const char *code, const char *message,
                             double retry_s);
int sim__gemini_sse(const sim_step *s, const char *model, int tokens_in,
                    int tokens_out, char **texts, int ntexts, sim_sse *out);

/* dialect_ollama.c: generate = 1 for /api/generate, 0 for /api/chat. */
void sim__ollama_created_at(char out[40]);
char *sim__ollama_body(int generate, const sim_step *s, const char *model,
                       const char *text, int tokens_in, int tokens_out);
char *sim__ollama_error_body(int status, const char *message);
int sim__ollama_stream(int generate, const sim_step *s, const char *model, int tokens_in,
                       int tokens_out, char **texts, int ntexts, sim_sse *out);

/* dialect_cohere.c */
char *sim__cohere_body(const sim_step *s, const char *id, const char *text, int tokens_in,
                       int tokens_out);
char *sim__cohere_error_body(int status, const char *id, const char *message);
int sim__cohere_sse(const sim_step *s, const char *id, int tokens_in, int tokens_out,
                    char **texts, int ntexts, sim_sse *out);

/* dialect_bedrock.c: frames of the stream are binary (out->binary). */
char *sim__bedrock_body(const sim_step *s, const char *text, int tokens_in, int tokens_out);
char *sim__bedrock_error_body(int status, const char *message);
int sim__bedrock_stream(const sim_step *s, int tokens_in, int tokens_out, char **texts,
                        int ntexts, sim_sse *out);
/* InvokeModelWithResponseStream: Anthropic's events as chunk messages. */
int sim__bedrock_invoke_stream(const sim_step *s, const char *id, const char *model,
                               int tokens_in, int tokens_out, char **texts, int ntexts,
                               sim_sse *out);

#endif
