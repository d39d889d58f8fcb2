#!/usr/bin/env bash
# Makes std for wasm32-unknown-unknown available, idempotently, and prints the environment
# a cargo build of the core component needs, as KEY=VALUE lines on stdout (logs go to
# stderr). Routes, in order:
#   1. rustup's toolchain already has the target's std;
#   2. `rustup target add wasm32-unknown-unknown` (bounded by a timeout);
#   3. Debian's rustc-web and its std sources, unpacked into .toolchain/ (no system
#      install), used with RUSTC_BOOTSTRAP=1 and -Zbuild-std.
# WASM_TOOLCHAIN=debian forces route 3; WASM_TOOLCHAIN=rustup forbids it.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
target=wasm32-unknown-unknown
mode=${WASM_TOOLCHAIN:-auto}
log() { echo "wasm-toolchain: $*" >&2; }

host_bin="$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin"

rustup_has_std() {
  local dir
  dir=$(rustc --print target-libdir --target "$target" 2>/dev/null) || return 1
  compgen -G "$dir/libstd-*.rlib" >/dev/null
}

print_rustup_env() {
  echo "WASM_ROUTE=rustup"
  echo "CARGO_TARGET_DIR=$root/target/wasm-rustup"
  echo "PATH=$host_bin:$PATH"
}

if [ "$mode" != debian ]; then
  if rustup_has_std; then
    log "std for $target is installed (rustup)"
    print_rustup_env
    exit 0
  fi
  log "installing std for $target with rustup (timeout 300 s)"
  if timeout 300 rustup target add "$target" >&2 && rustup_has_std; then
    print_rustup_env
    exit 0
  fi
  if [ "$mode" = rustup ]; then
    log "rustup could not install the target and WASM_TOOLCHAIN=rustup forbids the fallback"
    exit 1
  fi
  log "rustup route failed; falling back to Debian's rustc-web"
fi

prefix="$root/.toolchain/debian-rustc-web"
rustc_bin="$prefix/usr/bin/rustc"
libs="$prefix/usr/lib/x86_64-linux-gnu"

# The workspace's rust-version: an older rustc-web cannot build it.
min_version=$(sed -nE 's/^rust-version = "([0-9.]+)"/\1/p' "$root/Cargo.toml" | head -n 1)

debian_rustc() { LD_LIBRARY_PATH="$libs" "$rustc_bin" "$@"; }

debian_ready() {
  [ -x "$rustc_bin" ] || return 1
  local version
  version=$(debian_rustc --version 2>/dev/null | awk '{print $2}') || return 1
  dpkg --compare-versions "$version" ge "$min_version" || return 1
  [ -d "$(debian_rustc --print sysroot)/lib/rustlib/src/rust/library" ]
}

candidate() { apt-cache policy rustc-web 2>/dev/null | awk '/Candidate:/{print $2}'; }

if ! debian_ready; then
  command -v apt-get >/dev/null || { log "apt-get is not available: cannot use the Debian fallback"; exit 1; }
  ver=$(candidate)
  if [ -z "$ver" ] || [ "$ver" = "(none)" ] || dpkg --compare-versions "$ver" lt "$min_version"; then
    log "apt-get update (the package lists have no rustc-web >= $min_version: '${ver:-none}')"
    apt-get update -qq >&2
    ver=$(candidate)
  fi
  if [ -z "$ver" ] || [ "$ver" = "(none)" ] || dpkg --compare-versions "$ver" lt "$min_version"; then
    log "Debian offers no rustc-web >= $min_version here ('${ver:-none}')"
    exit 1
  fi
  short=$(echo "$ver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
  llvm=$(apt-cache depends "libstd-rust-web-$short=$ver" | awk '/Depends: libllvm/{print $2; exit}')
  log "downloading rustc-web $ver (+ std sources, $llvm)"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # _apt cannot write to a root-owned temp dir; the download is then done as root.
  chmod 755 "$work"
  (cd "$work" && apt-get download -qq "rustc-web=$ver" "rust-web-src=$ver" "libstd-rust-web-$short=$ver" "libstd-rust-web-dev=$ver" "$llvm" >&2)
  rm -rf "$prefix"
  mkdir -p "$prefix"
  for deb in "$work"/*.deb; do dpkg -x "$deb" "$prefix"; done
  # -Zbuild-std needs only library/; the compiler sources and docs are large.
  for src in "$prefix"/usr/src/rustc-*; do rm -rf "$src/compiler" "$src/src"; done
  rm -rf "$prefix/usr/share/doc"
  # The package links the std sources with an absolute path; point it inside the prefix.
  sysroot=$(debian_rustc --print sysroot)
  src_link="$sysroot/lib/rustlib/src/rust"
  if [ ! -d "$src_link/library" ]; then
    src_dir=$(ls -d "$prefix"/usr/src/rustc-* | head -n 1)
    mkdir -p "$(dirname "$src_link")"
    rm -rf "$src_link"
    ln -s "$src_dir" "$src_link"
  fi
  debian_ready || { log "the unpacked Debian toolchain does not work"; exit 1; }
fi

log "using $(debian_rustc --version) from Debian (build-std)"
echo "WASM_ROUTE=debian"
echo "RUSTC=$rustc_bin"
echo "RUSTC_BOOTSTRAP=1"
echo "LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "PATH=$host_bin:$host_bin/gcc-ld:$PATH"
echo "CARGO_TARGET_DIR=$root/target/wasm-debian"
echo "WASM_BUILD_STD=-Zbuild-std=std,panic_abort"
