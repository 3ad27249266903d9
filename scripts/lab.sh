#!/usr/bin/env bash
# Start JupyterLab on notebooks/ from .venv (run by `make lab`, after setup).
#
# Usage: scripts/lab.sh [PORT]   (default 8888; extra JupyterLab options can be
# given in LAB_ARGS, e.g. LAB_ARGS=--no-browser)
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${1:-8888}
VENV=.venv

if [ ! -x "$VENV/bin/jupyter" ]; then
    echo "ERROR: $VENV/bin/jupyter is missing: run 'make setup' first." >&2
    exit 1
fi

# The notebooks ask for the kernel named python3; make sure that is this
# venv's Python (where gradviz is installed), whatever else is on the machine.
KERNEL_DIR="$VENV/share/jupyter/kernels/python3"
if [ ! -f "$KERNEL_DIR/kernel.json" ] || ! grep -q "$(pwd)/$VENV" "$KERNEL_DIR/kernel.json"; then
    echo "==> installing the Python kernel of $VENV for the notebooks"
    "$VENV/bin/python" -m ipykernel install --sys-prefix --name python3 \
        --display-name "Python 3 (gradviz)" >/dev/null
fi

# Answer JupyterLab's "get notified about news?" question once, for this venv
# only: the lessons work offline and should open to the lesson, not a pop-up.
OVERRIDES="$VENV/share/jupyter/lab/settings/overrides.json"
if [ ! -f "$OVERRIDES" ]; then
    mkdir -p "$(dirname "$OVERRIDES")"
    printf '%s\n' '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' >"$OVERRIDES"
fi

mkdir -p notebooks
ROOT_FLAG=()
[ "$(id -u)" -eq 0 ] && ROOT_FLAG=(--allow-root)
echo "==> starting JupyterLab on notebooks/ at http://localhost:$PORT/lab (stop it with Ctrl-C)"
# shellcheck disable=SC2086  # LAB_ARGS is a list of options on purpose
exec "$VENV/bin/jupyter" lab --notebook-dir=notebooks --port="$PORT" \
    --ServerApp.port_retries=0 --LabApp.news_url=None \
    --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
    ${ROOT_FLAG[@]+"${ROOT_FLAG[@]}"} ${LAB_ARGS:-}
