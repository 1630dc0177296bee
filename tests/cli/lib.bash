# Sourced first by the tests/cli scripts, which run from the checkout's root: B, the binary under
# test; T, a scratch folder removed on exit; n and ok NAME CONDITION, one TAP line per check: "ok N
# NAME" when CONDITION (shell text, eval'd) holds, else "not ok N NAME".
B=${NPU_EXPLORE:-build/asan/npu-explore}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
ok() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fi; }
