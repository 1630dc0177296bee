/* GLSL to SPIR-V in-process (codegen.h), through glslang's C interface (Debian's glslang-dev 12,
 * static libraries; libshaderc cannot be linked: /work/shared/docs/DESIGN.md). glslang's C API of
 * this version takes no include callback, so `#include "NAME"` lines are expanded here from the
 * embedded shader sources, each file once (they carry include guards anyway).
 *
 * Two caches keyed by the hash of the expanded text and the compiler settings: this process's
 * (a list guarded by a mutex: the explorer compiles on a worker thread) and a directory of
 * KEY.npuspv files, each `NPUSPV1\0`, the key, a hash of the words, then the SPIR-V words; a file
 * that fails any check is ignored and rewritten. Writes are atomic (common/fileio.h). */
#define _POSIX_C_SOURCE 200809L
#include "compiler/codegen/codegen.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>

#include "common/fileio.h"
#include "common/grow.h"
#include "common/hash.h"
#include "common/strbuf.h"
#include "compiler/shader_src.h"

/* Part of every key: a change of compiler or settings must not hit old entries. */
#define CG_COMPILER_ID "glslang-12 vulkan1.2 spv1.5 opt validate v1"
#define SPV_FILE_MAGIC "NPUSPV1"

typedef struct Entry {
    uint64_t key;
    uint32_t *words;
    size_t n;
} Entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static Entry *entries;
static int nentries, capentries;
static CgStats stats;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- includes ----------------------------------------------------------------------------- */

/* The file name of an `#include "NAME"` line, or 0. */
static size_t include_name(const char *line, size_t len, const char **name)
{
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (len - i < 8 || strncmp(line + i, "#include", 8) != 0) return 0;
    i += 8;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    if (i >= len || line[i] != '"') return 0;
    size_t s = ++i;
    while (i < len && line[i] != '"')
        i++;
    if (i >= len) return 0;
    *name = line + s;
    return i - s;
}

static bool expand(StrBuf *b, const char *text, const char **seen, int *nseen, int depth)
{
    if (depth > 8) return false;
    for (const char *p = text; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) + 1 : strlen(p);
        const char *nm;
        size_t nl = include_name(p, len, &nm);
        if (nl) {
            char name[128];
            if (nl >= sizeof name) return false;
            memcpy(name, nm, nl);
            name[nl] = 0;
            const ShaderSource *s = shader_src_find(name);
            if (!s) return false;
            bool done = false;
            for (int i = 0; i < *nseen; i++)
                done |= seen[i] == s->name;
            if (!done) {
                if (*nseen == 64) return false;
                seen[(*nseen)++] = s->name;
                if (!expand(b, s->text, seen, nseen, depth + 1)) return false;
                if (s->len && s->text[s->len - 1] != '\n') sb_add(b, "\n", 1);
            }
        } else {
            sb_add(b, p, len);
        }
        p += len;
    }
    return !b->failed;
}

char *cg_expand_includes(const char *source)
{
    StrBuf b = {0};
    const char *seen[64];
    int nseen = 0;
    if (!expand(&b, source, seen, &nseen, 0)) {
        free(b.s);
        return NULL;
    }
    return sb_take(&b);
}

/* ---- caches ------------------------------------------------------------------------------- */

static bool mkdirs(const char *dir)
{
    char p[1024];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return false;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s) continue;
        char c = *s;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
        if (!c) return true;
        *s = c;
    }
}

static void entry_path(char *buf, size_t n, const char *dir, uint64_t key)
{
    snprintf(buf, n, "%s/%016llx.npuspv", dir, (unsigned long long)key);
}

static bool disk_get(const char *dir, uint64_t key, uint32_t **words, size_t *nw)
{
    char path[1100];
    entry_path(path, sizeof path, dir, key);
    char *data = NULL;
    size_t len = 0;
    DiagList scratch = {0};
    Status st = file_exists(path) ? file_read_all(path, &data, &len, &scratch) : ST_BAD_INPUT;
    diag_free(&scratch);
    if (st != ST_OK) return false;
    bool ok = len > 24 && (len - 24) % 4 == 0 && memcmp(data, SPV_FILE_MAGIC, 8) == 0;
    uint64_t k = 0, h = 0;
    if (ok) {
        memcpy(&k, data + 8, 8);
        memcpy(&h, data + 16, 8);
        ok = k == key && h == hash64(data + 24, len - 24);
    }
    uint32_t first = 0;
    if (ok) memcpy(&first, data + 24, 4);
    ok = ok && first == 0x07230203u;
    if (ok) {
        *nw = (len - 24) / 4;
        *words = malloc(len - 24);
        if (*words)
            memcpy(*words, data + 24, len - 24);
        else
            ok = false;
    }
    free(data);
    return ok;
}

static void disk_put(const char *dir, uint64_t key, const uint32_t *words, size_t nw)
{
    if (!mkdirs(dir)) return;
    size_t len = 24 + nw * 4;
    char *data = malloc(len);
    if (!data) return;
    memcpy(data, SPV_FILE_MAGIC, 8);
    uint64_t h = hash64(words, nw * 4);
    memcpy(data + 8, &key, 8);
    memcpy(data + 16, &h, 8);
    memcpy(data + 24, words, nw * 4);
    char path[1100];
    entry_path(path, sizeof path, dir, key);
    DiagList scratch = {0}; /* a cache that cannot be written is no error: the next run compiles */
    file_write_atomic(path, data, len, &scratch);
    diag_free(&scratch);
    free(data);
}

/* Copies an in-memory entry (caller holds the lock). */
static bool mem_get(uint64_t key, uint32_t **words, size_t *nw)
{
    for (int i = 0; i < nentries; i++)
        if (entries[i].key == key) {
            *words = malloc(entries[i].n * 4);
            if (!*words) return false;
            memcpy(*words, entries[i].words, entries[i].n * 4);
            *nw = entries[i].n;
            return true;
        }
    return false;
}

static void mem_put(uint64_t key, const uint32_t *words, size_t nw)
{
    Entry *e = grow_array(entries, nentries, &capentries, sizeof *e, 32);
    if (!e) return;
    entries = e;
    uint32_t *w = malloc(nw * 4);
    if (!w) return;
    memcpy(w, words, nw * 4);
    entries[nentries++] = (Entry){key, w, nw};
}

void cg_cache_reset(void)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nentries; i++)
        free(entries[i].words);
    free(entries);
    entries = NULL;
    nentries = capentries = 0;
    memset(&stats, 0, sizeof stats);
    pthread_mutex_unlock(&lock);
}

CgStats cg_stats(void)
{
    pthread_mutex_lock(&lock);
    CgStats s = stats;
    pthread_mutex_unlock(&lock);
    return s;
}

/* ---- glslang ------------------------------------------------------------------------------ */

static void init_glslang(void)
{
    glslang_initialize_process();
}

/* Compiles text; on failure *log is a malloc'd copy of glslang's messages. */
static bool glslang_compile(const char *text, uint32_t **words, size_t *nw, char **log)
{
    glslang_input_t in = {
        .language = GLSLANG_SOURCE_GLSL,
        .stage = GLSLANG_STAGE_COMPUTE,
        .client = GLSLANG_CLIENT_VULKAN,
        .client_version = GLSLANG_TARGET_VULKAN_1_2,
        .target_language = GLSLANG_TARGET_SPV,
        .target_language_version = GLSLANG_TARGET_SPV_1_5,
        .code = text,
        .default_version = 450,
        .default_profile = GLSLANG_NO_PROFILE,
        .messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT,
        .resource = glslang_default_resource(),
    };
    *log = NULL;
    glslang_shader_t *sh = glslang_shader_create(&in);
    if (!sh) return false;
    glslang_program_t *pr = NULL;
    bool ok = glslang_shader_preprocess(sh, &in) && glslang_shader_parse(sh, &in);
    if (!ok) {
        const char *m = glslang_shader_get_info_log(sh);
        *log = strdup(m && *m ? m : "glslang failed to parse the shader");
    }
    if (ok) {
        pr = glslang_program_create();
        glslang_program_add_shader(pr, sh);
        ok = glslang_program_link(pr, GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT);
        if (!ok) {
            const char *m = glslang_program_get_info_log(pr);
            *log = strdup(m && *m ? m : "glslang failed to link the shader");
        }
    }
    if (ok) {
        glslang_spv_options_t so = {.disable_optimizer = false, .validate = true};
        glslang_program_SPIRV_generate_with_options(pr, GLSLANG_STAGE_COMPUTE, &so);
        const char *m = glslang_program_SPIRV_get_messages(pr);
        size_t n = glslang_program_SPIRV_get_size(pr);
        ok = n >= 5 && !(m && strstr(m, "error"));
        if (!ok) *log = strdup(m && *m ? m : "glslang produced no SPIR-V");
        if (ok) {
            *words = malloc(n * 4);
            ok = *words != NULL;
            if (ok) {
                glslang_program_SPIRV_get(pr, *words);
                *nw = n;
            }
        }
    }
    if (pr) glslang_program_delete(pr);
    glslang_shader_delete(sh);
    return ok;
}

Status cg_compile(const char *source, const char *cache_dir, const char *what, uint32_t **words,
                  size_t *nwords, uint64_t *key, DiagList *d)
{
    *words = NULL;
    *nwords = 0;
    char *text = cg_expand_includes(source);
    if (!text)
        return diag_error(d, NULL, what, NULL,
                          "generated shader: an #include names no embedded "
                          "shader source (or out of memory)");
    uint64_t k = hash64_update(hash64(text, strlen(text)), CG_COMPILER_ID, sizeof CG_COMPILER_ID);
    *key = k;
    char dflt[900];
    const char *dir = cache_dir;
    if (dir && !*dir) dir = cache_path(dflt, sizeof dflt, "kernels");
    if (dir && strcmp(dir, "none") == 0) dir = NULL;
    pthread_mutex_lock(&lock);
    bool hit = mem_get(k, words, nwords);
    if (hit) stats.memory_hits++;
    pthread_mutex_unlock(&lock);
    if (!hit && dir && disk_get(dir, k, words, nwords)) {
        hit = true;
        pthread_mutex_lock(&lock);
        stats.disk_hits++;
        mem_put(k, *words, *nwords);
        pthread_mutex_unlock(&lock);
    }
    if (hit) {
        free(text);
        return ST_OK;
    }
    pthread_once(&once, init_glslang);
    char *log = NULL;
    double t0 = now_ms();
    pthread_mutex_lock(&lock); /* glslang's process state is not ours to share across threads */
    bool ok = glslang_compile(text, words, nwords, &log);
    stats.compiled++;
    stats.compile_ms += now_ms() - t0;
    if (ok) mem_put(k, *words, *nwords);
    pthread_mutex_unlock(&lock);
    free(text);
    if (!ok) {
        Status st = diag_add(d, DIAG_ERROR, ST_INTERNAL, NULL, what, NULL,
                             "generated shader does not compile: %s", log ? log : "out of memory");
        free(log);
        free(*words);
        *words = NULL;
        return st;
    }
    if (dir) disk_put(dir, k, *words, *nwords);
    return ST_OK;
}
