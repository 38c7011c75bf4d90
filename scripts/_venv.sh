# Sourced by scripts/bench and scripts/test: make $venv hold the packages of requirements file $1,
# reinstalling when that file (or one it includes) changes.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CUDA_BENCH_VENV:-$root/.venv}
stamp=$(cat "$root/requirements.txt" "$root/$1" | sha256sum | cut -c1-16)
if [ "$(cat "$venv/.requirements" 2>/dev/null)" != "$stamp" ]; then
    echo "creating/updating $venv from $1" >&2
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/$1"
    echo "$stamp" > "$venv/.requirements"
fi
