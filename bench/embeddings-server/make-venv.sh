#!/usr/bin/env bash
# The Python environment of the bench's embeddings server (server.py beside this file):
# onnxruntime, tokenizers and numpy from PyPI in ${AGENT_DATA_BENCH_VENV:-~/.cache/agent-data/bench-venv}.
# Made once: a venv that already imports the three is left as it is. Without Python 3 or PyPI
# it says so in one line and succeeds, and the bench skips what needs the server.
set -uo pipefail

venv="${AGENT_DATA_BENCH_VENV:-$HOME/.cache/agent-data/bench-venv}"
packages=('onnxruntime>=1.17' 'tokenizers>=0.15' 'numpy>=1.24')

"$venv/bin/python" -c 'import onnxruntime, tokenizers, numpy' >/dev/null 2>&1 && exit 0

if ! command -v python3 >/dev/null 2>&1; then
  echo "bench venv not made: no python3 on the PATH (the bench skips the embeddings server)"
  exit 0
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! python3 -m venv "$venv" >"$log" 2>&1; then
  echo "bench venv not made: python3 -m venv failed ($(tail -n1 "$log" | cut -c1-200))"
  exit 0
fi
if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${packages[@]}" >"$log" 2>&1; then
  echo "bench venv not made: pip could not install ${packages[*]} ($(grep -m1 -E 'ERROR|error' "$log" | cut -c1-200))"
  exit 0
fi
