# npu-explore: one non-recursive Makefile. `make run` and `make test` install missing Debian
# packages first (tools/deps.sh), then re-enter make so pkg-config sees them.
MODE ?= debug
BUILD ?= build/$(MODE)
CC ?= cc

DEB_PKGS := pkg-config libncursesw5-dev libjson-c-dev libmsgpack-dev libvulkan-dev glslc \
            libgraphviz-dev libcmocka-dev mesa-vulkan-drivers glslang-dev spirv-tools \
            vulkan-validationlayers tmux clang libclang-rt-14-dev valgrind clang-format
PKGS := json-c msgpack vulkan ncursesw libgvc

WARN := -std=c11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wvla -Wformat=2 -Wwrite-strings
ifeq ($(MODE),asan)
OPT := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDOPT := -fsanitize=address,undefined
else ifeq ($(MODE),release)
OPT := -O2 -DNDEBUG
else
OPT := -O2 -g
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS_ALL := $(WARN) $(OPT) -D_DEFAULT_SOURCE -I. -I$(BUILD)/gen $(PKG_CFLAGS) $(CFLAGS)
# glslang's C interface compiles generated kernels in-process (compiler/codegen/codegen_spv.c); SPIRV-Tools
# disassembles (compiler/spv_disasm.c). Static libraries of glslang-dev and spirv-tools.
GLSLANG_LIBS := -lglslang -lSPIRV -lMachineIndependent -lGenericCodeGen -lOSDependent \
                -lOGLCompiler -lglslang-default-resource-limits -lSPIRV-Tools-opt -lSPIRV-Tools \
                -lstdc++
LIBS := $(PKG_LIBS) $(GLSLANG_LIBS) -lm -lpthread

LIB_DIRS := common compiler runtime viz app tui
LIB_SRCS := $(filter-out app/main.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c $(d)/*/*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)

# Shaders: the kernel table shaders/kernels.def has one row per hand-written kernel: its stem, its
# source file, its storage variants and its defines. tools/kernels_mk.sh turns it into
# $(BUILD)/gen/kernels.mk: SPV_NAMES and one glslc rule per module $(SPV_DIR)/STEM.VARIANT.spv (one
# folder for every build mode: the modules do not depend on it, so `make test`'s second build reuses
# them), one variant per storage dtype (-DSTORAGE_F32/F16/BF16/I32, see shaders/common.glsl) plus
# the row's -D defines. All modules are embedded into ONE generated C file whose table
# runtime/vulkan/vk_shaders.h declares; its object joins LIB_OBJS. `make GLSLC_OPT=` skips spirv-opt.
GLSLC ?= glslc
GLSLC_OPT ?= -O
GLSLC_FLAGS := $(GLSLC_OPT) --target-env=vulkan1.2 -fshader-stage=compute -Ishaders
SPV_DIR ?= build/spv
KERNELS_DEF := shaders/kernels.def
KERNELS_MK := $(BUILD)/gen/kernels.mk
# The recipe of every module rule in $(KERNELS_MK) (SPV_FLAGS is the rule's own).
SPV_COMPILE = @mkdir -p $(dir $@) && echo "  GLSLC $@" && \
    $(GLSLC) $(GLSLC_FLAGS) $(SPV_FLAGS) -MD -MF $@.d -MT $@ -o $@ $<
# (the rules it holds come before `all`, which stays the default goal)
.DEFAULT_GOAL := all
ifeq ($(filter clean,$(MAKECMDGOALS)),)
include $(KERNELS_MK)
endif
SPVS := $(SPV_NAMES:%=$(SPV_DIR)/%.spv)
SPV_GEN := $(BUILD)/gen/shaders_spv.c
# The module list is a prerequisite too, so removing a shader or a variant regenerates the table.
SPV_LIST := $(BUILD)/gen/shaders_spv.list
$(shell mkdir -p $(BUILD)/gen && (echo '$(SPV_NAMES)' | cmp -s - $(SPV_LIST) || \
    echo '$(SPV_NAMES)' >$(SPV_LIST)))
LIB_OBJS += $(BUILD)/gen/shaders_spv.o
# Their fingerprints (compiler/shader_fp.h): hash64 of each module, written by the host tool
# tools/spv_fp.c into a table the compiler layer links, so a .npubin records which modules its
# kernels were lowered for without the compiler reaching into the runtime's table.
FP_GEN := $(BUILD)/gen/shaders_fp.c
FP_TOOL := $(BUILD)/tools/spv_fp
LIB_OBJS += $(BUILD)/gen/shaders_fp.o
# The sources themselves (*.comp, *.glsl, *.h) are embedded too (tools/embed.sh src, compiler/shader_src.h):
# describe --source shows them and generated kernels' #include lines resolve to them.
SHADER_TEXTS := $(wildcard shaders/*.comp shaders/*.glsl shaders/*.h)
SRC_GEN := $(BUILD)/gen/shaders_src.c
SRC_LIST := $(BUILD)/gen/shaders_src.list
$(shell mkdir -p $(BUILD)/gen && (echo '$(SHADER_TEXTS)' | cmp -s - $(SRC_LIST) || \
    echo '$(SHADER_TEXTS)' >$(SRC_LIST)))
LIB_OBJS += $(BUILD)/gen/shaders_src.o
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELP := $(filter-out $(TEST_SRCS),$(wildcard tests/*.c))
TEST_HELP_OBJS := $(TEST_HELP:%.c=$(BUILD)/%.o)
BIN := $(BUILD)/npu-explore

.PHONY: all deps build run test tests-built check test-long check-long unit clean deps-check format bench fuzz
all: $(BIN)

deps:
	@tools/deps.sh $(DEB_PKGS)

build: deps
	@$(MAKE) --no-print-directory MODE=$(MODE) all

# One static library per layer, linked from the top layer down: an object of a lower layer that
# calls up into a higher one (compiler into runtime, runtime into app, anything into tui) has
# nothing after it to resolve the call, so the link fails: the layering of tools/deps_check.sh
# holds at link time too. The generated objects join the layer that reads them.
LAYERS := tui app viz runtime compiler common
layer_objs = $(filter $(BUILD)/$(1)/%,$(LIB_OBJS))
LAYER_LIBS := $(LAYERS:%=$(BUILD)/lib/libnpu_%.a)
define LAYER_RULE
$(BUILD)/lib/libnpu_$(1).a: $$(call layer_objs,$(1)) $(2)
	@mkdir -p $$(dir $$@)
	@echo "  AR $$@"
	@rm -f $$@ && ar rcs $$@ $$^
endef
$(eval $(call LAYER_RULE,tui,))
$(eval $(call LAYER_RULE,app,))
$(eval $(call LAYER_RULE,viz,))
$(eval $(call LAYER_RULE,runtime,$(BUILD)/gen/shaders_spv.o))
$(eval $(call LAYER_RULE,compiler,$(BUILD)/gen/shaders_src.o $(BUILD)/gen/shaders_fp.o))
$(eval $(call LAYER_RULE,common,))

$(BIN): $(BUILD)/app/main.o $(LAYER_LIBS)
	@echo "  LD $@"
	@$(CC) $(OPT) -o $@ $^ $(LDOPT) $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_HELP_OBJS) $(LAYER_LIBS)
	@echo "  LD $@"
	@$(CC) $(OPT) -o $@ $^ $(LDOPT) $(LIBS) -lcmocka

# Allocation-failure injection wraps our allocator calls in that one test binary.
$(BUILD)/tests/test_nomem: LDOPT += -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc

# `make test`: install, build under ASan+UBSan, run every test, as many at a time as there are
# cores (tools/run_tests.sh). The closing line is "N passed, N failed". `make test-long` runs the
# large-size cases that the quick suite leaves out (NPU_TEST_LONG=1), in the binaries that have
# them (LONG_TESTS), and valgrind's memcheck of a Vulkan run (a second, non-ASan build);
# .ci/run runs it after `make test`.
NPROC := $(shell nproc 2>/dev/null || echo 2)
LONG_TESTS := test_vk_conv test_vk_dwconv test_vk_attn test_vk_attn_cache test_vk_matmul test_vk_gen cli/fuzz cli/valgrind
test: deps
	@$(MAKE) --no-print-directory -j$(NPROC) MODE=asan tests-built
	@$(MAKE) --no-print-directory MODE=asan check

tests-built: $(BIN) $(TEST_BINS)

check: $(BIN) $(TEST_BINS)
	@tools/run_tests.sh $(BUILD)

test-long: deps
	@$(MAKE) --no-print-directory -j$(NPROC) MODE=asan tests-built
	@$(MAKE) --no-print-directory -j$(NPROC) MODE=debug all # tests/cli/valgrind.sh runs it
	@$(MAKE) --no-print-directory MODE=asan check-long

check-long: $(BIN) $(TEST_BINS)
	@NPU_TEST_LONG=1 tools/run_tests.sh $(BUILD) $(LONG_TESTS)

run: deps
	@$(MAKE) --no-print-directory MODE=release all
	@tools/run_explorer.sh build/release/npu-explore

# libFuzzer targets for the IR, safetensors and .npubin readers (FUZZ_SECONDS each).
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory MODE=asan all
	@tools/fuzz.sh $(FUZZ_SECONDS)

deps-check: $(LAYER_LIBS)
	@tools/deps_check.sh
	@tools/layers_check.sh $(BUILD)/lib

# The C sources clang-format owns (.clang-format); tests/cli/format.sh checks them in `make test`.
FORMAT_SRCS := $(foreach d,$(LIB_DIRS) tests,$(wildcard $(d)/*.c $(d)/*.h $(d)/*/*.c $(d)/*/*.h))
format:
	clang-format -i $(FORMAT_SRCS)

clean:
	rm -rf build

# Shader rules (variables at the top, next to LIB_OBJS).
$(KERNELS_MK): $(KERNELS_DEF) tools/kernels_mk.sh
	@echo "  GEN $@"
	@mkdir -p $(dir $@)
	@tools/kernels_mk.sh $(KERNELS_DEF) $(SPV_DIR) $@

# A shader file that a module's old dependency file names and that is gone (glslc has no -MP):
# the module is rebuilt, and glslc stops on a source the table names that does not exist.
shaders/%: ;

# A module's flags stamp (see tools/kernels_mk.sh) when the folder lost it.
$(SPV_DIR)/%.flags:
	@mkdir -p $(dir $@)
	@echo '$(SPV_FLAGS)' >$@

$(SPV_GEN): $(SPVS) $(SPV_LIST) tools/embed.sh
	@echo "  EMBED $@ ($(words $(SPVS)) modules)"
	@tools/embed.sh spv $@ $(SPVS)

$(BUILD)/gen/shaders_spv.o: $(SPV_GEN)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(FP_TOOL): tools/spv_fp.c common/hash.c common/hash.h
	@mkdir -p $(dir $@)
	@echo "  CC $@"
	@$(CC) $(WARN) -O2 -I. -o $@ tools/spv_fp.c common/hash.c

$(FP_GEN): $(SPVS) $(SPV_LIST) $(FP_TOOL)
	@echo "  FP $@ ($(words $(SPVS)) modules)"
	@$(FP_TOOL) $@ $(SPVS)

$(BUILD)/gen/shaders_fp.o: $(FP_GEN)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(SRC_GEN): $(SHADER_TEXTS) $(SRC_LIST) tools/embed.sh
	@echo "  EMBED $@ ($(words $(SHADER_TEXTS)) sources)"
	@tools/embed.sh src $@ $(SHADER_TEXTS)

$(BUILD)/gen/shaders_src.o: $(SRC_GEN)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# Vulkan objects may include generated files: generate before compiling them (order-only).
$(filter $(BUILD)/runtime/vulkan/%.o,$(LIB_OBJS)): | $(SPV_GEN)
-include $(SPVS:=.d)

-include $(LIB_OBJS:.o=.d) $(BUILD)/app/main.d $(TEST_BINS:=.d) $(TEST_HELP_OBJS:.o=.d)
.SECONDARY:
