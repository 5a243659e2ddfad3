# Shared by the stage scripts in .ci/ (sourced, not run). Each stage checks its
# own prerequisites with `need`, then `require` stops it with the list of
# what is missing. Scratch space is $JAS_CI_WORK when .ci/run shares one
# across stages, else a temporary folder removed when the stage exits.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if [ -n "${JAS_CI_WORK:-}" ]; then
  WORK=$JAS_CI_WORK
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi
STAGE_START=$SECONDS
MISSING=()

need() {  # need DESCRIPTION COMMAND...: records DESCRIPTION unless COMMAND succeeds
  local what=$1
  shift
  "$@" >/dev/null 2>&1 || MISSING+=("$what")
}

require() {  # require STAGE: exits with the list of prerequisites `need` found missing
  if [ ${#MISSING[@]} -gt 0 ]; then
    printf '.ci/%s needs, and did not find:\n' "$1" >&2
    printf '  - %s\n' "${MISSING[@]}" >&2
    exit 1
  fi
}

find_python() {  # find_python 3.11 -> path of an interpreter of that version, or nothing
  local want=$1 cand
  for cand in "python$want" "$(pyenv root 2>/dev/null)"/versions/"$want".*/bin/python; do
    if command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ]; then
      if "$cand" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$want'.split('.'))))" 2>/dev/null; then
        command -v "$cand" 2>/dev/null || echo "$cand"
        return
      fi
    fi
  done
}

extra() {  # extra NAME -> the requirements of pyproject.toml's optional dependency NAME, one a line
  python -c "import sys, tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies'][sys.argv[1]], sep='\n')" "$1"
}

fresh_venv() {  # fresh_venv PYTHON NAME: creates and activates $WORK/NAME with a current pip
  "$1" -m venv "$WORK/$2"
  # shellcheck disable=SC1091
  source "$WORK/$2/bin/activate"
  python -m pip install -q --upgrade pip
}

build_tools() {  # CMake and Ninja from PyPI into $WORK/tools (once per shared WORK), put first on PATH
  if [ ! -x "$WORK/tools/bin/ninja" ]; then
    "$1" -m venv "$WORK/tools"
    "$WORK/tools/bin/python" -m pip install -q --upgrade pip cmake ninja
  fi
  export PATH="$WORK/tools/bin:$PATH"
}

gtest_installed() { dpkg-query -W -f='${Status}' libgtest-dev 2>/dev/null | grep -q 'install ok installed'; }
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get; }

ensure_gtest() {  # GoogleTest for the C++ tests (ctest): Debian's libgtest-dev, installed if absent
  if gtest_installed; then
    echo "GoogleTest: libgtest-dev $(dpkg-query -W -f='${Version}' libgtest-dev) is installed"
    return
  fi
  echo "GoogleTest: apt-get update, apt-get install libgtest-dev"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgtest-dev >/dev/null
}

step() {  # step NAME COMMAND...: runs one step of a stage and prints how long it took
  local step_name=$1 step_start=$SECONDS
  shift
  echo "--- $step_name ---"
  "$@"
  echo "--- $step_name: $((SECONDS - step_start)) s ---"
}

finish() {  # finish STAGE: the closing line of a stage
  echo "=== .ci/$1 passed in $((SECONDS - STAGE_START)) s ==="
}
