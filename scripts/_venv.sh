# Sourced by scripts/bench and scripts/test: make $venv hold this package (pip install -e) with the extra $1
# ("" or "test"), installing when pyproject.toml changed since the last install of that extra, or when $venv
# belongs to another checkout.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${CUDA_BENCH_VENV:-$root/.venv}
extra=$1
stamp=$(sha256sum < "$root/pyproject.toml" | cut -c1-16)
# A .venv belongs to this checkout when its editable install points here (pip's direct_url.json). A copied
# checkout (cp -a) carries the original's: its package and its scripts' interpreter are the original's, and
# `publish` in the copy would write into the original's html/. Such a .venv is built again (CUDA_BENCH_VENV, a
# folder of the user's choosing, is installed into again, never removed).
if [ -e "$venv" ] && ! grep -qsF "\"url\": \"file://$root\"" \
        "$venv"/lib/python*/site-packages/cuda_python_bench-*.dist-info/direct_url.json; then
    echo "$venv holds no editable install of $root (a copied checkout's?): installing it again" >&2
    [ -n "${CUDA_BENCH_VENV:-}" ] || rm -rf "$venv"
    rm -f "$venv"/.stamp-*
fi
if [ "$(cat "$venv/.stamp-${extra:-base}" 2>/dev/null)" != "$stamp" ]; then
    echo "installing cuda-python-bench${extra:+[$extra]} into $venv" >&2
    [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -e "$root${extra:+[$extra]}" || exit 1
    echo "$stamp" > "$venv/.stamp-${extra:-base}"
fi
