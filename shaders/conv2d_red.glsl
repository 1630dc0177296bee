// conv2d K-split second pass (compiler/lower/lower_conv2d.c): one invocation per output element
// (co, p) of the N*OH*OW pixels adds the nsplit fp32 partial sums the first pass (conv2d_part,
// conv2d_cm_part) wrote, in split order, then applies the fused epilogue
// (shaders/conv2d_common.glsl). Stems conv2d_red, conv2d_red_b, conv2d_red_r, conv2d_red_br
// (bindings: partials, [bias], [res], y; a residual that is x itself is bound as res).
// Push: the conv2d block; spec 0 = workgroup size.
#define CONV_REDUCE 1
#include "common.glsl"
#include "index.glsl"

layout(local_size_x_id = 0) in;

#include "conv2d_common.glsl"

void main()
{
    uint ohw = pc.oh * pc.ow, npix = pc.n * ohw;
    uint i = npu_global_index();
    if (i >= pc.cout * npix) return;
    uint co = i / npix, p = i % npix;
    float v = 0.0;
    uint ps = conv_part_stride(npix);
    for (uint s = 0; s < pc.nsplit; s++) v += part[(s * pc.cout + co) * ps + p];
    uint n = p / ohw, q = p % ohw;
    epilogue_store(n, co, q, epilogue_value(n, co, q, v));
}
