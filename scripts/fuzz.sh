#!/usr/bin/env bash
# Fuzzes the SSE decoder, every stream fold and apply_patch with cargo-fuzz (libFuzzer), each target for
# FUZZ_SECONDS (default 60), seeded with the recorded provider streams of ../shared when they
# are there. cargo-fuzz is installed into .toolchain/ on first use; the stable toolchain runs
# it with RUSTC_BOOTSTRAP=1 (it needs -Z sanitizer flags). A crash fails the script and leaves
# its input under core-component/fuzz/artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
tools="$root/.toolchain/cargo-fuzz"
if [ ! -x "$tools/bin/cargo-fuzz" ]; then
    echo "fuzz: installing cargo-fuzz into $tools" >&2
    cargo install --locked --root "$tools" cargo-fuzz >&2
fi
export PATH="$tools/bin:$PATH" RUSTC_BOOTSTRAP=1
cd "$root/core-component"
shared="$root/../shared/conformance/wire"
mkdir -p fuzz/logs
for target in sse_decoder fold_anthropic fold_chat_completions fold_openai_responses fold_gemini apply_patch; do
    corpus="fuzz/corpus/$target"
    mkdir -p "$corpus"
    # The decoder is seeded with every provider's recordings, each fold with its own.
    case $target in
        fold_*) seeds=("$shared/${target#fold_}") ;;
        apply_patch) seeds=("$shared/../apply_patch") ;;
        *) seeds=("$shared"/*/) ;;
    esac
    existing=()
    for dir in "${seeds[@]}"; do
        [ -d "$dir" ] && existing+=("$dir")
    done
    log="fuzz/logs/$target.log"
    echo "fuzz: $target for ${seconds}s, ${#existing[@]} seed folder(s), log in core-component/$log" >&2
    if ! cargo fuzz run --sanitizer address "$target" "$corpus" "${existing[@]}" -- \
        -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
        tail -40 "$log" >&2
        echo "fuzz: $target failed; the crashing input is under core-component/fuzz/artifacts/$target" >&2
        exit 1
    fi
    grep -E "^stat::(number_of_executed_units|new_units_added)" "$log" | sed "s/^/fuzz: $target: /" >&2 || true
done
echo "fuzz: no crashes" >&2
