# Sourced by the scripts: `venv NAME REQUIREMENTS [PYTHON]` creates the virtual environment .venv/NAME
# with the interpreter PYTHON (python3 when not given) once, and remakes it whenever the requirements
# file or the interpreter changes. Run from the repository root.
venv() {
  local dir=".venv/$1" stamp
  local python=${3:-python3}
  stamp="$dir/.installed-$(sha1sum "$2" | cut -c1-12)"
  # An interpreter other than python3 is part of the stamp, so that changing PYTHON remakes the environment.
  [ "$python" = python3 ] || stamp="$stamp-$(printf %s "$python" | sha1sum | cut -c1-8)"
  if [ ! -f "$stamp" ]; then
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/pip" install --quiet --upgrade pip
    "$dir/bin/pip" install --quiet -r "$2"
    touch "$stamp"
  fi
}
