/* Sanitizer builds only: keeps the Vulkan driver and layers mapped until exit. The loader
 * unloads them at vkDestroyInstance, so LeakSanitizer, which reports at exit, sees their own
 * leaks (lavapipe and the validation layer keep allocations at unload) as "<unknown module>"
 * frames that no suppression can name. Pinned, those frames name their library and
 * tests/lsan.supp can suppress exactly those libraries, while a leak of ours still fails. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "runtime/vulkan/vk_internal.h"

#if defined(__SANITIZE_ADDRESS__)
static int pin_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *n = info->dlpi_name;
    if (n && (strstr(n, "libvulkan_") || strstr(n, "libVkLayer_")))
        (void)dlopen(n,
                     RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE); /* never closed: that is the point */
    return 0;
}
#endif

void vk_pin_driver_libraries(void)
{
#if defined(__SANITIZE_ADDRESS__)
    dl_iterate_phdr(pin_one, NULL);
#endif
}
