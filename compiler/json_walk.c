#include "compiler/json_walk.h"

#include <json.h>
#include <limits.h>
#include <string.h>

void json_walk_init(JsonWalk *w, const char *s, size_t len, int max_depth)
{
    memset(w, 0, sizeof *w);
    w->s = s;
    w->len = len;
    w->max_depth = max_depth;
}

void json_walk_free(JsonWalk *w)
{
    for (int i = 0; i < JSON_WALK_LEVELS; i++)
        if (w->tok[i]) json_tokener_free(w->tok[i]);
    json_object_put(w->key);
    memset(w, 0, sizeof *w);
}

/* The character after whitespace (moved past), '\0' at the end. */
static char peek(JsonWalk *w)
{
    while (w->pos < w->len) {
        char c = w->s[w->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c;
        w->pos++;
    }
    return '\0';
}

bool json_walk_open(JsonWalk *w, char c)
{
    if (peek(w) != c || w->level >= JSON_WALK_LEVELS) return false;
    w->pos++;
    w->level++;
    return true;
}

/* The step shared by members and elements: 0 at `close` (consumed), -1 on a missing comma or a
 * trailing one, 1 with the cursor at the next item. */
static int next_item(JsonWalk *w, bool *first, char close)
{
    char c = peek(w);
    if (c == close) {
        w->pos++;
        w->level--;
        return 0;
    }
    if (!*first) {
        if (c != ',') return -1;
        w->pos++;
        c = peek(w);
        if (c == close) return -1;
    }
    *first = false;
    return c ? 1 : -1;
}

bool json_walk_value(JsonWalk *w, struct json_object **v)
{
    *v = NULL;
    int depth = w->level;
    if (depth < 0 || depth >= JSON_WALK_LEVELS || depth >= w->max_depth ||
        w->len - w->pos > (size_t)INT_MAX)
        return false;
    if (!w->tok[depth]) {
        w->tok[depth] = json_tokener_new_ex(w->max_depth - depth);
        if (!w->tok[depth]) return false;
    }
    struct json_tokener *tok = w->tok[depth];
    json_tokener_reset(tok);
    struct json_object *o = json_tokener_parse_ex(tok, w->s + w->pos, (int)(w->len - w->pos));
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(o);
        return false;
    }
    w->pos += json_tokener_get_parse_end(tok);
    *v = o;
    return true;
}

int json_walk_member(JsonWalk *w, bool *first, const char **key)
{
    *key = NULL;
    int k = next_item(w, first, '}');
    if (k != 1) return k;
    json_object_put(w->key);
    w->key = NULL;
    if (w->s[w->pos] != '"' || !json_walk_value(w, &w->key) ||
        !json_object_is_type(w->key, json_type_string) || peek(w) != ':')
        return -1;
    w->pos++;
    *key = json_object_get_string(w->key);
    return 1;
}

int json_walk_element(JsonWalk *w, bool *first)
{
    return next_item(w, first, ']');
}
