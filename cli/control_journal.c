/*
 * control_journal.c - GET /__fusebox/requests: a session's arrivals, read
 * from its own trace lines (each `arrive` joined with its `end`), so the
 * journal says exactly what the trace says.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/control.h"

/* Copies member name of from into to (null when absent). */
static void copy_item(cJSON *to, const char *name, const cJSON *from) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, name);
  cJSON_AddItemToObject(to, name, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
}

/* The journal of a session's trace; see control.h. */
char *cli_control_journal(const char *session, const char *text, size_t len) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddStringToObject(doc, "session", session);
  cJSON *list = cJSON_AddArrayToObject(doc, "requests");
  if (list == NULL) {
    cJSON_Delete(doc);
    return NULL;
  }
  int n = 0;
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
    cJSON *ev = cJSON_ParseWithLength(p, ll);
    p += ll + 1;
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ev, "ev");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(ev, "id");
    if (!cJSON_IsString(kind) || !cJSON_IsNumber(id)) {
      cJSON_Delete(ev);
      continue;
    }
    if (strcmp(kind->valuestring, "arrive") == 0) {
      cJSON *r = cJSON_CreateObject();
      cJSON_AddNumberToObject(r, "n", ++n);
      copy_item(r, "id", ev);
      copy_item(r, "attempt", ev);
      copy_item(r, "key", ev);
      copy_item(r, "method", ev);
      copy_item(r, "path", ev);
      copy_item(r, "provider", ev);
      copy_item(r, "dialect", ev);
      cJSON_AddNullToObject(r, "step");
      cJSON_AddNullToObject(r, "how");
      cJSON_AddNullToObject(r, "state");
      cJSON_AddNullToObject(r, "status");
      cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "t");
      cJSON_AddItemToObject(r, "t_arrive", t ? cJSON_Duplicate(t, 0) : cJSON_CreateNull());
      cJSON_AddNullToObject(r, "t_end");
      cJSON_AddItemToArray(list, r);
    } else if (strcmp(kind->valuestring, "end") == 0) {
      /* Its arrival, searched from the latest (ends follow soon after; a
         cJSON array's first item's prev is its last). */
      cJSON *r = NULL;
      for (cJSON *x = list->child ? list->child->prev : NULL; x != NULL && r == NULL;
           x = x == list->child ? NULL : x->prev) {
        const cJSON *xid = cJSON_GetObjectItemCaseSensitive(x, "id");
        if (cJSON_IsNumber(xid) && xid->valuedouble == id->valuedouble) r = x;
      }
      if (r != NULL) {
        static const char *const fields[][2] = {
            {"step", "step"}, {"how", "how"}, {"state", "state"},
            {"status", "status"}, {"t_end", "t"}};
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
          const cJSON *v = cJSON_GetObjectItemCaseSensitive(ev, fields[i][1]);
          if (v != NULL) cJSON_ReplaceItemInObjectCaseSensitive(r, fields[i][0],
                                                                cJSON_Duplicate(v, 0));
        }
      }
    }
    cJSON_Delete(ev);
  }
  char *out = cJSON_PrintUnformatted(doc);
  cJSON_Delete(doc);
  return out;
}
