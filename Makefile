# npu-explore: one non-recursive Makefile. `make run` and `make test` install missing Debian
# packages first (tools/deps.sh), then re-enter make so pkg-config sees them.
MODE ?= debug
BUILD ?= build/$(MODE)
CC ?= cc

DEB_PKGS := pkg-config libncursesw5-dev libjson-c-dev libmsgpack-dev libvulkan-dev glslc \
            libgraphviz-dev libcmocka-dev mesa-vulkan-drivers glslang-dev spirv-tools \
            vulkan-validationlayers tmux clang libclang-rt-14-dev
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
LIBS := $(PKG_LIBS) -lm -lpthread

LIB_DIRS := common compiler runtime viz app tui
LIB_SRCS := $(filter-out app/main.c,$(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c)))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/test_*.c)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
TEST_HELP := $(filter-out $(TEST_SRCS),$(wildcard tests/*.c))
TEST_HELP_OBJS := $(TEST_HELP:%.c=$(BUILD)/%.o)
BIN := $(BUILD)/npu-explore

.PHONY: all deps build run test check unit clean deps-check format bench fuzz
all: $(BIN)

deps:
	@tools/deps.sh $(DEB_PKGS)

build: deps
	@$(MAKE) --no-print-directory MODE=$(MODE) all

$(BIN): $(BUILD)/app/main.o $(LIB_OBJS)
	@echo "  LD $@"
	@$(CC) $(OPT) -o $@ $^ $(LDOPT) $(LIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC $<"
	@$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_HELP_OBJS) $(LIB_OBJS)
	@echo "  LD $@"
	@$(CC) $(OPT) -o $@ $^ $(LDOPT) $(LIBS) -lcmocka

# `make test`: install, build under ASan+UBSan, run every test. The closing line is
# "N passed, N failed".
test: deps
	@$(MAKE) --no-print-directory MODE=asan check

check: $(BIN) $(TEST_BINS)
	@tools/run_tests.sh $(BUILD)

run: deps
	@$(MAKE) --no-print-directory MODE=release all
	@tools/run_explorer.sh build/release/npu-explore

# libFuzzer targets for the IR, safetensors and .npubin readers (FUZZ_SECONDS each).
FUZZ_SECONDS ?= 60
fuzz: deps
	@$(MAKE) --no-print-directory MODE=asan all
	@tools/fuzz.sh $(FUZZ_SECONDS)

deps-check:
	@tools/deps_check.sh

format:
	clang-format -i $(foreach d,$(LIB_DIRS) tests,$(wildcard $(d)/*.c $(d)/*.h))

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(BUILD)/app/main.d $(TEST_BINS:=.d) $(TEST_HELP_OBJS:.o=.d)
.SECONDARY:
