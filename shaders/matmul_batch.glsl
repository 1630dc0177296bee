// Offsets of batch matrix bi in A and B (elements): bi unravels over pc.bdim (4 dims, innermost
// last), and its coordinates times pc.sa / pc.sb (stride 0 broadcasts). For the matmul family's
// kernels (matmul, gemv, the tensor-core matmul), which declare the push block first.
#ifndef NPU_MATMUL_BATCH_GLSL
#define NPU_MATMUL_BATCH_GLSL

void mm_batch_offsets(uint bi, out uint oa, out uint ob)
{
    oa = 0;
    ob = 0;
    for (int d = 3; d >= 0; d--) {
        uint c = bi % pc.bdim[d];
        bi /= pc.bdim[d];
        oa += c * pc.sa[d];
        ob += c * pc.sb[d];
    }
}

#endif
