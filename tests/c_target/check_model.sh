#!/usr/bin/env bash
# A model through the c target, as issue 36's "Done when" asks, checked with
# every host compiler there is:
#   check_model.sh TESSEL MODEL NAME WORKDIR [tessel compile flags...]
# MODEL is an ONNX test folder (model.onnx and test_data_set_0, whose first
# data set NAME_check.c compares with) or an .onnx file (compared with the
# reference target on seeded random inputs). It
#   - generates the sources twice and requires the same bytes;
#   - requires each workspace pool in NAME.h to be what `tessel plan` plans
#     for the same options, and their sum within 2% of the lower bound;
#   - compiles them with gcc and clang at -std=c99 -Wall -Wextra -Werror
#     -pedantic, and requires that no object calls an allocator (nm);
#   - runs NAME_check.c built with gcc, with clang, and with gcc under
#     AddressSanitizer and UndefinedBehaviorSanitizer: each must PASS.
# Exits 77 (skipped) when the model is missing.
set -euo pipefail
tessel=$1 model=$2 name=$3 work=$4
shift 4
if [[ ! -e $model ]]; then
  echo "SKIP: $model is missing"
  exit 77
fi
if [[ -d $model ]]; then
  onnx=$model/model.onnx
  check=(--check-data "$model")
else
  onnx=$model
  check=(--check)
fi
rm -rf "$work"
mkdir -p "$work"
"$tessel" compile "$onnx" --target c -o "$work/a" --name "$name" "${check[@]}" "$@" \
  > "$work/compile.log"
cat "$work/compile.log"
"$tessel" compile "$onnx" --target c -o "$work/b" --name "$name" "${check[@]}" "$@" > /dev/null
diff -r "$work/a" "$work/b" > /dev/null || { echo "FAIL: a second generation differs"; exit 1; }
echo "deterministic: a second generation is byte-identical"

src=$work/a
"$tessel" plan "$onnx" --target c --json "$work/plan.json" "$@" > /dev/null
python3 - "$src/$name.h" "$work/plan.json" "TESSEL_${name^^}_" <<'PY'
import json, re, sys
header, plan, prefix = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
pools = {p["name"].lower(): p for p in plan["plans"][0]["pools"]}
sizes = re.findall(r"#define " + prefix + r"(\w+)_WORKSPACE_SIZE (\d+)", header)
total = int(re.search(r"#define " + prefix + r"WORKSPACE_SIZE (\d+)", header).group(1))
used = bound = 0
for pool, size in sizes:
    p = pools[pool.lower()]
    if int(size) != p["used_bytes"]:
        sys.exit(f"FAIL: pool {pool}: {size} bytes in the header, {p['used_bytes']} planned")
    used += p["used_bytes"]
    bound += p["lower_bound_bytes"]
if total != used:
    sys.exit(f"FAIL: {prefix}WORKSPACE_SIZE is {total}, the pools' sum {used}")
if used > 1.02 * bound:
    sys.exit(f"FAIL: the workspace pools take {used} bytes, over 2% above the lower bound {bound}")
print(f"workspace {used} bytes as planned; lower bound {bound} ({used / max(bound, 1):.4f})")
PY
strict=(-std=c99 -Wall -Wextra -Werror -pedantic)
compilers=(gcc)
if command -v clang > /dev/null; then compilers+=(clang); else echo "note: no clang here"; fi
# The weights are data: compiled once, without optimization.
gcc "${strict[@]}" -O0 -c "$src/${name}_constants.c" -o "$work/constants.o"
for cc in "${compilers[@]}"; do
  "$cc" "${strict[@]}" -O2 -c "$src/$name.c" -o "$work/$cc-model.o"
  "$cc" "${strict[@]}" -O2 -I"$src" -c "$src/${name}_check.c" -o "$work/$cc-check.o"
  undefined=$(nm -u "$work/$cc-model.o" "$work/constants.o")
  if grep -Ew 'malloc|calloc|realloc|free|aligned_alloc|posix_memalign|memalign' <<< "$undefined"; then
    echo "FAIL: the generated code calls an allocator ($cc)"
    exit 1
  fi
  "$cc" "$work/$cc-model.o" "$work/constants.o" "$work/$cc-check.o" -lm -o "$work/$cc-check"
  echo "== $cc -O2"
  "$work/$cc-check"
done
echo "== gcc -fsanitize=address,undefined"
san=(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -g)
gcc "${strict[@]}" "${san[@]}" -c "$src/$name.c" -o "$work/san-model.o"
gcc "${strict[@]}" "${san[@]}" -I"$src" -c "$src/${name}_check.c" -o "$work/san-check.o"
gcc "${san[@]}" "$work/san-model.o" "$work/constants.o" "$work/san-check.o" -lm -o "$work/san-check"
ASAN_OPTIONS=detect_leaks=0 "$work/san-check"
echo "no allocator, clean with ${compilers[*]} -Werror -pedantic and under ASan/UBSan: PASS"
