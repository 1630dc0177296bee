#!/bin/bash
# GEMV sweep on the GPU machine (bench/gemv/h100.sh): reads lines "BIN GRAPH VARIANT" (VARIANT:
# NPU_GEMV's "WG,R,U,G", or - for the compiler's choice), profiles each (bf16, random weights),
# prints
#   graph variant stem | us per kernel (gpu step / C) GB/s | timed per-kernel median | rel_l2
# the full logs (one file, $OUT/sweep_logs.txt) and the pipelines' statistics (NPU_VK_PIPE_STATS,
# $OUT/stats.txt) under $OUT. Stops starting new profiles after $BUDGET seconds (default 200).
ITERS=${ITERS:-20}
BUDGET=${BUDGET:-200}
out=${OUT:-out}; mkdir -p "$out"
while read -r bin g v; do
    [ -z "$g" ] && continue
    case "$bin" in \#*) continue ;; esac
    if [ "$SECONDS" -gt "$BUDGET" ]; then echo "skip $g $v (budget)"; continue; fi
    name=$(basename "$g" .json)
    c=${name##*_x}; nk=${name%_x*}; nk=${nk#*_}; n=${nk%x*}; k=${nk#*x}
    log="$out/.sweep_one.txt"
    t0=$SECONDS
    if [ "$v" = "-" ]; then
        NPU_VK_PIPE_STATS=1 timeout 40 "$bin" profile "$g" --random-weights 1 --dtype bf16 --iters "$ITERS" > "$log" 2>&1
    else
        NPU_GEMV=$v NPU_GEMV_LONG=$v NPU_VK_PIPE_STATS=1 timeout 40 "$bin" profile "$g" --random-weights 1 --dtype bf16 --iters "$ITERS" > "$log" 2>&1
    fi
    rc=$?
    grep '^pipe-stats' "$log" >> "$out/stats.txt"
    med=$(awk '$1 ~ /^[0-9]+$/ && NF >= 9 {print $4}' "$log" | sort -g | awk '{a[NR] = $1} END {print NR ? a[int((NR + 1) / 2)] : -1}')
    awk -v c="$c" -v n="$n" -v k="$k" -v name="$name" -v v="$v" -v rc="$rc" -v dt=$((SECONDS - t0)) \
        -v med="$med" -v bin="$(basename "$(dirname "$bin")")" '
        $1 ~ /^[0-9]+$/ && NF >= 9 { stem = $2; if ($9 == "MISMATCH") bad++; if ($8 + 0 > worst) worst = $8 + 0 }
        /gpu step/ { for (i = 1; i <= NF; i++) if ($i == "step") step = $(i + 1) }
        END {
            per = step / c
            printf "%-9s %-24s %-10s %-8s | %8.2f us %6.0f GB/s | timed %8.2f | rel %.2e%s rc=%d %ds\n",
                   bin, name, v, stem, per, (per > 0 ? 2 * n * k / per / 1e3 : 0), med, worst,
                   (bad ? " MISMATCH" : ""), rc, dt
        }' "$log"
    { echo "=== $bin $g $v"; cat "$log"; } >> "$out/sweep_logs.txt"
    rm -f "$log"
done
echo "== pipeline statistics (unique)"; touch "$out/stats.txt"
sort -u "$out/stats.txt" | sed 's/pipe-stats //'
