#!/bin/sh
# Installs the Debian packages named on the command line when any is missing. Needs root (or
# sudo); prints what to install otherwise.
missing=""
for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "installing Debian packages:$missing"
if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "error: missing packages:$missing (run as root: apt-get install$missing)" >&2; exit 2
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || exit 2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null || exit 2
