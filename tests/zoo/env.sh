# Sourced by make_zoo.sh and ci_subset.sh: makes build/zoo-venv with the
# pinned packages of requirements.txt (PyPI's torch wheel brings the CUDA
# libraries: about 5.5 GB, a few minutes). Defines zoo_root, zoo_venv and
# zoo_python; returns non-zero, saying why on stderr, when it cannot.
zoo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
zoo_venv="$zoo_root/build/zoo-venv"
zoo_python="$zoo_venv/bin/python"

zoo_env() {
  local req="$zoo_root/tests/zoo/requirements.txt"
  local stamp="$zoo_venv/.requirements"
  # Made before, with these requirements, and complete.
  if [ -x "$zoo_python" ] && [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
    return 0
  fi
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "python3 cannot create virtual environments (install python3-venv)" >&2
    return 1
  fi
  mkdir -p "$zoo_root/build"
  if [ ! -x "$zoo_python" ]; then
    python3 -m venv "$zoo_venv" || return 1
  fi
  echo "zoo: installing $(grep -vc '^#' "$req") packages into $zoo_venv (torch brings CUDA's libraries, ~5.5 GB)" >&2
  "$zoo_venv/bin/pip" install -q --disable-pip-version-check "$@" -r "$req" >&2 || return 1
  cp "$req" "$stamp"
}
