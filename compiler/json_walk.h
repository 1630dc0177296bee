/* A JSON text read one value at a time: the walker steps through the members of an object and
 * the elements of an array, and json-c's tokener parses each value on its own, so a caller can
 * read and free one element before the next is parsed (the IR reader's nodes: the whole document
 * never becomes one json-c tree, whose allocation and freeing cost more than its parse). A value
 * parses as it would inside the whole document: the tokener of each nesting depth has the
 * document's nesting limit less that depth. The walker itself takes plain JSON structure only
 * (space, tab, newline and return between tokens; '{' '}' '[' ']' ':' ','; double-quoted keys):
 * what json-c's lenient tokener accepts beyond it (comments, trailing commas, single quotes)
 * makes a step fail, and the caller reads the document as one tree instead. Used by
 * compiler/ir_json.c. */
#ifndef NPU_JSON_WALK_H
#define NPU_JSON_WALK_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;
struct json_tokener;

#define JSON_WALK_LEVELS 4 /* the deepest value the walker parses on its own */

typedef struct JsonWalk {
    /* the text and the cursor (pos and level saved and restored read a stretch again) */
    const char *s;
    size_t len, pos;
    int max_depth; /* the document's nesting limit (json-c's tokener depth) */
    int level;     /* containers open at the cursor */
    struct json_tokener *tok[JSON_WALK_LEVELS]; /* per depth, made on first use */
    struct json_object *key;                    /* the current member's key (owned) */
} JsonWalk;

/* A walk over s[0..len) with the cursor at its start; no allocation. */
void json_walk_init(JsonWalk *w, const char *s, size_t len, int max_depth);
void json_walk_free(JsonWalk *w);
/* Consumes `c` ('{' or '[') after whitespace, opening a container; false when something else is
 * there. */
bool json_walk_open(JsonWalk *w, char c);
/* Steps to the next member of the object last opened: 1 with *key its key (valid until the next
 * step), the cursor at its value; 0 at the closing '}' (consumed: the object is closed); -1 on
 * anything else (also when out of memory). *first is true before the first member and made
 * false. */
int json_walk_member(JsonWalk *w, bool *first, const char **key);
/* Steps to the next element of the array last opened: 1 with the cursor at it, 0 at the closing
 * ']' (consumed), -1 on anything else. *first as for json_walk_member. */
int json_walk_element(JsonWalk *w, bool *first);
/* Parses the value at the cursor (inside the containers open) and moves past it. *v is the value,
 * owned by the caller (NULL for null). False when it is not a valid JSON value, when more than
 * JSON_WALK_LEVELS containers are open, or when out of memory. */
bool json_walk_value(JsonWalk *w, struct json_object **v);

#endif
