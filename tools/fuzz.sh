#!/bin/bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for SECONDS seconds with a
# seed corpus from the fixtures. Crashes are kept under tests/fuzz/crashes/; turn each into a
# regression input (tests/fuzz/regress/<target>/) once fixed: those run on every `make test`.
set -u
secs=${1:-20}
out=build/fuzz
mkdir -p "$out" tests/fuzz/crashes
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "not ok 1 fuzz: $CC not found (apt-get install clang libclang-rt-14-dev)"; exit 1; }
flags="-std=c11 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -D_DEFAULT_SOURCE -I. $(pkg-config --cflags json-c msgpack)"
# compiler/ links glslang and SPIRV-Tools (generated kernels; the .npubin reader validates their
# SPIR-V) and the embedded shader sources (tools/embed.sh src, as the Makefile embeds them)
libs="$(pkg-config --libs json-c msgpack) -lglslang -lSPIRV -lMachineIndependent -lGenericCodeGen \
      -lOSDependent -lOGLCompiler -lglslang-default-resource-limits -lSPIRV-Tools-opt -lSPIRV-Tools \
      -lstdc++ -lm -lpthread"
tools/embed.sh src "$out/shaders_src.c" shaders/*.comp shaders/*.glsl shaders/*.h || exit 1
# the kernel fingerprints (compiler/shader_fp.h) of no modules: the readers check no kernel
# against a build, and the fuzz build compiles no shader
$CC -std=c11 -O1 -I. tools/spv_fp.c common/hash.c -o "$out/spv_fp" && "$out/spv_fp" "$out/shaders_fp.c" || exit 1
srcs="$(ls common/*.c compiler/*.c compiler/*/*.c) runtime/safetensors.c runtime/htensor.c $out/shaders_src.c $out/shaders_fp.c"
objs=()
# a changed header (a struct's layout) rebuilds everything: objects must agree on it
newest_h=$(ls -t common/*.h compiler/*.h compiler/*/*.h compiler/*.def shaders/*.def shaders/*.h runtime/*.h | head -1)
for s in $srcs; do
    o="$out/$(echo "$s" | tr '/' '_').o"
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ "$newest_h" -nt "$o" ]; then $CC $flags -c "$s" -o "$o" || exit 1; fi
    objs+=("$o")
done
n=0; fail=0
for t in ir npubin safetensors; do
    n=$((n + 1))
    bin="$out/fuzz_$t"
    extra=""; [ "$t" = ir ] && extra=tests/graph_eq.c # the IR target compares the reader's two ways
    $CC $flags -fsanitize=fuzzer "tests/fuzz/fuzz_$t.c" $extra "${objs[@]}" $libs -o "$bin" || { echo "not ok $n fuzz_$t build"; fail=1; continue; }
    corpus="$out/corpus-$t"; mkdir -p "$corpus"
    case $t in
        ir) for m in mlp/model convnet/model qwen2_tiny/decode; do cp "tests/models/$m.json" "$corpus/$(echo $m | tr / _).json"; done ;;
        safetensors) cp tests/models/mlp/reference.safetensors tests/models/qwen2_tiny/decode_io.safetensors "$corpus/" ;;
        npubin) for m in mlp/model convnet/model qwen2_tiny/decode; do
                    build/asan/npu-explore compile "tests/models/$m.json" -o "$corpus/$(echo $m | tr / _).npubin" >/dev/null 2>&1; done ;;
    esac
    regress="tests/fuzz/regress/$t"
    dict=""; [ -f "tests/fuzz/$t.dict" ] && dict="-dict=tests/fuzz/$t.dict"
    if [ -d "$regress" ] && ls "$regress"/* >/dev/null 2>&1; then
        "$bin" "$regress"/* >"$out/$t.regress.log" 2>&1 || { echo "not ok $n fuzz_$t regression inputs"; fail=1; continue; }
    fi
    if ASAN_OPTIONS=detect_leaks=1 "$bin" $dict -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
           -artifact_prefix=tests/fuzz/crashes/$t- "$corpus" >"$out/$t.log" 2>&1; then
        echo "ok $n fuzz_$t ($(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1), $(grep -oE 'Done [0-9]+ runs' "$out/$t.log" | grep -oE '[0-9]+') runs in ${secs}s)"
    else
        echo "not ok $n fuzz_$t found a crash: see $out/$t.log and tests/fuzz/crashes/"; fail=1
        grep -m3 -E "ERROR|runtime error" "$out/$t.log" | sed 's/^/#   /'
    fi
done
exit $fail
