// variants: none
// prefetch: reads a range of a weight tensor and discards it, so that the L2 holds it when the
// kernel that needs it runs (runtime/vk_prefetch.c: dispatched by the recording at the end of a
// level that reads little, for the weights of the levels after it). Every invocation loads
// 16-byte vectors i, i + S, ... (S = all invocations of the grid), four per loop trip; the
// values are folded into one vector that is stored only if it equals a constant no data is
// expected to give (the store keeps the loads alive; the sink is never read).
// Bindings: data (the range, uvec4), sink (one uvec4). Push {n: vectors}.
#version 450
layout(local_size_x = 256) in;
layout(std430, set = 0, binding = 0) readonly buffer Data { uvec4 data[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Sink { uvec4 sink[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main()
{
    uint s = gl_NumWorkGroups.x * 256u, i = gl_GlobalInvocationID.x;
    uvec4 x = uvec4(0u);
    for (; i + 3u * s < pc.n; i += 4u * s) {
        uvec4 a = data[i], b = data[i + s], c = data[i + 2u * s], d = data[i + 3u * s];
        x ^= a ^ b ^ c ^ d;
    }
    for (; i < pc.n; i += s) x ^= data[i];
    if (all(equal(x, uvec4(0x9e3779b9u, 0x7f4a7c15u, 0xf39cc060u, 0x5ced1d5bu)))) sink[0] = x;
}
