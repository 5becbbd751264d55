#!/usr/bin/env bash
# cmake --install, then examples/cpp built against the installed package
# (find_package(tessel)) twice, on libtessel.so and on libtessel.a, and
# run on MODEL: both print the same outputs, and the shared one takes
# libtessel.so from the installed prefix.
#   check_install.sh BUILD_DIR SOURCE_DIR MODEL WORK_DIR
set -euo pipefail
build=$1 src=$2 model=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for kind in shared static; do
  cmake -S "$src/examples/cpp" -B "$work/$kind" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DTESSEL_EXAMPLE_STATIC=$([ $kind = static ] && echo ON || echo OFF) >/dev/null
  cmake --build "$work/$kind" >/dev/null
  "$work/$kind/tessel_example" "$model" "$work/$kind.tsl" > "$work/$kind.out"
  "$work/$kind/tessel_example" "$work/$kind.tsl" > "$work/$kind.tsl.out"
  cat "$work/$kind.out"
done
# (Outputs are captured before grep reads them: with pipefail, `grep -q`
# closing the pipe early would fail the producer.)
shared_libs=$(ldd "$work/shared/tessel_example")
grep "$work/prefix/.*libtessel.so" <<<"$shared_libs" >/dev/null ||
  { echo "check_install: the shared example does not load the installed libtessel.so"; exit 1; }
if grep libtessel <<<"$(ldd "$work/static/tessel_example")" >/dev/null; then
  echo "check_install: the static example loads a libtessel"; exit 1
fi
# tessel::runtime carries no importer: no ONNX or protobuf library, and only
# the API exported.
if grep -E "onnx|protobuf" <<<"$(ldd "$work/prefix/lib/libtessel_runtime.so")"; then
  echo "check_install: libtessel_runtime.so loads the ONNX importer's libraries"; exit 1
fi
for lib in libtessel.so libtessel_runtime.so; do
  if grep -E " [TWBDV] .*tessel::(ir|cpu|targets|memory|ops|snippets|opencl|onnx_io|api|tuning|cli)::" \
       <<<"$(nm -DC --defined-only "$work/prefix/lib/$lib")"; then
    echo "check_install: $lib exports tessel's internals"; exit 1
  fi
done
# The same numbers from both, and from the .tsl each saved (the device
# description aside).
strip_desc() { sed 's/ (.*)$//' "$1"; }
for f in static.out shared.tsl.out static.tsl.out; do
  if [ "$(strip_desc "$work/shared.out")" != "$(strip_desc "$work/$f")" ]; then
    echo "check_install: $f differs from shared.out"; exit 1
  fi
done
grep "largest" "$work/shared.out" >/dev/null
echo "check_install: examples/cpp built against $work/prefix (shared and static) and ran"
