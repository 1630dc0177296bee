#!/bin/bash
# tools/kernels_mk.sh, the build rules of the kernel table: one module per row and storage variant
# with its glslc flags (STORAGE_, the row's defines), SPV_NAMES in table order, flags stamps
# rewritten only when a row's flags change (so only its modules rebuild), and a malformed table
# stopping the build with the file and line, leaving the previous rules in place.
. tests/cli/lib.bash
G=tools/kernels_mk.sh
mtime() { stat -c %Y "$1"; }

cat >"$T/k.def" <<'EOF'
/* a comment naming KERNEL(x, x, BASE, 0, 0, "x.glsl", "f32", "") is not a row
 * KERNEL(y, y, BASE, 0, 0, "y.glsl", "f32", "") */
KIND(a, lower_a)
KERNEL(a,   a, BASE, 0,      0, "a.glsl", "f32 i32", "X=1 Y")
KERNEL(a_s, a, BASE, SCALAR, 0, "a.comp", "none",    "")
EOF
"$G" "$T/k.def" "$T/spv" "$T/k.mk" 2>"$T/e"; rc=$?
ok "a good table: exit 0, nothing on stderr" "[ $rc = 0 ] && [ ! -s $T/e ]"
ok "SPV_NAMES: every module in table order, comments skipped" \
   "grep -qx 'SPV_NAMES := a.f32 a.i32 a_s' $T/k.mk"
ok "a.f32: -std=450, STORAGE_F32 and the row's defines" \
   "grep -qxF '\$(SPV_DIR)/a.f32.spv: SPV_FLAGS := -std=450 -DSTORAGE_F32 -DX=1 -DY' $T/k.mk"
ok "a.i32: STORAGE_I32" \
   "grep -qxF '\$(SPV_DIR)/a.i32.spv: SPV_FLAGS := -std=450 -DSTORAGE_I32 -DX=1 -DY' $T/k.mk"
ok "a module's rule: its source and its flags stamp" \
   "grep -qxF '\$(SPV_DIR)/a.f32.spv: shaders/a.glsl \$(SPV_DIR)/a.f32.flags' $T/k.mk"
ok "variants none: one module STEM, no STORAGE_" \
   "grep -qxF '\$(SPV_DIR)/a_s.spv: SPV_FLAGS := -std=450' $T/k.mk \
    && grep -qxF '\$(SPV_DIR)/a_s.spv: shaders/a.comp \$(SPV_DIR)/a_s.flags' $T/k.mk"
ok "the stamps hold the flags" \
   "[ \"\$(cat $T/spv/a.i32.flags)\" = '-std=450 -DSTORAGE_I32 -DX=1 -DY' ] && [ -f $T/spv/a_s.flags ]"

touch -d 2001-01-01 "$T"/spv/*.flags
old=$(mtime "$T/spv/a.f32.flags")
"$G" "$T/k.def" "$T/spv" "$T/k.mk"
ok "the same table again: no stamp rewritten" \
   "[ \$(mtime $T/spv/a.f32.flags) = $old ] && [ \$(mtime $T/spv/a_s.flags) = $old ]"
sed -i 's/"X=1 Y"/"X=2 Y"/' "$T/k.def"
"$G" "$T/k.def" "$T/spv" "$T/k.mk"
ok "a row's defines changed: its stamps rewritten, the other row's kept" \
   "[ \$(mtime $T/spv/a.f32.flags) != $old ] && [ \$(mtime $T/spv/a.i32.flags) != $old ] \
    && [ \$(mtime $T/spv/a_s.flags) = $old ] && grep -q -- '-DX=2 -DY' $T/spv/a.f32.flags"

# malformed tables: an error naming the file and line, the previous rules untouched
cp "$T/k.mk" "$T/good.mk"
bad() { # bad DESCRIPTION ROW MESSAGE
    printf 'KIND(a, lower_a)\n%s\n' "$2" >"$T/bad.def"
    "$G" "$T/bad.def" "$T/spv" "$T/k.mk" 2>"$T/e"; local rc=$?
    ok "$1: exit 1 naming bad.def:2" \
       "[ $rc != 0 ] && grep -q 'bad.def:2: $3' $T/e && cmp -s $T/k.mk $T/good.mk && [ ! -e $T/k.mk.tmp ]"
}
bad "seven columns" 'KERNEL(b, a, BASE, 0, 0, "b.glsl", "f32")' "a KERNEL row has 8 columns"
bad "an unknown variant" 'KERNEL(b, a, BASE, 0, 0, "b.glsl", "f32 f64", "")' 'variant "f64"'
bad "an unquoted source" 'KERNEL(b, a, BASE, 0, 0, b.glsl, "f32", "")' "SOURCE, VARIANTS and DEFINES are strings"
bad "a stem that is not an identifier" 'KERNEL(B-1, a, BASE, 0, 0, "b.glsl", "f32", "")' 'stem "B-1"'
bad "no variants" 'KERNEL(b, a, BASE, 0, 0, "b.glsl", "", "")' "stem b has no VARIANTS"
bad "a row split over two lines" 'KERNEL(b, a, BASE, 0, 0, "b.glsl",' 'a KERNEL row ends with'
printf 'KERNEL(b, a, BASE, 0, 0, "b.glsl", "f32", "")\nKERNEL(b, a, BASE, 0, 0, "c.glsl", "f32", "")\n' \
    >"$T/dup.def"
"$G" "$T/dup.def" "$T/spv" "$T/k.mk" 2>"$T/e"; rc=$?
ok "a stem given two rows: exit 1 naming the second" \
   "[ $rc != 0 ] && grep -q 'dup.def:2: stem b has two rows' $T/e && cmp -s $T/k.mk $T/good.mk"

# the project's table: every module of the build, each from a source that exists
"$G" shaders/kernels.def "$T/spv2" "$T/p.mk" 2>"$T/e"; rc=$?
ok "shaders/kernels.def: exit 0" "[ $rc = 0 ] && [ ! -s $T/e ]"
missing=$(sed -n 's/^\$(SPV_DIR)\/[^:]*\.spv: \(shaders\/[^ ]*\) .*/\1/p' "$T/p.mk" | sort -u |
          while read -r f; do [ -f "$f" ] || echo "$f"; done)
ok "every source a row names exists${missing:+ (missing: $missing)}" "[ -z '$missing' ]"
