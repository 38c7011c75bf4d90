"""``cuda-bench init``: set once, per checkout, the cuda-python clone and the asv machine every
command uses, so that plain ``asv run``, ``asv continuous``, ``asv publish`` and ``asv preview``
work as typed."""

from __future__ import annotations

from pathlib import Path

from cuda_bench.commands.common import OUTSIDE, log, machine_option, repo_option, without_gpu
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import LOCAL_SETTINGS
from cuda_bench.foundations.status import OK
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "init",
        description="record this machine (GPU name, driver, CUDA version, compute capability, CPU) "
        "in asv's machine file and write .asv/local.json: the local cuda-python clone and the "
        "machine name that every cuda-bench and asv command of this checkout then uses (through "
        "the project's asv plugin, cuda_bench/publish/asv_plugin.py)",
    )
    repo_option(
        p,
        "a local clone or fork of cuda-python (default: the GitHub URL in asv.conf.json, which asv "
        "clones into .asv/)",
    )
    machine_option(
        p, "asv machine name (default: after the GPU, e.g. nvidia-h200; cpu-<host> without one)"
    )


def main(args, argv):
    settings = asvrun.local_settings()
    if args.repo:
        repo = Path(args.repo).expanduser().resolve()
        if not asvrun.is_git_repo(repo):
            raise asvrun.RunError(f"--repo {repo} is not a git repository")
        asvrun.resolve_one(repo, "main")  # a clone of cuda-python has main
        settings["repo"] = str(repo)
    name, _ = machine.record(args.machine, without_gpu(OUTSIDE))
    settings["machine"] = name
    asvrun.write_local_settings(settings)
    log(
        f"{LOCAL_SETTINGS}: repo {settings.get('repo') or asvrun.load_conf()['repo']}, machine "
        f"{name}"
    )
    log(
        "now `asv run HEAD~20..HEAD`, `asv continuous main BRANCH`, `asv publish` and `cuda-bench "
        "...` use them"
    )
    return OK
