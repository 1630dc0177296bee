/* Host<->device transforms of a plan tensor: a host tensor in the CPU reference's dtype and
 * logical shape to the device's storage dtype (f32/f16/bf16 for floats, i32 for integers, u8 for
 * bools) and physical (channel-padded) shape, and back. Pads are written as zero. */
#ifndef NPU_HOSTXF_H
#define NPU_HOSTXF_H

#include <stdint.h>
#include "common/diag.h"
#include "compiler/plan.h"
#include "runtime/htensor.h"

/* Bytes of t on the device: physical element count times the storage size, rounded up to 4. */
uint64_t hostxf_device_bytes(const PlanTensor *t);
/* Element size of a storage dtype in bytes. */
int hostxf_elem_size(DType storage);
/* Packs v into dst (hostxf_device_bytes(t) bytes). ST_BAD_INPUT naming `file` and the tensor when
 * the element count differs or an integer does not fit in 32 bits. */
Status hostxf_pack(const PlanTensor *t, const HTensor *v, void *dst, const char *file, DiagList *d);
/* Are v's bytes t's device bytes: the element count, f32 (or i32) on both sides, no padding? Then
 * the upload is one memcpy of v->data, no per-element work (a graph input that pack-inputs left
 * in its host form; compiler/pass_pack.c). */
bool hostxf_is_raw(const PlanTensor *t, const HTensor *v);
/* Unpacks device bytes into a new host tensor of t's logical shape and reference dtype. */
Status hostxf_unpack(const PlanTensor *t, const void *src, HTensor *out);

#endif
