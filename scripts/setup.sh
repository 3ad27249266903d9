#!/usr/bin/env bash
# Prepare this checkout for gradviz: the system programs it needs and a Python
# virtual environment in .venv with the project installed in editable mode.
#
# Usage: scripts/setup.sh [lab|test]
#   lab   (default) what `make lab` needs: requirements.txt (Graphviz comes
#         inside pygraphviz; the program `dot` is used when it is there)
#   test  what `make test` needs: also Graphviz `dot` (the tests compare it
#         with pygraphviz's), Chromium (browser tests), librsvg's rsvg-convert
#         (a slide's picture is drawn by it too), requirements-test.txt, and
#         axe-core from the npm registry (the accessibility audit, tests/axe/,
#         with Node.js's npm)
#
# Safe to run again: it installs only what is missing, and skips the pip step
# while the stamp file in .venv is newer than requirements*.txt and
# pyproject.toml, so a second run takes a second or two.
#
# Environment:
#   PYTHON    the interpreter that creates .venv (default: python3, >= 3.10)
#   CHROMIUM  the Chromium binary the browser tests drive
#             (default: /usr/bin/chromium)
#   Proxies and package indexes: pip honours HTTPS_PROXY, PIP_INDEX_URL,
#   PIP_FIND_LINKS and PIP_NO_INDEX; apt-get honours its own configuration.
set -euo pipefail

MODE=${1:-lab}
case "$MODE" in
    lab | test) ;;
    -h | --help)
        sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        printf 'scripts/setup.sh: unknown mode %q (must be "lab" or "test")\n' "$MODE" >&2
        exit 2
        ;;
esac

cd "$(dirname "$0")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
VENV=.venv
LOGDIR=build/setup-logs
STAMP="$VENV/.setup-$MODE.stamp"
AXE=tests/axe/node_modules/axe-core/axe.min.js
axe_ready() {
    # axe_ready: the version tests/axe/package.json pins is the one installed.
    local want have
    want=$(sed -n 's/.*"axe-core": *"\([^"]*\)".*/\1/p' tests/axe/package.json 2>/dev/null | head -n 1)
    have=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' tests/axe/node_modules/axe-core/package.json 2>/dev/null | head -n 1)
    [ -f "$AXE" ] && [ -n "$want" ] && [ "$want" = "$have" ]
}

say() { printf '==> %s\n' "$*"; }
note() { printf '    %s\n' "$*"; }
fail() {
    # fail LINE...: print an error block and stop.
    printf '\nERROR: %s\n' "$1" >&2
    shift
    local line
    for line in "$@"; do printf '  %s\n' "$line" >&2; done
    printf '\n' >&2
    exit 1
}
show_log_tail() {
    printf '    --- last lines of %s ---\n' "$1" >&2
    tail -n 25 "$1" | sed 's/^/    | /' >&2
}

# ---------------------------------------------------------------- the basics
case "$(uname -s)" in
    Linux*) OS=linux ;;
    Darwin*) OS=macos ;;
    MINGW* | MSYS* | CYGWIN*) OS=windows ;;
    *) OS=other ;;
esac

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    fail "'$PYTHON' was not found: gradviz needs Python 3.10 or newer." \
        "Debian/Ubuntu: apt-get install python3 python3-venv" \
        "macOS: brew install python   Windows: use WSL (Debian or Ubuntu)" \
        "Or point PYTHON at an interpreter: make test PYTHON=/path/to/python3.11"
fi
if ! PY_VERSION=$("$PYTHON" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3]); sys.exit(sys.version_info < (3, 10))'); then
    fail "$PYTHON is Python ${PY_VERSION:-?}; gradviz needs Python 3.10 or newer." \
        "Install a newer Python and run again with PYTHON=/path/to/python3.x"
fi
MAKE_VERSION=$(make --version 2>/dev/null | sed -n 1p) || true
say "mode '$MODE': Python $PY_VERSION ($(command -v "$PYTHON")), ${MAKE_VERSION:-make: not found (needed only for the make targets)}"
mkdir -p "$LOGDIR"

# ------------------------------------------------------ system packages (apt)
# apt-get is used only where it can work without asking anything: as root, or
# through a sudo that needs no password.
SUDO=none
if [ "$OS" = linux ] && command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        SUDO="sudo -n"
    fi
fi

APT_UPDATED=no
apt_install() {
    # apt_install PACKAGE...: install Debian packages, saying what failed.
    local log="$LOGDIR/apt.log"
    if [ "$APT_UPDATED" = no ]; then
        say "updating Debian's package lists (apt-get update)"
        if ! $SUDO apt-get update -q >"$log" 2>&1; then
            show_log_tail "$log"
            fail "apt-get update failed." \
                "If the lines above say 'Temporary failure resolving' or 'Could not connect'," \
                "this machine cannot reach Debian's package mirrors: check the network, or set" \
                "a proxy for apt (Acquire::http::Proxy in /etc/apt/apt.conf.d/)." \
                "Or install by hand, then run this again: apt-get install -y $*"
        fi
        APT_UPDATED=yes
    fi
    say "installing $* with apt-get (about 30 s; log: $log)"
    if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$@" >>"$log" 2>&1; then
        show_log_tail "$log"
        fail "apt-get install $* failed (full log: $log)." \
            "If it says 'Temporary failure resolving' or 'Could not connect', this machine" \
            "cannot reach Debian's package mirrors (network down, or a proxy is needed:" \
            "Acquire::http::Proxy in /etc/apt/apt.conf.d/)." \
            "Or install by hand, then run this again: apt-get install -y $*"
    fi
}

how_to_get() {
    # how_to_get PACKAGE: the lines that tell a person how to install it here.
    case "$1:$OS" in
        graphviz:macos) echo "Graphviz (dot): brew install graphviz" ;;
        graphviz:windows) echo "Graphviz (dot): run the Windows installer from https://graphviz.org/download/ and tick 'add Graphviz to the PATH' (or use WSL, where this script installs it)" ;;
        graphviz:*) echo "Graphviz (dot): as root, apt-get install -y graphviz (dnf/pacman/zypper: package 'graphviz')" ;;
        chromium:macos) echo "Chromium (browser tests only): brew install --cask chromium, then CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium make test" ;;
        chromium:windows) echo "Chromium (browser tests only): install Chromium or Chrome and set CHROMIUM to its .exe (or use WSL, where this script installs it)" ;;
        chromium:*) echo "Chromium (browser tests only): as root, apt-get install -y chromium (or set CHROMIUM=/path/to/chromium)" ;;
        librsvg2-bin:macos) echo "librsvg (tests only): brew install librsvg" ;;
        librsvg2-bin:*) echo "librsvg's rsvg-convert (tests only): as root, apt-get install -y librsvg2-bin" ;;
        python3-venv:*) echo "Python's venv module: as root, apt-get install -y python3-venv" ;;
        npm:macos) echo "npm (tests only, for axe-core): brew install node" ;;
        npm:*) echo "npm (tests only, for axe-core): as root, apt-get install -y npm (or install Node.js from nodejs.org)" ;;
    esac
}

MISSING=()
if command -v dot >/dev/null 2>&1; then
    say "found Graphviz: $(dot -V 2>&1 | head -n 1)"
elif [ "$MODE" = test ]; then
    say "Graphviz 'dot' is missing: the tests draw every diagram with it and with pygraphviz's Graphviz"
    MISSING+=(graphviz)
else
    say "no Graphviz 'dot' on PATH: diagrams are laid out by the Graphviz inside pygraphviz (a Python package)"
fi
if [ "$MODE" = test ]; then
    if [ -x "$CHROMIUM" ]; then
        say "found Chromium for the browser tests: $CHROMIUM"
    else
        say "Chromium is missing at $CHROMIUM: the browser tests drive it (it is not needed for make lab)"
        MISSING+=(chromium)
    fi
    if command -v rsvg-convert >/dev/null 2>&1; then
        say "found librsvg's rsvg-convert for the picture tests"
    else
        say "rsvg-convert is missing: the tests draw slide pictures with librsvg too (not needed for make lab)"
        MISSING+=(librsvg2-bin)
    fi
    if axe_ready; then
        :
    elif command -v npm >/dev/null 2>&1; then
        say "found npm $(npm --version 2>/dev/null) for axe-core, the accessibility audit's engine"
    else
        say "npm is missing: the accessibility tests run axe-core, which comes from the npm registry (not needed for make lab)"
        MISSING+=(npm)
    fi
fi
# A bare Debian has python3 without the venv module's pip bootstrap.
if [ ! -x "$VENV/bin/python" ] && ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    say "$PYTHON cannot create virtual environments (no venv/ensurepip module)"
    MISSING+=(python3-venv)
fi

if [ ${#MISSING[@]} -gt 0 ]; then
    if [ "$SUDO" != none ]; then
        apt_install "${MISSING[@]}"
        # Check that the install gave us what we asked for.
        for pkg in "${MISSING[@]}"; do
            case "$pkg" in
                graphviz) command -v dot >/dev/null 2>&1 || fail "apt-get installed graphviz but 'dot' is still not on PATH." ;;
                chromium) [ -x "$CHROMIUM" ] || fail "apt-get installed chromium but $CHROMIUM does not exist; set CHROMIUM=/path/to/chromium." ;;
                librsvg2-bin) command -v rsvg-convert >/dev/null 2>&1 || fail "apt-get installed librsvg2-bin but 'rsvg-convert' is still not on PATH." ;;
                npm) command -v npm >/dev/null 2>&1 || fail "apt-get installed npm but 'npm' is still not on PATH." ;;
                python3-venv) "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1 || fail "python3-venv is installed but $PYTHON still cannot create a venv (is $PYTHON Debian's python3?)." "Use PYTHON=/usr/bin/python3, or install venv support for your own Python." ;;
            esac
        done
        say "installed: ${MISSING[*]}"
    else
        lines=()
        for pkg in "${MISSING[@]}"; do lines+=("- $(how_to_get "$pkg")"); done
        if [ "$OS" = linux ] && command -v apt-get >/dev/null 2>&1; then
            why="not root and no password-less sudo, so this script cannot run apt-get"
        else
            why="no apt-get here, so this script cannot install it"
        fi
        fail "missing: ${MISSING[*]} ($why)" \
            "Install what is missing, then run this again:" "${lines[@]}"
    fi
fi

# ------------------------------------------------------------- Python (.venv)
if [ -e "$VENV" ] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    say "$VENV exists but its python does not run (moved, or its Python was removed): recreating it"
    rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
    say "creating the virtual environment $VENV with $PYTHON"
    if ! "$PYTHON" -m venv "$VENV" >"$LOGDIR/venv.log" 2>&1; then
        show_log_tail "$LOGDIR/venv.log"
        rm -rf "$VENV"
        fail "'$PYTHON -m venv $VENV' failed." "- $(how_to_get python3-venv)"
    fi
fi

is_fresh() {
    # is_fresh STAMP: the stamp exists and is newer than every file that decides
    # what gets installed.
    local f
    [ -f "$1" ] || return 1
    for f in requirements.txt requirements-test.txt pyproject.toml; do
        [ "$1" -nt "$f" ] || return 1
    done
}

PIP_NETWORK_HELP=(
    "If pip cannot reach the Python package index (PyPI) from this machine:"
    "- behind a proxy: export HTTPS_PROXY=http://proxy:port (pip honours it), or set"
    "  PIP_INDEX_URL to a mirror your network allows;"
    "- offline: on a connected machine run 'pip download -r requirements-test.txt -d wheels',"
    "  copy wheels/ here, then: PIP_NO_INDEX=1 PIP_FIND_LINKS=wheels make test"
)

pip_failed() {
    # pip_failed LOG WHAT: stop, saying whether the package index was out of reach.
    show_log_tail "$1"
    if grep -qE 'Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|ProxyError|Could not fetch URL|ConnectTimeout|Read timed out|No matching distribution found' "$1"; then
        fail "$2 failed: pip could not reach the Python package index, or found no" \
            "matching package there (full log: $1)." "${PIP_NETWORK_HELP[@]}"
    fi
    fail "$2 failed (full log: $1)." "${PIP_NETWORK_HELP[@]}"
}

pip_logged() {
    # pip_logged LOG ARGS...: run pip in the venv, showing one line per package
    # fetched, the whole output going to LOG.
    local log=$1 rc
    shift
    set +e
    "$VENV/bin/python" -m pip --disable-pip-version-check "$@" 2>&1 | tee "$log" |
        { grep --line-buffered -E '^(Collecting|Successfully installed|ERROR)' | cut -c1-110 | sed 's/^/    /'; true; }
    rc=${PIPESTATUS[0]}
    set -e
    return "$rc"
}

if [ "$MODE" = test ]; then REQ=requirements-test.txt; else REQ=requirements.txt; fi
if is_fresh "$STAMP" || { [ "$MODE" = lab ] && is_fresh "$VENV/.setup-test.stamp"; }; then
    say "Python packages in $VENV are up to date (to force a reinstall: rm $VENV/.setup-*.stamp)"
else
    say "upgrading pip in $VENV"
    if ! pip_logged "$LOGDIR/pip-upgrade.log" install --quiet --upgrade pip; then
        pip_failed "$LOGDIR/pip-upgrade.log" "upgrading pip in $VENV"
    fi
    say "installing the Python packages of $REQ into $VENV (first time: 1 to 3 minutes)"
    if ! pip_logged "$LOGDIR/pip-install.log" install --progress-bar off -r "$REQ"; then
        pip_failed "$LOGDIR/pip-install.log" "installing $REQ"
    fi
    say "installing gradviz itself in editable mode (pip install -e .)"
    if ! pip_logged "$LOGDIR/pip-editable.log" install --no-deps -e .; then
        pip_failed "$LOGDIR/pip-editable.log" "pip install -e ."
    fi
    CHECK="import numpy, matplotlib, ipywidgets, anywidget, graphviz, jupyterlab, ipykernel"
    [ "$MODE" = test ] && CHECK="$CHECK, pytest, nbclient, nbformat, playwright"
    if ! "$VENV/bin/python" -c "$CHECK" 2>"$LOGDIR/import-check.log"; then
        show_log_tail "$LOGDIR/import-check.log"
        fail "the packages installed but do not import in $VENV (see above)."
    fi
    touch "$STAMP"
fi

# ---------------------------------------------- axe-core (npm, tests only)
# The version tests/axe/package-lock.json pins, into tests/axe/node_modules.
if [ "$MODE" = test ] && ! axe_ready; then
    say "installing axe-core for the accessibility tests (npm ci in tests/axe; log: $LOGDIR/npm.log)"
    if ! npm ci --prefix tests/axe --no-audit --no-fund >"$LOGDIR/npm.log" 2>&1 || [ ! -f "$AXE" ]; then
        show_log_tail "$LOGDIR/npm.log"
        fail "npm ci in tests/axe failed (full log: $LOGDIR/npm.log)." \
            "If it says ENOTFOUND or ETIMEDOUT, this machine cannot reach the npm registry:" \
            "set a proxy (npm config set proxy http://proxy:port) or a mirror (npm config set registry URL)."
    fi
fi

say "ready: $VENV ($("$VENV/bin/python" --version 2>&1)) in $ROOT"
