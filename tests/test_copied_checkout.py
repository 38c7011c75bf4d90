"""A checkout copied whole (``cp -a``, as people copy a project to try a change) carries the original's ``.venv``,
whose editable install, and whose scripts' interpreter, are the original's: the copy's commands would run the
original's code and write into the original's ``html/``. ``scripts/bench`` and ``scripts/test`` (``scripts/_venv.sh``)
see that the ``.venv`` is not this checkout's and build it again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import ROOT, git


def installed_from(checkout):
    """Where the package in ``checkout``'s .venv is installed from (pip's direct_url.json), and the folder its
    interpreter imports cuda_bench from."""
    (record,) = (checkout / ".venv").glob("lib/python*/site-packages/cuda_python_bench-*.dist-info/direct_url.json")
    imported = subprocess.run([str(checkout / ".venv" / "bin" / "python"), "-I", "-c",  # not the cwd's
                               "import cuda_bench, os; print(os.path.dirname(os.path.dirname(cuda_bench.__file__)))"],
                              capture_output=True, text=True, check=True).stdout.strip()
    return json.loads(record.read_text())["url"], imported


@pytest.mark.slow
def test_a_copied_checkout_builds_its_own_venv_and_publishes_into_its_own_html(tmp_path):
    original, copy = tmp_path / "original", tmp_path / "copy"
    for name in git(ROOT, "ls-files").splitlines():  # the checkout as it is, without its .venv or .asv
        (original / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, original / name)
    env = {k: v for k, v in os.environ.items() if k != "CUDA_BENCH_VENV"}
    first = subprocess.run([str(original / "scripts" / "bench"), "--help"], capture_output=True, text=True, env=env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert installed_from(original) == (f"file://{original}", str(original))
    subprocess.run(["cp", "-a", str(original), str(copy)], check=True)
    assert installed_from(copy) == (f"file://{original}", str(original))  # what the copy carries
    published = subprocess.run([str(copy / "scripts" / "bench"), "publish"], capture_output=True, text=True,
                               env=env, cwd=copy)
    assert published.returncode == 0, published.stderr[-2000:]
    assert published.stderr.startswith(f"{copy / '.venv'} holds no editable install of {copy} (a copied "
                                       "checkout's?): installing it again\n")
    assert installed_from(copy) == (f"file://{copy}", str(copy))
    assert (copy / "html" / "index.html").is_file() and not (original / "html" / "index.html").exists()
    assert installed_from(original) == (f"file://{original}", str(original))  # the original's, untouched
    again = subprocess.run([str(copy / "scripts" / "bench"), "--help"], capture_output=True, text=True, env=env)
    assert again.returncode == 0 and "installing" not in again.stderr  # its own now: nothing to do
