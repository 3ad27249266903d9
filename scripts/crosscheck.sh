#!/usr/bin/env bash
# make crosscheck: run gradviz beside the pinned TensorFlow (python -m crosscheck).
#
# Usage: scripts/crosscheck.sh [ARGS...]   ARGS go to `python -m crosscheck`
#        (--fresh for new random programs, --show K to look at program K, --help).
#
# The first run makes build/crosscheck-venv with requirements-crosscheck.txt (pip
# only; a few minutes); later runs reuse it while that file is unchanged.
#
# Environment:
#   PYTHON   the interpreter that creates the environment (default: python3; TensorFlow
#            2.21 has wheels for Python 3.10 to 3.13 on Linux x86-64 and aarch64)
#   CROSSCHECK_SETUP_ONLY=1   make the environment and stop (make crosscheck-setup)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=build/crosscheck-venv
REQS=requirements-crosscheck.txt
STAMP="$VENV/.installed"
LOG=build/crosscheck-install.log

fail() { printf '\nERROR: %s\n' "$1" >&2; shift; printf '  %s\n' "$@" >&2; exit 1; }

command -v "$PYTHON" >/dev/null || fail "no Python interpreter '$PYTHON'" \
    "install Python 3.10-3.13, or run: make crosscheck PYTHON=/path/to/python3"
want=$(sha256sum "$REQS" | cut -d' ' -f1)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
    printf '==> making %s with %s (first time: a few minutes)\n' "$VENV" \
        "$(grep -v '^#' "$REQS" | tr '\n' ' ')"
    rm -rf "$VENV"
    mkdir -p build
    "$PYTHON" -m venv "$VENV" || fail "could not make the virtual environment $VENV with $PYTHON" \
        "on Debian: apt-get install python3-venv"
    if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -r "$REQS" \
            >"$LOG" 2>&1; then
        tail -n 20 "$LOG" | sed 's/^/  | /' >&2
        fail "pip could not install $REQS into $VENV (the whole log: $LOG)" \
            "TensorFlow 2.21 needs Python 3.10-3.13 on Linux x86-64 or aarch64 (this is" \
            "$("$PYTHON" -c 'import platform, sys; print(sys.version.split()[0], platform.machine())'));" \
            "behind a proxy, set HTTPS_PROXY or PIP_INDEX_URL"
    fi
    echo "$want" >"$STAMP"
fi
[ "${CROSSCHECK_SETUP_ONLY:-}" = 1 ] && { echo "==> $VENV is ready"; exit 0; }
printf '==> python -m crosscheck %s\n' "$*"
PYTHONPATH=$(pwd) exec "$VENV/bin/python" -m crosscheck "$@"
