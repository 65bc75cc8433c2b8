/*
 * dialect_int.h - what the per-API body writers (sim/dialect_*.c) share:
 * default error fields per status, SSE framing and cJSON helpers. Only
 * sim/dialect*.c include it; the rest of sim/ calls the dispatchers in
 * sim_int.h.
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

/* Prints o unformatted and deletes it; NULL in, NULL out. Owned by the
   caller. */
char *sim__print_free(cJSON *o);
/* "event: NAME\ndata: JSON\n\n" (event NULL: the data line only); takes
   data. Owned by the caller; NULL when out of memory. */
char *sim__frame(const char *event, cJSON *data);
/* a then b in a new string; frees both; NULL if either is NULL. */
char *sim__concat2(char *a, char *b);
/* The tool call's arguments parsed as JSON, or an empty object when they
   are not valid JSON (the raw text is what streams carry). Owned by the
   caller. */
cJSON *sim__tool_args_json(const sim_tool_call *tc);

/* Per-API writers: each fills the answer body, the error object or body,
   and the frames of a stream in its provider's shape. */
char *sim__openai_chat_body(const sim_step *s, const char *id, const char *model,
                            const char *text, int tokens_in, int tokens_out);
cJSON *sim__openai_error_object(int status, const char *code, const char *type,
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
int sim__responses_sse(const sim_step *s, const char *id, const char *model,
                       int tokens_in, int tokens_out, char **texts, int ntexts,
                       sim_sse *out);

char *sim__gemini_body(const sim_step *s, const char *model, const char *text,
                       int tokens_in, int tokens_out);
char *sim__gemini_error_body(int status, const char *code, const char *message,
                             double retry_s);
int sim__gemini_sse(const sim_step *s, const char *model, int tokens_in,
                    int tokens_out, char **texts, int ntexts, sim_sse *out);

#endif
