"""scripts/offline_run.sh, the command line on a GPU box without network: every command of `cuda-bench`, each
given what it takes of the clone, the system site and the CUPTI wheels, in arguments the command line accepts."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

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


#: a command that measures until it is signalled, then takes a second to write what it measured and says so
SIGNALLED = '''import pathlib, signal, sys, time
def stop(signum, frame):
    time.sleep(1.0)
    pathlib.Path("results/after-signal.json").write_text("{}")
    print("bench: written after the signal", flush=True)
    sys.exit(130)
signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
print("bench: measuring", flush=True)
time.sleep(60)
'''


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_a_signal_to_the_calls_process_group_loses_nothing_the_command_writes_or_says_after_it(tmp_path, signal_name):
    """A call's time limit signals every process of the call (timeout(1) and the device do): the command's last
    words reach the log, and results/ is saved once the command has written what it measured, not before."""
    import signal
    import tarfile
    import time
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / "results").mkdir()
    shutil.copy(ROOT / "scripts" / "offline_run.sh", tree / "scripts")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / ".offline-run-ready").touch()  # set up: no install, no GPU check
    command = venv / "bin" / "cuda-bench"
    command.write_text(f"#!{sys.executable}\n{SIGNALLED}")
    command.chmod(0o755)
    for folder in ("wheels", "repo", "site"):
        (tmp_path / folder).mkdir()
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(tree / "scripts" / "offline_run.sh"), *(str(tmp_path / f) for f in ("wheels", "repo", "site")), str(out),
         "counts", "main"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        env=dict(os.environ, CUDA_BENCH_VENV=str(venv), CARRY=str(tmp_path / "no-carry"), CUPTI=str(tmp_path)))
    log = out / "bench.log"
    try:
        deadline = time.monotonic() + 30
        while not (log.exists() and "measuring" in log.read_text()) and time.monotonic() < deadline:
            time.sleep(0.1)
        os.killpg(proc.pid, getattr(signal, signal_name))
        said, _ = proc.communicate(timeout=60)
    finally:  # a script that hangs leaves nothing running
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "bench: written after the signal" in log.read_text() and "bench: written after the signal" in said
    assert "offline_run: cuda-bench counts exited 130" in said
    with tarfile.open(out / "results.tar.gz") as saved:
        assert "results/after-signal.json" in saved.getnames()
