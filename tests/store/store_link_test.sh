#!/usr/bin/env bash
# store_link_without_firestore_test: a build with -DAGENTCKPT_WITH_FIRESTORE=OFF links no
# cpprestsdk client code into a program that uses the store (store_link_probe: OpenStore over
# the backends built in), and that program still opens SQLite stores and refuses firestore://.
# Configures a second build tree and builds only the probe there (common, checkpoint, the store
# core, the SQLite backend; ccache when installed).
#   store_link_test.sh SOURCE_DIR WORK_DIR PROBE_OF_THE_DEFAULT_BUILD
set -euo pipefail
src=$1 work=$2 probe_default=$3

fail() { echo "FAIL: $*" >&2; exit 1; }

# A build that made only some test targets (scripts/sanitize with SANITIZE_FOLDERS) may not have
# made the probe: make it in its own tree first.
if [[ ! -x $probe_default ]]; then
  cmake --build "$(dirname "$(dirname "$probe_default")")" --target store_link_probe
fi

# The check must be able to fail: with the Firestore backend (the default), the probe links
# cpprestsdk. (Outputs are read whole: a grep that stops early would break the pipe.)
libs=$(ldd "$probe_default")
grep -q libcpprest <<<"$libs" ||
  fail "the default build's probe does not link libcpprest, so the check below would prove nothing"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
mkdir -p "$work"
# Unoptimised and without debug information: what is checked is which code gets linked, which
# the optimisation level does not change, and -O0 -g0 compiles the probe's dependencies in about
# a third of the time of -O2 -g.
cmake -S "$src" -B "$work" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
  -DCMAKE_C_FLAGS_DEBUG=-O0 -DAGENTCKPT_WITH_FIRESTORE=OFF -DAGENTCKPT_BUILD_BENCH=OFF \
  "${launcher[@]}" >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$work" -j2 --target store_link_probe

probe=$work/bin/store_link_probe
libs=$(ldd "$probe")
symbols=$(nm -C "$probe")
if grep -i cpprest <<<"$libs"; then fail "store_link_probe links cpprestsdk"; fi
if grep -E ' (web|pplx|Concurrency)::' <<<"$symbols"; then
  fail "store_link_probe contains cpprestsdk code"
fi
if grep 'FirestoreStore' <<<"$symbols"; then fail "store_link_probe contains FirestoreStore"; fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$probe" "sqlite://$tmp/probe.db" || fail "the probe cannot open an SQLite store"
if out=$("$probe" "firestore://projects/p/databases/d" 2>&1); then
  fail "the probe opened a Firestore store without the backend"
fi
grep -q "built without the Firestore backend" <<<"$out" || fail "unexpected refusal: $out"
echo "ok: no cpprestsdk in $probe"
