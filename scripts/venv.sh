# Sourced by the scripts: `venv NAME REQUIREMENTS` creates the virtual environment .venv/NAME
# once and remakes it whenever the requirements file changes. Run from the repository root.
venv() {
  local dir=".venv/$1" stamp
  stamp="$dir/.installed-$(sha1sum "$2" | cut -c1-12)"
  if [ ! -f "$stamp" ]; then
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/pip" install --quiet --upgrade pip
    "$dir/bin/pip" install --quiet -r "$2"
    touch "$stamp"
  fi
}
