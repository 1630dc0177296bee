// feed: words [0, n) of binding 0 copied into binding 1, by a shader rather than a transfer
// command: a pipelined decode step's next token into the next step's ids and into the host's
// readback (runtime/vulkan/vk_backend.c, pipe_*), where two vkCmdCopyBuffer with their
// transfer barriers kept the GPU ~20 us between steps (bench/NOTES.md "Pipelined decode").
// Push: {n}.
#version 450

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Src { uint s[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { uint o[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main()
{
    for (uint i = gl_GlobalInvocationID.x; i < pc.n; i += gl_NumWorkGroups.x * 64u) o[i] = s[i];
}
