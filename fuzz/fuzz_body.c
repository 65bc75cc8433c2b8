/*
 * fuzz_body.c - sim/body_scan.c against cJSON: whenever the scanner reads a
 * body's top-level fields itself, cJSON must parse the body too and find
 * the same model, stream flag, input count and no tools. (The scanner may
 * leave any body to cJSON; it may never read one differently.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/server_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sim_body_fields f;
  if (!sim__body_scan((const char *)data, size, &f)) return 0;
  cJSON *j = cJSON_ParseWithLength((const char *)data, size);
  if (j == NULL || !cJSON_IsObject(j)) abort(); /* read a body cJSON rejects */
  cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model");
  if (cJSON_IsString(model)) {
    if (f.model == NULL || strlen(model->valuestring) != f.model_len ||
        memcmp(model->valuestring, f.model, f.model_len) != 0)
      abort();
  } else if (f.model != NULL) {
    abort();
  }
  cJSON *stream = cJSON_GetObjectItemCaseSensitive(j, "stream");
  if (f.has_stream != (stream != NULL) || f.stream != cJSON_IsTrue(stream)) abort();
  cJSON *input = cJSON_GetObjectItemCaseSensitive(j, "input");
  int n = cJSON_IsArray(input) ? cJSON_GetArraySize(input) : -1;
  if (f.input_n != n || f.has_input != (input != NULL)) abort();
  if (cJSON_GetObjectItemCaseSensitive(j, "tools") != NULL) abort();
  cJSON_Delete(j);
  return 0;
}
