#!/bin/bash
# The C sources keep the checked-in style (.clang-format; `make format` applies it): every file of
# the layers and the tests, as the Makefile's FORMAT_SRCS lists them, is what clang-format makes
# of it. A missing clang-format fails (tools/deps.sh installs it).
. tests/cli/lib.bash
if ! command -v clang-format > /dev/null; then
    echo "not ok 1 clang-format is not installed (apt-get install clang-format)"
    exit 1
fi
files=$(ls common/*.[ch] compiler/*.[ch] compiler/*/*.[ch] runtime/*.[ch] runtime/*/*.[ch] viz/*.[ch] \
           app/*.[ch] tui/*.[ch] tests/*.[ch] tests/*/*.[ch] 2>/dev/null)
: > "$T/bad"
for f in $files; do clang-format "$f" | cmp -s - "$f" || echo "$f" >> "$T/bad"; done
ok "every C source is clang-formatted ($(echo $files | wc -w) files; run make format)" \
   "[ ! -s $T/bad ] || { sed 's/^/#   /' $T/bad; false; }"
# the check can fail: a file with its indentation broken is named
mkdir -p "$T/c"
printf 'int f(void)\n{\n  return 1;\n}\n' > "$T/c/x.c"
ok "a misformatted file is caught" "! clang-format --style=file:$PWD/.clang-format $T/c/x.c | cmp -s - $T/c/x.c"
