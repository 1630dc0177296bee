# Sourced first by the tests/cli scripts, which run from the checkout's root: B, the binary under
# test; T, a scratch folder removed on exit; n and ok NAME CONDITION, one TAP line per check: "ok N
# NAME" when CONDITION (shell text, eval'd) holds, else "not ok N NAME".
B=${NPU_EXPLORE:-build/asan/npu-explore}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
# agrees NAME ARGS...: `run ARGS --check` exits 0 with no output mismatching its reference.
agrees() {
    local name=$1 rc
    shift
    "$B" run "$@" --check > "$T/c.txt" 2>&1; rc=$?
    ok "$name" "[ $rc = 0 ] && grep -q ', 0 mismatch' $T/c.txt"
}
# npubin_edit IN OUT EDIT: OUT is the .npubin IN with the Python statements EDIT applied to its
# bytes b (a bytearray), its checksum fixed (FNV-1a 64 of what follows the 32-byte header, in bytes
# 24..31) so the reader gets past it to the check under test.
npubin_edit() {
    python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
exec(sys.argv[3])
h = 0xcbf29ce484222325
for c in b[32:]:
    h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
b[24:32] = struct.pack("<Q", h)
open(sys.argv[2], "wb").write(b)
PY
}
