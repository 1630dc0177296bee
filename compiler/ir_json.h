/* Reader of torch_to_ir IR JSON (the exporter's format: graph_inputs, graph_outputs, weights,
 * weight_name_mapping, nodes with ATen op strings, attrs and tensor records, optional constants)
 * into a Graph. Structural errors (not JSON, missing keys, wrong types, unknown op, wrong arity,
 * a tensor nobody produces, duplicate names, shapes that disagree between producer and consumer)
 * are reported with the file, node and tensor and return ST_BAD_INPUT. Op semantics (output
 * shapes from attributes) are checked separately by shape_check_graph (compiler/shape/shape.h). */
#ifndef NPU_IR_JSON_H
#define NPU_IR_JSON_H

#include "common/diag.h"
#include "compiler/graph.h"

struct json_object;

/* Reads `path`; on success *out owns a new graph (free with graph_free). */
Status ir_read_file(const char *path, Graph **out, DiagList *d);
/* Same from a buffer; `path` is used for diagnostics only. */
Status ir_read_buffer(const char *path, const char *json, size_t len, Graph **out, DiagList *d);
/* How the text is read. IR_READ_WALK (ir_read_buffer's way): member by member, each node parsed,
 * read and freed in turn (compiler/json_walk.h), where the file allows it: its head members
 * (model_name, weights, weight_name_mapping, constants, graph_inputs) before "nodes", each key
 * once, plain JSON structure; any other file, and any malformed one, is read as one json-c tree,
 * IR_READ_TREE's way. Both give the same graph and the same diagnostics (tests and the fuzzer
 * compare them); the walk is the faster. */
typedef enum IrRead { IR_READ_WALK, IR_READ_TREE } IrRead;
/* ir_read_buffer read `how`; *walked (may be NULL) tells whether the walk made the graph. */
Status ir_read_buffer_as(const char *path, const char *json, size_t len, IrRead how, Graph **out,
                         DiagList *d, bool *walked);
/* Why an op the IR may hold is refused ("wrap_with_set_grad_enabled": export under no_grad),
 * or NULL when it is not one of those. Static storage. */
const char *ir_refused(const char *aten);
/* Parses a JSON attrs object onto a node (arena of g). Exposed for tests that build nodes. */
Status ir_parse_attrs(Graph *g, Node *n, struct json_object *attrs, DiagList *d);

#endif
