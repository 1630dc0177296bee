#!/bin/bash
# The layering at link level: no layer's library may use a symbol defined by a layer above it
# (Makefile LAYERS, top first: tui app viz runtime compiler common). Static linking alone would
# not say so when the higher object is pulled in anyway, so this compares nm's lists: each
# layer's undefined symbols against the symbols the layers above it define. Prints each
# violation (layer, symbol, the object using it); exit 1 if there is one.
# Usage: tools/layers_check.sh LIBDIR   (build/MODE/lib)
dir=${1:?usage: tools/layers_check.sh LIBDIR}
layers=(tui app viz runtime compiler common)
bad=0
for ((i = 1; i < ${#layers[@]}; i++)); do
    lib=$dir/libnpu_${layers[i]}.a
    [ -f "$lib" ] || { echo "layers-check: $lib is missing (build first)"; exit 2; }
    above=()
    for ((j = 0; j < i; j++)); do above+=("$dir/libnpu_${layers[j]}.a"); done
    # symbols defined above (text, data, bss, read-only)
    nm -g --defined-only "${above[@]}" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u > "$dir/.above"
    # undefined symbols of this layer, with the object that uses each
    nm -g -u -A "$lib" 2>/dev/null | awk '{ print $NF, $1 }' | sort > "$dir/.undef"
    while read -r sym where; do
        echo "layers-check: ${layers[i]}/ uses '$sym' of a layer above it (${where%:})"
        bad=1
    done < <(join "$dir/.above" "$dir/.undef")
done
rm -f "$dir/.above" "$dir/.undef"
[ $bad = 0 ] && echo "layers-check: ok"
exit $bad
