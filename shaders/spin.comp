// spin: one workgroup kept busy until the host sets `stop`, so a GPU's clocks ramp up from idle
// while the host uploads a model (runtime/vulkan/vk_warm.c). A watchdog bounds it: it ends after
// max_trips trips (~2 s) in which the host did not bump `alive` (an upload in progress bumps it
// per tensor), so a host that never stops it, or a flag the GPU never sees, costs at most that.
// Each trip is a chain of dependent FMAs, then volatile reads of the flag and a store of the
// trips so far. Bindings: 0 = the
// flag {stop, trips, alive} in mapped, coherent memory (device memory on a GPU: vk_warm.c says
// why). Push: {max_trips}.
#version 450

layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) coherent volatile buffer Flag
{
    uint stop;
    uint trips;
    uint alive;
}
f;
layout(push_constant) uniform Push { uint max_trips; } pc;

void main()
{
    float x = float(gl_LocalInvocationID.x) * 1e-3;
    uint i = 0u, left = pc.max_trips, seen = f.alive;
    while (left > 0u) {
        for (int j = 0; j < 1024; j++)
            x = fma(x, 0.9990234375, 0.0009765625);
        i++;
        left--;
        if (gl_LocalInvocationID.x == 0u) f.trips = i; // so far (vk_warm_trips)
        if (f.stop != 0u) break;
        uint a = f.alive;
        if (a != seen) { // the host is still uploading: another max_trips
            seen = a;
            left = pc.max_trips;
        }
    }
    // x stays in [0, 1): the comparison never adds, but keeps the FMAs alive
    if (gl_LocalInvocationID.x == 0u) f.trips = i + (x > 2.0 ? 1u : 0u);
}
