# Sourced by scripts/bench and scripts/test: make $venv hold this package (pip install -e) with the extra $1
# ("" or "test"), installing when pyproject.toml changed since the last install of that extra.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CUDA_BENCH_VENV:-$root/.venv}
extra=$1
stamp=$(sha256sum < "$root/pyproject.toml" | cut -c1-16)
if [ "$(cat "$venv/.stamp-${extra:-base}" 2>/dev/null)" != "$stamp" ]; then
    echo "installing cuda-python-bench${extra:+[$extra]} into $venv" >&2
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -e "$root${extra:+[$extra]}" || exit 1
    echo "$stamp" > "$venv/.stamp-${extra:-base}"
fi
