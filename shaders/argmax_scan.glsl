// argmax pass 1 (compiler/lower/lower_argmax.c), the body of argmax_f32|f16|bf16, whose rows define
// the input's storage: segment = (row, chunk), NPU_TPR lanes each scan the chunk with a stride
// (indices in increasing order, so a lane keeps its first maximum) and combine. One chunk per row:
// the index goes to y; else the segment's pair to the partials (argmax_red combines them).
// Bindings: 0 = x, 1 = partials [rows, nsplit, 2] (value bits, index; y again when not split),
// 2 = y (int32). Spec: 0 = workgroup size, 1 = lanes per segment.
#include "common.glsl"
#include "argmax.glsl"

layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer X { STORAGE_T x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer P { uint part[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Y { int y[]; };

void main()
{
    uint seg = row_index(), lane = row_lane();
    bool live = seg < pc.rows * pc.nsplit;
    uint r = live ? seg / pc.nsplit : 0u, s = live ? seg % pc.nsplit : 0u;
    float bv = 0.0;
    int bi = -1;
    if (live) {
        int base = row_offset(r, pc.oshape, pc.xs);
        uint end = min(pc.len, (s + 1u) * pc.chunk);
        bool keep_nan = pc.skip_nan == 0u;
        // a lane's indices increase, so a later element wins only by a larger value, or as the
        // first NaN (when NaN is not skipped) over numbers: am_better for i > bi
        for (uint j = s * pc.chunk + lane; j < end; j += NPU_TPR) {
            float v = S_LOAD(x[base + int(j) * pc.lstride]);
            if (isnan(v) ? keep_nan && (bi < 0 || !isnan(bv)) : bi < 0 || v > bv) {
                bv = v;
                bi = int(j);
            }
        }
    }
    am_combine(bv, bi);
    if (!live || lane != 0u) return;
    if (pc.nsplit == 1u) {
        y[row_offset(r, pc.oshape, pc.ys)] = bi;
    } else {
        part[2u * seg] = floatBitsToUint(bv);
        part[2u * seg + 1u] = uint(bi);
    }
}
