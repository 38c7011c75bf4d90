"""scripts/offline_run.sh, the command line on a GPU box without network: every command of `cuda-bench`, each
given what it takes of the clone, the system site and the CUPTI wheels, in arguments the command line accepts."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import ROOT

from cuda_bench import cli
from cuda_bench.commands import COMMANDS

#: a command's own arguments, where it needs some
EXAMPLES = {"compare": ["main", "my-branch"], "aa": ["main"], "bisect": ["v1", "v2", "-b", "SetCurrent"],
            "over-cpp": ["main"], "counts": ["main"], "window": ["HEAD~3..HEAD"], "prebuild": ["main"],
            "plan": ["--run", "--call-limit", "600"]}


def offline_run(tmp_path, *args):
    """The cuda-bench command line offline_run.sh runs for ``args``, without running it."""
    for folder in ("wheels", "repo", "site", "out", "cupti"):
        (tmp_path / folder).mkdir(exist_ok=True)
    (tmp_path / "cupti" / "cupti_python-13.0.1-py3-none-any.whl").touch()
    proc = subprocess.run(
        [str(ROOT / "scripts" / "offline_run.sh"), *(str(tmp_path / f) for f in ("wheels", "repo", "site", "out")),
         *args], capture_output=True, text=True, check=True,
        env=dict(os.environ, CUDA_BENCH_DRY_RUN="1", CUPTI=str(tmp_path / "cupti")))
    return proc.stdout.splitlines()


@pytest.mark.parametrize("command", list(COMMANDS))
def test_offline_run_runs_every_command_with_the_arguments_it_takes(tmp_path, command):
    argv = offline_run(tmp_path, command, *EXAMPLES.get(command, []))
    assert argv[0] == command
    args, rest = cli.parser().parse_known_args(argv)  # a bad option exits 3 here
    assert args.command == command and (not rest or command in ("run", "ladder"))
    given = vars(args)
    if "repo" in given:
        assert given["repo"] == str(tmp_path / "repo"), "the clone is given to every command that takes one"
    if "system_site" in given:
        assert given["system_site"] == str(tmp_path / "site")
    if "cupti" in given:
        assert list(map(str, given["cupti"])) == [str(tmp_path / "cupti")]


def test_an_asv_range_alone_is_run_over_that_range(tmp_path):
    assert offline_run(tmp_path, "HEAD~3..HEAD")[0] == "run" and offline_run(tmp_path)[-1] == "HEAD^!"
