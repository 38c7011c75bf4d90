# Sourced by scripts/bench and scripts/test: make $venv hold the packages of requirements file $1
# , installing them when that file (or requirements.txt, which every file
# includes) changed since they were last installed. One stamp per file: alternating the two commands
# installs nothing.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CUDA_BENCH_VENV:-$root/.venv}
requirements=$1
stamp=$(cat "$root/requirements.txt" "$root/$requirements" | sha256sum | cut -c1-16)
if [ "$(cat "$venv/.stamp-$requirements" 2>/dev/null)" != "$stamp" ]; then
    echo "creating/updating $venv from $requirements" >&2
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$root/$requirements"
    echo "$stamp" > "$venv/.stamp-$requirements"
fi
