// spin: one workgroup kept busy until the host sets `stop` (or max_trips trips have run), so a
// GPU's clocks ramp up from idle while the host uploads a model (runtime/vulkan/vk_warm.c).
// Each trip is a chain of dependent FMAs, then one volatile read of the flag. Bindings: 0 = the
// flag {stop, trips} in mapped, coherent memory (device memory on a GPU: vk_warm.c says why).
// Push: {max_trips}.
#version 450

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) coherent volatile buffer Flag
{
    uint stop;
    uint trips;
}
f;
layout(push_constant) uniform Push { uint max_trips; } pc;

void main()
{
    float x = float(gl_LocalInvocationID.x) * 1e-3;
    uint i = 0u;
    while (i < pc.max_trips) {
        for (int j = 0; j < 1024; j++)
            x = fma(x, 0.9990234375, 0.0009765625);
        i++;
        if (f.stop != 0u) break;
    }
    // x stays in [0, 1): the comparison never adds, but keeps the FMAs alive
    if (gl_LocalInvocationID.x == 0u) f.trips = i + (x > 2.0 ? 1u : 0u);
}
