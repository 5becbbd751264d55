#!/usr/bin/env bash
# Debian's oneDNN 2.6.3 against PyPI's oneDNN 3.2 (onednn-cpu-gomp 2023.2.0,
# the newest build on GNU OpenMP like Debian's) on the zoo's conv and matmul
# shapes, at 1 and 2 threads, AVX-512 (where the CPU has it) and AVX2:
#
#   bench/onednn/compare.sh [ROUNDS]     (default 4)
#
# Prints one line per primitive and run: RES version threads isa case impl
# best_us median_us iterations. The builds alternate within each round.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/build/onednn-compare"
rounds="${1:-4}"
mkdir -p "$out"
if [ ! -d "$out/wheel" ]; then
  pip download --no-deps -q -d "$out/dl" onednn-cpu-gomp==2023.2.0 onednn-devel-cpu-gomp==2023.2.0
  for w in "$out"/dl/*.whl; do python3 -m zipfile -e "$w" "$out/wheel"; done
fi
inc="$(dirname "$(find "$out/wheel" -path '*include/oneapi' | head -1)")"
lib="$(dirname "$(find "$out/wheel" -name 'libdnnl.so*' | head -1)")"
[ -e "$lib/libdnnl.so" ] || ln -sf "$(ls "$lib"/libdnnl.so.3* | head -1)" "$lib/libdnnl.so"
g++ -O2 -std=c++17 -fopenmp "$root/bench/onednn/versions.cc" -ldnnl -o "$out/bench26"
g++ -O2 -std=c++17 -fopenmp -I"$inc" "$root/bench/onednn/versions.cc" -L"$lib" -Wl,-rpath,"$lib" \
  -ldnnl -o "$out/bench32"
for r in $(seq 1 "$rounds"); do
  for t in 1 2; do
    for isa in native avx2; do
      for b in 26 32; do
        if [ "$isa" = avx2 ]; then
          OMP_NUM_THREADS=$t DNNL_MAX_CPU_ISA=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 "$out/bench$b"
        else
          OMP_NUM_THREADS=$t "$out/bench$b"
        fi
      done
    done
  done
done
