"""cuda-bench (cuda_bench.cli, its commands, .asvrun, .machine): the derived configuration that points asv at a
clone, a wheel or a system site without editing asv.conf.json, the machine record, the timed-process settings,
and what a newcomer meets first: the help, clear one-line errors, visible build progress, GPU-less runs kept out
of the history."""

from __future__ import annotations

import argparse
import calendar
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import json5
import pytest
from conftest import (
    ROOT,
    aslr_can_be_switched_off,
    over_cpp_record,
    paired_run,
    read_lines,
    run_module,
    step_case,
    step_record,
)

from cuda_bench import cli
from cuda_bench.build import toolkit
from cuda_bench.commands import common
from cuda_bench.compare import gate, overcpp, paired, summaries
from cuda_bench.foundations import machine
from cuda_bench.foundations.paths import COMMITS, RESULTS, WORK, no_gpu_results, result_files
from cuda_bench.foundations.status import ERROR, INCOMPLETE, OK
from cuda_bench.publish import asv_plugin
from cuda_bench.results import history, overcpp_read, records
from cuda_bench.run import asvrun


def a_gpu_here(monkeypatch):
    """This machine taken for one with a GPU: run and steps then read and write the --results-dir they are given
    (without one, asv's results go to .asv/results-no-gpu whatever --results-dir says). Run's counting pass is
    recorded instead of made (it builds environments; tests/test_counts.py tests it), and its instruction pass is
    not made (tests/test_instructions.py tests it): returns the commits it was asked to count."""
    from cuda_bench.compare import countpass, instrpass

    monkeypatch.setattr(machine, "has_gpu", lambda info: True)
    counted = []
    monkeypatch.setattr(countpass, "record_commits",
                        lambda repo, commits, **kw: counted.extend(commits) or 0)
    monkeypatch.setattr(instrpass, "record_commits", lambda repo, commits, **kw: 0)
    return counted


def test_derived_config_overrides_only_what_was_asked(tmp_path, git_repo):
    site = tmp_path / "site"
    site.mkdir()
    conf = json.loads(asvrun.derived_conf(git_repo, "source", None, site).read_text())
    original = json5.loads((ROOT / "asv.conf.json").read_text())
    assert conf["repo"] == str(git_repo)
    assert conf["matrix"]["env"]["CUDA_BENCH_BINDINGS"] == ["source"]
    assert conf["matrix"]["env"]["CUDA_BENCH_SYSTEM_SITE"] == [str(site)]
    assert "cupy-cuda13x" not in conf["matrix"]["req"] and "numpy" not in conf["matrix"]["req"]
    assert conf["matrix"]["req"]["pip+asv_runner"] == ["0.2.5"]
    # paths still mean what they mean in asv.conf.json, wherever the derived file lives
    assert conf["benchmark_dir"] == str(ROOT / "benchmarks")
    assert all(str(ROOT) in cmd for cmd in conf["build_command"] + conf["install_command"])
    assert json5.loads((ROOT / "asv.conf.json").read_text()) == original  # the file itself is untouched
    # the paired engine's environments hold what asv's do, from the same matrix
    assert asvrun.requirements(conf) == [] and asvrun.system_site_of(conf) == str(site)
    assert asvrun.requirements(original) == ["numpy", "cupy-cuda13x"]
    assert asvrun.bindings_of(original) == "source"  # main and pull requests measure cuda_bindings as they ship it


def test_two_commands_at_once_each_read_their_own_derived_config(tmp_path, git_repo):
    """A long `cuda-bench run --repo A` re-reads its derived config hours later (the steps, the over-C++ run,
    publish): another command started meanwhile must not have replaced it. Each process writes its own, and
    removes it when it ends."""
    mine = asvrun.derived_conf(git_repo, "source")
    other = subprocess.run([sys.executable, "-c",
                            "from cuda_bench.run import asvrun; print(asvrun.derived_conf(None, '12.9.10'))"],
                           cwd=ROOT, capture_output=True, text=True, check=True)
    theirs = Path(other.stdout.strip())
    assert theirs != mine and theirs.parent == mine.parent and not theirs.exists()  # gone with its command
    conf = json.loads(mine.read_text())
    assert (conf["repo"], asvrun.bindings_of(conf)) == (str(git_repo), "source")


def test_defaults_keep_the_project_config(monkeypatch):
    monkeypatch.setattr(asvrun, "local_settings", lambda path=None: {})  # no clone set by `cuda-bench init`
    conf = json.loads(asvrun.derived_conf().read_text())
    original = json5.loads((ROOT / "asv.conf.json").read_text())
    assert conf["repo"] == original["repo"] == "https://github.com/NVIDIA/cuda-python.git"
    assert conf["matrix"] == original["matrix"]


def test_a_path_that_is_not_a_repository_is_one_clear_line(tmp_path):
    proc = run_module("cuda_bench", "compare", "main", "x", "--repo", tmp_path, check=False,
                      env=dict(os.environ, HOME=str(tmp_path)))
    assert proc.returncode == ERROR == 3
    assert proc.stderr.strip().splitlines()[-1] == f"bench: --repo {tmp_path} is not a git repository"
    assert "Traceback" not in proc.stderr


def test_an_unreachable_repository_is_one_line_with_the_ways_on(monkeypatch, capsys, tmp_path):
    """`cuda-bench run` where GitHub cannot be reached: one line saying what failed and the two ways on, not
    asv's traceback, and exit 3. The address refuses at once (nothing listens on port 1)."""
    monkeypatch.setenv("HOME", str(tmp_path))  # asv's machine file
    conf = asvrun.load_conf()
    conf["repo"] = "https://127.0.0.1:1/NVIDIA/cuda-python.git"
    monkeypatch.setattr(asvrun, "load_conf", lambda path=None: json.loads(json.dumps(conf)))
    monkeypatch.setattr(asvrun, "local_settings", lambda path=None: {})  # no clone set by `cuda-bench init`
    assert cli.main(["run", "--no-publish"]) == 3
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("bench: cannot reach https://127.0.0.1:1/NVIDIA/cuda-python.git (")
    assert "--repo" in err and "docs/guide.md, 'A GPU box without network'" in err


def test_help_names_every_command_and_says_where_the_rest_goes():
    top = run_module("cuda_bench", "--help").stdout
    commands = next(a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"init", "run", "ladder", "steps", "compare", "aa", "over-cpp", "publish", "serve", "report", "prebuild",
            "upgrade"} <= set(commands)
    for command, sub in commands.items():
        assert f"\n  {command} " in top, command
        own = sub.format_help()  # what `cuda-bench COMMAND --help` prints
        assert own.startswith(f"usage: cuda-bench {command} "), own[:80]  # not the top usage line
    run_help = run_module("cuda_bench", "run", "--help").stdout
    assert "goes to `asv run` unchanged" in " ".join(run_help.split())
    for command, sub in commands.items():  # every option of every command says what it does
        for action in sub._actions:
            if action.option_strings and action.dest != "help":
                assert len(action.help or "") > 15, (command, action.option_strings)
    compare_help = " ".join(commands["compare"].format_help().split())
    assert "Exit status: 1 when a case regressed" in compare_help


def test_one_exit_status_for_several_and_each_named_in_the_help():
    """``status.worst``: a regression outranks every other status (a pull-request check fails on
    it alone), the rest go by their number; ``cuda-bench --help`` lists each status with its
    meaning."""
    from cuda_bench.foundations.status import INTERRUPTED, MEANINGS, REGRESSION, worst

    assert worst([]) == OK
    assert worst([INCOMPLETE, REGRESSION, OK]) == REGRESSION
    assert worst([INTERRUPTED, REGRESSION]) == REGRESSION
    assert worst([INCOMPLETE, ERROR, OK]) == ERROR
    assert worst(iter([OK, INCOMPLETE])) == INCOMPLETE  # a generator, read once
    top = " ".join(run_module("cuda_bench", "--help").stdout.split())
    assert sorted(MEANINGS) == [OK, REGRESSION, INCOMPLETE, ERROR, INTERRUPTED] == [0, 1, 2, 3, 130]
    for code, meaning in MEANINGS.items():
        assert f"{code} {meaning}" in top, (code, top[-300:])

def test_machine_record_has_gpu_fields_only_from_a_gpu(tmp_path, monkeypatch):
    """Without nvidia-smi no GPU field is invented; with it, the fields are nvidia-smi's answers: here a
    stand-in on PATH answers as the H200's does, and the record is the one in results/nvidia-h200/machine.json."""
    monkeypatch.setenv("HOME", str(tmp_path))  # asv keeps its machine file in ~/.asv-machine.json
    monkeypatch.setenv("PATH", str(tmp_path / "bin") + os.pathsep + os.environ["PATH"])
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi: the stand-in would not be the one found")
    name, info = machine.record()
    saved = json.loads((tmp_path / ".asv-machine.json").read_text())[name]
    assert saved["machine"] == name and saved["num_cpu"] and saved["cpu"]
    assert name.startswith("cpu-") and "gpu" not in saved and "driver" not in saved

    h200 = json.loads((ROOT / "results" / "nvidia-h200" / "machine.json").read_text())
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(f"""#!/bin/sh
case "$1" in
  --query-gpu=*) echo "{h200['gpu']}, {h200['driver']}, {h200['gpu_cc']}, {h200['gpu_memory']}, {h200['gpu_count']}" ;;
  *) echo "| NVIDIA-SMI {h200['driver']}  Driver Version: {h200['driver']}  CUDA Version: {h200['cuda_driver']} |" ;;
esac
""")
    smi.chmod(0o755)
    name, info = machine.record()
    saved = json.loads((tmp_path / ".asv-machine.json").read_text())[name]
    fields = ("gpu", "gpu_count", "gpu_cc", "gpu_memory", "driver", "cuda_driver")
    assert name == "nvidia-h200" and {k: saved[k] for k in fields} == {k: h200[k] for k in fields}


def test_restarts_of_one_vm_record_one_machine_so_its_history_stays_on_one_graph(tmp_path, monkeypatch):
    """asv files a result under every machine field: the H200 VM comes back as 'Linux 6.18.44-fc-v973-gpu'
    with 135128870912 bytes and as '...-fc-v1252-gpu' with 135129063424; both must read the same."""
    starts = [{"os": "Linux 6.18.44-fc-v973-gpu", "ram": "135128870912"},
              {"os": "Linux 6.18.44-fc-v1252-gpu", "ram": "135129063424"}]
    assert machine.stable(starts[0]) == machine.stable(starts[1]) == {"os": "Linux 6.18.44", "ram": "126 GiB"}
    assert machine.stable({"os": "Linux 6.1.0-17-amd64", "ram": "8589934592"})["os"] != "Linux 6.18.44"
    monkeypatch.setenv("HOME", str(tmp_path))
    _, info = machine.record()  # this machine's own fields, as written to asv's machine file
    assert info["os"] == platform.system() + " " + platform.release().split("-")[0] and info["ram"].endswith(" GiB")
    # what the restart changed is not lost: every paired record keeps the host as it was (machine.host)
    host = machine.host()
    assert host["kernel"] == platform.release() and "kernel" not in info
    if os.path.isdir("/sys/devices/system/cpu/vulnerabilities"):
        assert "spectre_v2" in host["mitigations"]
    # the machine start: /proc/stat's boot time, which with /proc/uptime makes now (two records of one start match)
    booted = calendar.timegm(time.strptime(host["boot"], "%Y-%m-%dT%H:%M:%SZ"))
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    assert abs(booted + uptime - time.time()) < 5 and machine.host()["boot"] == host["boot"]
    # a start is named by the kernel's boot id where it gives one, else by the boot time
    assert host["start"] == (host["boot_id"] or host["boot"]) and machine.host()["start"] == host["start"]
    if platform.machine() == "x86_64":  # the CPU a VM was given, which its model name may hide
        assert float(host["cpu"]["bogomips"]) > 0 and host["cpu"]["cpu family"].isdigit()


def test_a_run_without_a_gpu_stays_out_of_the_history(tmp_path, capsys):
    """asv's commands that write results (through the project's asv plugin): on a machine without a GPU they write
    to results-no-gpu beside asv's environments, whatever results folder was configured or asked for, and say
    so; with a GPU, where configured. Publishing shows the configured history on any machine."""
    env_dir = tmp_path / ".asv" / "env"

    def applied(name, gpu, results_dir):
        conf = SimpleNamespace(repo="r", env_dir=str(env_dir), results_dir=str(results_dir))
        asv_plugin.apply_settings(name, conf, SimpleNamespace(machine=None), settings={}, gpu=gpu)
        return Path(conf.results_dir)

    assert no_gpu_results(env_dir) == tmp_path / ".asv" / "results-no-gpu"
    assert applied("Run", {}, tmp_path / "results") == no_gpu_results(env_dir)
    assert "no GPU on this machine: results go to" in capsys.readouterr().err
    assert applied("Run", {}, tmp_path / "elsewhere") == no_gpu_results(env_dir)  # asked for: still not there
    assert applied("Run", {"gpu": "NVIDIA H200"}, tmp_path / "results") == tmp_path / "results"  # the history
    assert applied("Publish", {}, tmp_path / "results") == tmp_path / "results"


def test_the_clone_init_set_replaces_only_the_configured_repository():
    """asv's commands (through the project's asv plugin) take the clone `cuda-bench init` set in place of the
    project's GitHub URL, and its machine name where none is given; a repository the configuration names
    otherwise (`cuda-bench run --repo`'s derived config, a test's own) and a machine asked for stay."""
    project = asvrun.load_conf()["repo"]

    def applied(repo, machine_name=None):
        conf = SimpleNamespace(repo=repo, env_dir="env", results_dir="results")
        args = SimpleNamespace(machine=machine_name)
        asv_plugin.apply_settings("Publish", conf, args, settings={"repo": "/clone", "machine": "box"})
        return conf.repo, args.machine

    assert applied(project) == ("/clone", "box")
    assert applied("/elsewhere", "mine") == ("/elsewhere", "mine")


def test_build_progress_reaches_the_console_while_asv_builds(capfd):
    """asv keeps a build step's output to itself: the build writes progress lines to CUDA_BENCH_PROGRESS, and
    cuda-bench prints them as they come, while the build is still running; the empty line a build starts with
    only ends the line asv left open ("Building <commit> for <env>")."""
    with asvrun.build_progress() as env:
        child = subprocess.Popen([sys.executable, "-c", (
            "import os, time\n"
            "from cuda_bench.build.toolkit import progress\n"
            "progress('')\n"
            "progress('cuda_core: building (abc); a cold cuda_core build takes minutes')\n"
            "time.sleep(3)\n"
            "progress('cuda_core: built in 3.0 s')\n")], env=dict(os.environ, **env, PYTHONPATH=str(ROOT)))
        time.sleep(1.5)
        early = capfd.readouterr().err
        child.wait()
    assert "\n\nbench: build: cuda_core: building (abc)" in early and "built in" not in early  # (the child's log first)
    assert "bench: build: \n" not in early and "[build] \n" not in early
    assert "bench: build: cuda_core: built in 3.0 s" in capfd.readouterr().err


PROBE = '''
import os


def track_aslr_off():
    with open("/proc/self/personality") as f:
        return int(int(f.read(), 16) & 0x0040000 != 0)  # ADDR_NO_RANDOMIZE


def track_hash_seed():
    return int(os.environ.get("PYTHONHASHSEED", "-1"))


def track_pinned_core():
    cores = os.sched_getaffinity(0)
    return cores.pop() if len(cores) == 1 else -1
'''


@pytest.mark.slow
def test_timed_asv_runs_benchmarks_pinned_without_aslr_and_with_a_fixed_hash_seed(tmp_path, git_repo, newest_env,
                                                                                   monkeypatch):
    from conftest import asv_conf, asv_results, git

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "__init__.py").write_text("")
    (tmp_path / "probe" / "bench_probe.py").write_text(PROBE)
    conf = asv_conf(tmp_path, git_repo, newest_env, benchmark_dir=str(tmp_path / "probe"))
    assert asvrun.asv("machine", "--yes", "--machine", "probe", config=conf) == 0
    core = machine.cores()[-1]
    status = asvrun.asv("run", "--quick", "--machine", "probe", "--set-commit-hash", git(git_repo, "rev-parse", "HEAD"),
                        "-E", f"existing:{newest_env}", config=conf, timed=True, affinity=str(core))
    assert status == 0
    (results,) = result_files(tmp_path / "results-no-gpu" / "probe")  # no GPU here: outside the history
    seen = {name.split(".")[-1]: value[0] for (name, _), value in asv_results(results).items()}
    assert seen["track_hash_seed"] == 0
    assert seen["track_pinned_core"] == core
    # setarch -R where the kernel allows it (machine.no_aslr_prefix probes); said plainly where not
    assert seen["track_aslr_off"] == (1 if aslr_can_be_switched_off() else 0)


def test_run_on_a_gpu_measures_its_range_in_one_pass_with_the_commits_in_mains_order(tmp_path, git_repo,
                                                                                      monkeypatch):
    """`cuda-bench run RANGE` on a GPU hands the range's commits, oldest first, and main's first-parent line (where
    the window finds the measured neighbours) to the one pass; asv never runs; -b reaches the window."""
    from conftest import git

    from cuda_bench.compare import keep, window

    shas = []
    for i in range(3):
        (git_repo / "README").write_text(f"{i}\n")
        git(git_repo, "commit", "-qam", f"c{i}")
        shas.append(git(git_repo, "rev-parse", "HEAD"))
    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", lambda *args, **kw: pytest.fail(f"asv ran: {args}"))
    seen = {}
    monkeypatch.setattr(keep, "into_history", lambda repo, commits, **kw: seen.update(commits=commits, **kw) or
                        (0, None))
    assert cli.main(["run", "HEAD~2..HEAD", "-b", "Floor", "--repo", str(git_repo), "--machine", "m",
                     "--results-dir", str(tmp_path / "res"), "--no-publish", "--no-over-cpp"]) == 0
    assert seen["commits"] == shas[1:] and seen["line"][-3:] == shas and seen["bench"] == ["Floor"]
    assert seen["counts"] is True and seen["block"] == window.BLOCK


def test_run_hands_its_bench_filter_to_asv(tmp_path, git_repo, monkeypatch):
    """`cuda-bench run -b REGEX` measures only what REGEX names, in asv as in the paired steps after it; an asv
    that exits non-zero makes the run's exit status 2 (something could not be measured)."""
    seen = []
    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", lambda *args, **kw: seen.append(args) or 1)
    assert cli.main(["run", "--asv-pass", "HEAD^!", "-b", "bench_cpp", "-b", "Floor", "--repo", str(git_repo),
                     "--machine", "m", "--results-dir", str(tmp_path / "res"), "--no-publish"]) == INCOMPLETE == 2
    (args,) = seen
    assert args[0] == "run" and args[-1] == "HEAD^!"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--bench"] == ["bench_cpp", "Floor"]


def test_ladder_new_runs_and_pairs_only_the_releases_newer_than_the_newest_measured_one(tmp_path, git_repo,
                                                                                         monkeypatch, capsys):
    """`cuda-bench ladder --new` (the nightly job): asv runs only the releases newer than the newest one
    measured in the ladder's own environment (not a release of an older series tagged later, not main's head,
    not a release measured only in main's environment), and each is paired with the release before it, not
    with main's head that a full ladder measured later by commit date. With none newer, or no ladder yet, it
    runs nothing and exits 0."""
    from conftest import git

    shas = {}
    for tag in ("cuda-core-v0.4.2", "cuda-core-v0.5.1", "cuda-core-v0.3.1", "cuda-core-v0.6.0rc1",
                "cuda-core-v0.6.0", "cuda-core-v0.6.1", None):
        (git_repo / "README").write_text(f"{tag}\n")
        git(git_repo, "commit", "-qam", str(tag))
        if tag:
            git(git_repo, "tag", tag)
        shas[tag] = git(git_repo, "rev-parse", "HEAD").strip()
    results_dir = tmp_path / "res"
    folder = results_dir / "m"
    folder.mkdir(parents=True)

    def measured(tag, bindings, date=0):
        (folder / f"{shas[tag][:8]}-{bindings}.json").write_text(json.dumps(
            {"commit_hash": shas[tag], "date": date, "env_name": bindings, "results": {}, "result_columns": [],
             "env_vars": {"CUDA_BENCH_BINDINGS": bindings}}))

    ran, paired_steps = [], []

    def asv(*args, **kw):  # measures what the hash file names, as asv run HASHFILE: would
        (hashfile,) = [a[len("HASHFILE:"):] for a in args if a.startswith("HASHFILE:")]
        ran.append(Path(hashfile).read_text().split())
        for tag, sha in shas.items():
            if sha in ran[-1]:
                measured(tag, "auto", date=2)
        return 0

    def measure(repo, base, head, **kw):
        paired_steps.append((base, head))
        raise gate.CompareError("not built here")

    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", asv)
    monkeypatch.setattr(gate, "measure", measure)
    argv = ["ladder", "--asv-pass", "--new", "--repo", str(git_repo), "--machine", "m", "--results-dir",
            str(results_dir), "--no-publish", "--no-over-cpp"]
    assert cli.main(argv) == 0 and not ran  # no ladder yet: nothing to pair a new release with
    assert "no cuda-core release measured yet in" in capsys.readouterr().err
    measured("cuda-core-v0.4.2", "auto")
    measured("cuda-core-v0.5.1", "auto")
    measured(None, "auto", date=1)  # a full ladder measured main's head too, after 0.5.1 by commit date
    measured("cuda-core-v0.6.0", "13.3.1")  # main's nightly run measured a release commit: not the ladder
    assert cli.main(argv) == 2  # a step that could not be measured: exit 2, as run's
    assert ran == [[shas["cuda-core-v0.6.0"], shas["cuda-core-v0.6.1"]]]
    assert paired_steps == [(shas["cuda-core-v0.5.1"], shas["cuda-core-v0.6.0"]),
                            (shas["cuda-core-v0.6.0"], shas["cuda-core-v0.6.1"])]
    assert "ladder --new: newer than cuda-core-v0.5.1, the newest measured in" in capsys.readouterr().err
    assert cli.main(argv) == 0 and len(ran) == 1
    assert "no cuda-core release newer than cuda-core-v0.6.1, the newest measured in" in capsys.readouterr().err


def test_a_failed_benchmark_or_step_costs_no_other_step(tmp_path, git_repo, monkeypatch, capsys):
    """asv exits non-zero when any one benchmark fails; what it measured is still paired with its neighbours
    (history.new_steps reads only what changed in this run, so a step skipped now would never be made), and a
    step that cannot be measured is reported and the next one still runs."""
    results_dir = tmp_path / "res"

    def asv(*args, **kw):  # asv measured three commits, then a benchmark failed
        for i, commit in enumerate("abc"):
            (results_dir / "m").mkdir(parents=True, exist_ok=True)
            (results_dir / "m" / f"{commit * 8}-env.json").write_text(json.dumps(
                {"commit_hash": commit * 40, "date": i, "env_name": "env", "results": {}, "result_columns": []}))
        return 2

    measured = []

    def measure(repo, base, head, **kw):
        measured.append((base[0], head[0]))
        if base[0] == "b":
            raise OSError(28, "No space left on device")
        raise gate.CompareError(f"{base[0]} -> {head[0]}: the base build failed")

    monkeypatch.setenv("HOME", str(tmp_path))
    counted = a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", asv)
    monkeypatch.setattr(gate, "measure", measure)
    history_commits = COMMITS.read_text() if COMMITS.exists() else None
    status = cli.main(["run", "--asv-pass", "--repo", str(git_repo), "--machine", "m", "--results-dir",
                       str(results_dir), "--no-publish", "--no-over-cpp"])
    assert status == 2 and measured == [("a", "b"), ("b", "c")]
    assert sorted(counted) == ["a" * 40, "b" * 40, "c" * 40]  # each newly measured commit is counted
    err = capsys.readouterr().err
    assert "asv run exited 2; pairing and publishing what it measured" in err
    assert "step aaaaaaaaa -> bbbbbbbbb not measured: a -> b: the base build failed (`cuda-bench steps " \
           f"--bindings source --repo {git_repo} --machine m --results-dir {results_dir}` makes it later)" in err
    assert "step bbbbbbbbb -> ccccccccc not measured: [Errno 28] No space left on device (`cuda-bench" in err
    # what the pages say of the measured commits goes beside the results they were measured into, not into the
    # history's
    assert (results_dir / COMMITS.name).exists()
    assert (COMMITS.read_text() if COMMITS.exists() else None) == history_commits


def test_a_run_with_no_step_to_make_still_publishes(tmp_path, git_repo, monkeypatch, capsys):
    """Nothing newly measured has a neighbour: no step is made, that is said, and the run still publishes and
    exits 0."""
    from cuda_bench.publish import dashboard

    published = []
    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", lambda *args, **kw: 0)
    monkeypatch.setattr(gate, "measure", lambda *a, **k: pytest.fail("a step made of nothing"))
    monkeypatch.setattr(dashboard, "publish", published.append)
    assert cli.main(["run", "--asv-pass", "--repo", str(git_repo), "--machine", "m", "--results-dir",
                     str(tmp_path / "res"), "--no-over-cpp"]) == 0
    assert len(published) == 1 and "steps: no newly measured commit" in capsys.readouterr().err


def test_an_over_cpp_run_that_cannot_be_made_still_leaves_the_run_published(tmp_path, git_repo, monkeypatch,
                                                                            capsys):
    """On a GPU machine, run ends with the newest commit's over-C++ run. When that cannot be made (a build
    that fails), the run says so in one line, exits 2 and still publishes; the record would have named the
    command that made it."""
    from cuda_bench.publish import dashboard

    results_dir = tmp_path / "res"

    def asv(*args, **kw):
        (results_dir / "m").mkdir(parents=True, exist_ok=True)
        (results_dir / "m" / "aaaaaaaa-env.json").write_text(json.dumps(
            {"commit_hash": "a" * 40, "date": 0, "env_name": "env", "results": {}, "result_columns": []}))
        return 0

    asked, published = [], []

    def over_cpp(repo, commit, **kw):
        asked.append((commit, kw["command"], kw["settings"].layouts))
        raise toolkit.BuildError(f"{commit[:9]}: cuda_core failed to build")

    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", asv)
    monkeypatch.setattr(overcpp, "measure", over_cpp)
    monkeypatch.setattr(dashboard, "publish", published.append)
    argv = ["run", "--asv-pass", "--repo", str(git_repo), "--machine", "m", "--results-dir", str(results_dir),
            "--no-steps"]
    assert cli.main(argv) == 2
    # over C++ keeps its own layouts (one per run) whatever the paired engine's --layouts says
    assert asked == [("a" * 40, "cuda-bench " + " ".join(argv), "fixed")] and len(published) == 1
    assert "over C++ at aaaaaaaaa not measured: aaaaaaaaa: cuda_core failed to build" in capsys.readouterr().err


def test_a_run_without_a_gpu_publishes_the_history_not_its_own_results(tmp_path, git_repo, monkeypatch, capsys):
    """Without a GPU, run's results stay out of the history (results-no-gpu beside asv's environments, for the
    project's configuration .asv/results-no-gpu), and so does the record of what each commit was built from;
    html/ then shows the history (results/), not a page of skipped cases in place of it."""
    from cuda_bench.publish import dashboard

    monkeypatch.setenv("HOME", str(tmp_path))
    if machine.has_gpu(machine.record("probe")[1]):
        pytest.skip("this machine has a GPU: its runs go into the history")
    assert no_gpu_results(ROOT / asvrun.load_conf()["env_dir"]) == WORK / "results-no-gpu"
    conf = asvrun.load_conf()
    conf["env_dir"] = str(tmp_path / "env")  # asv's environments, here with one build in its cache
    monkeypatch.setattr(asvrun, "load_conf", lambda path=None: json.loads(json.dumps(conf)))
    wheels = tmp_path / "env" / "env-a" / "asv-build-cache" / "key" / "wheels"
    wheels.mkdir(parents=True)
    (wheels / "build.json").write_text(json.dumps(
        {"commit": "a" * 40, "ok": True, "bindings": "13.3.1", "packages": {}, "seconds": 1.0}))
    name = f"no-gpu-run-{os.getpid()}"
    published = []
    monkeypatch.setattr(asvrun, "asv", lambda *args, **kw: 0)
    monkeypatch.setattr(dashboard, "publish", lambda config: published.append(json.loads(Path(config).read_text())))
    assert cli.main(["run", "--repo", str(git_repo), "--machine", name, "--no-steps"]) == 0
    (published_conf,) = published
    assert Path(published_conf["results_dir"]).resolve() == RESULTS.resolve()
    elsewhere = tmp_path / "results-no-gpu"
    assert f"this run's results stay in {elsewhere}" in capsys.readouterr().err
    assert [r["env"] for r in records.read(elsewhere / name, "build")] == ["env-a"]
    assert not (RESULTS / name).exists()


def test_cpu_affinity_choices(monkeypatch):
    assert machine.cpu_affinity("none") == [] and machine.cpu_affinity(None) == []
    assert machine.cpu_affinity("3,4") == ["--cpu-affinity", "3,4"]
    monkeypatch.setattr(machine, "cores", lambda: [2, 3, 5, 7, 11, 13])  # the cores a 16-core box lets us have
    assert machine.cpu_affinity("auto") == ["--cpu-affinity", "13"]  # the last of them
    monkeypatch.setattr(machine, "cores", lambda: [0, 1, 2])  # too few to keep one free of everything else
    assert machine.cpu_affinity("auto") == []


@pytest.mark.parametrize("given, said", [
    (["aa", "main", "--pairs", "0"], "argument --pairs: 0 is below 1"),
    (["aa", "main", "--seconds", "0"], "argument --seconds: 0.0 is not above 0"),
    (["aa", "main", "--jobs", "-1"], "argument --jobs: -1 is below 0"),
    (["compare", "main", "main", "-b", "time_launch('core'"], "is not a regular expression"),  # a pasted case name
    (["ladder", "--tags", "v0.(1"], "argument --tags: 'v0.(1' is not a regular expression"),
    (["prebuild", "--repo", ".", "main", "--parallel", "0"], "argument --parallel: 0 is below 1"),
    (["steps", "--no-such-option"], "unrecognised arguments: --no-such-option"),  # (run's go to asv run)
])
def test_options_are_checked_before_anything_runs(given, said, tmp_path):
    """A bad option is one line and exit 3 (the command could not start), never 2, which says that something
    could not be measured."""
    proc = run_module("cuda_bench", *given, "--repo", ROOT, check=False, env=dict(os.environ, HOME=str(tmp_path)))
    assert proc.returncode == ERROR and said in proc.stderr and "Traceback" not in proc.stderr


def test_each_newly_measured_commit_is_paired_with_the_previous_measured_one(tmp_path):
    """history.new_steps: after asv run, the results files that changed are the newly measured commits; each is
    paired with the commit measured just before it (commit order, same environment), and an older commit
    filled in also with the one after it; none without a neighbour."""
    folder = tmp_path / "m"
    folder.mkdir()

    def write(commit, date, env="env-a"):
        (folder / f"{commit[:8]}-{env}.json").write_text(json.dumps(
            {"commit_hash": commit, "date": date, "env_name": env, "results": {}, "result_columns": []}))

    write("a" * 40, 1)
    write("b" * 40, 2)
    write("x" * 40, 1, env="env-b")
    before = history.snapshot(tmp_path, "m")
    time.sleep(0.01)
    write("d" * 40, 4)  # measured now, after b
    write("c" * 40, 3)  # measured now, between b and d
    write("y" * 40, 2, env="env-b")
    write("z" * 40, 1, env="env-c")  # the first commit of its environment: nothing to pair with
    write("w" * 40, 0)  # an older commit filled in: paired with the one measured after it
    assert sorted(history.new_steps(tmp_path, "m", before)) == sorted([
        ("w" * 40, "a" * 40), ("b" * 40, "c" * 40), ("c" * 40, "d" * 40), ("x" * 40, "y" * 40)])
    assert history.new_steps(tmp_path, "m", history.snapshot(tmp_path, "m")) == []  # nothing new measured
    # the over-C++ measurement after a run goes to the newest newly measured commit
    assert history.newest_measured(tmp_path, "m", before) == "d" * 40
    assert history.newest_measured(tmp_path, "m", history.snapshot(tmp_path, "m")) is None


def test_steps_makes_the_steps_the_history_lacks_in_the_environments_of_its_bindings(tmp_path, git_repo,
                                                                                       monkeypatch, capsys):
    """`cuda-bench steps`: each measured commit without a paired step (one that failed, a run with --no-steps) is
    paired with the measured commit before it, in commit order, only in the environments built with --bindings
    (the engine builds both sides with one); the others are counted. A step that fails again is one line and
    exit 2, and the next one still runs; --list measures nothing."""
    folder = tmp_path / "res" / "m"
    folder.mkdir(parents=True)

    def write(commit, date, bindings, env=None):
        env = env or f"env-{bindings}"
        (folder / f"{commit[:8]}-{env}.json").write_text(json.dumps(
            {"commit_hash": commit, "date": date, "env_name": env, "results": {}, "result_columns": [],
             "env_vars": {"CUDA_BENCH_BINDINGS": bindings}}))

    for date, commit in enumerate("abcd"):
        write(commit * 40, date, "13.3.1")
    write("x" * 40, 0, "auto")
    write("y" * 40, 1, "auto")
    write("a" * 40, 0, "13.3.1", env="env-other-site")  # another environment of the same bindings: a step
    write("b" * 40, 1, "13.3.1", env="env-other-site")  # is made once
    records.append(folder, "step", step_record(base="b" * 40, head="c" * 40))
    assert history.missing_steps(tmp_path / "res", "m") == {
        "13.3.1": [("a" * 40, "b" * 40), ("c" * 40, "d" * 40)], "auto": [("x" * 40, "y" * 40)]}

    measured = []

    def measure(repo, base, head, **kw):
        measured.append((base[0], head[0], kw["bindings"]))
        raise gate.CompareError(f"{base[0]} -> {head[0]}: the base build failed")

    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(gate, "measure", measure)
    argv = ["steps", "--repo", str(git_repo), "--machine", "m", "--results-dir", str(tmp_path / "res"),
            "--bindings", "13.3.1"]
    assert cli.main([*argv, "--list"]) == 0 and measured == []
    err = capsys.readouterr().err
    assert "steps: 2 missing" in err and "1 more in environments of other bindings" in err
    assert "aaaaaaaaa -> bbbbbbbbb\n  ccccccccc -> ddddddddd" in err
    assert cli.main(argv) == 2 and measured == [("a", "b", "13.3.1"), ("c", "d", "13.3.1")]
    assert "step ccccccccc -> ddddddddd not measured: c -> d: the base build failed" in capsys.readouterr().err


def test_prebuild_fills_the_cache_for_the_bindings_run_and_compare_take(tmp_path, git_repo, monkeypatch):
    """A wheel of cuda_core is cached per cuda-bindings it was compiled against: `cuda-bench prebuild` builds with
    what run and compare take by default (asv.conf.json's: cuda_bindings from source), not another (the paired
    engine would then build every commit again); --bindings, or CUDA_BENCH_BINDINGS, names another."""
    from cuda_bench.build import environment

    asked = []
    monkeypatch.setattr(environment, "prebuild", lambda repo, revs, parallel, logs, bindings:
                        asked.append(bindings) or [{"ok": True}])
    monkeypatch.delenv("CUDA_BENCH_BINDINGS", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    base = ["prebuild", "--repo", str(git_repo), "HEAD"]
    assert cli.main(base) == 0 and cli.main([*base, "--bindings", "auto"]) == 0
    monkeypatch.setenv("CUDA_BENCH_BINDINGS", "13.3.1")
    assert cli.main(base) == 0
    monkeypatch.delenv("CUDA_BENCH_BINDINGS")
    args = cli.parser().parse_args(["compare", "a", "b", "--repo", str(git_repo)])
    assert asked == [asvrun.bindings_of(common.paired_context(args)[0]), "auto", "13.3.1"] and asked[0] == "source"


def a_repo(tmp_path):
    """A git repository with one empty commit on main."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                                                  "--allow-empty", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    return repo


def test_over_cpp_keeps_the_groups_only_when_asked(monkeypatch, capsys, tmp_path):
    """`cuda-bench over-cpp --keep-groups` hands overcpp.measure OUT/groups.json.gz (overcpp.write_groups writes
    it; tests/test_paired.py reads one back); without the flag nothing that large is written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    repo = a_repo(tmp_path)
    seen = []

    def measure(repo_, rev, **kwargs):
        seen.append(kwargs["groups_file"])
        assert kwargs["settings"].layouts == paired.OVER_CPP_LAYOUTS
        return over_cpp_record(rev=rev)

    monkeypatch.setattr(overcpp, "measure", measure)
    for extra in ([], ["--keep-groups"]):
        assert cli.main(["over-cpp", "main", "--repo", str(repo), "--no-write", "--out", str(tmp_path / "o"),
                         *extra]) == 0
    assert seen == [None, (tmp_path / "o" / "groups.json.gz").resolve()]


def test_over_cpp_of_only_the_controls_is_one_line_and_records_nothing(tmp_path, git_repo, monkeypatch, capsys):
    """The harness, and cases without a C++ twin, have nothing to be timed against: `over-cpp -b Floor` says so in
    one line (exit 3) before it builds anything, instead of starting 60 workers with nothing to do and recording
    an empty run."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(gate, "environments", lambda *a, **k: pytest.fail("built for nothing"))
    for pattern in ("Floor", "^bench_harness", "DeviceArch", "CompileOptions"):  # controls; no twin
        assert cli.main(["over-cpp", "main", "--repo", str(git_repo), "-b", pattern, "--machine", "probe",
                         "--out", str(tmp_path / "o")]) == 3
        assert "nothing to time over C++" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    # `run -b Floor` on a GPU box: its over-C++ step has nothing to time, and that is no failure
    monkeypatch.setattr(overcpp, "measure", lambda *a, **k: pytest.fail("timed nothing"))
    assert overcpp.measure_and_record(git_repo, "c" * 40, conf=asvrun.load_conf(), machine_name="probe", info={},
                                      results_dir=tmp_path, settings=paired.Settings.over_cpp(), bench=["Floor"],
                                      command="cmd") == (OK, None)
    assert "over C++: nothing to time" in capsys.readouterr().err


def test_over_cpp_without_a_gpu_writes_nothing_into_the_history(monkeypatch, capsys, tmp_path):
    """results/ holds GPU runs only: `over-cpp` (and `aa`) on a machine without one measure and print, and say
    that they write nothing there."""
    monkeypatch.setenv("HOME", str(tmp_path))
    if machine.has_gpu(machine.record("probe")[1]):
        pytest.skip("this machine has a GPU")
    repo = a_repo(tmp_path)
    monkeypatch.setattr(overcpp, "measure", lambda repo_, rev, **kw: over_cpp_record(rev=rev))
    name = f"no-gpu-probe-{os.getpid()}"
    assert cli.main(["over-cpp", "main", "--repo", str(repo), "--machine", name, "--out", str(tmp_path / "o")]) == 0
    assert not (RESULTS / name).exists()
    assert "no GPU here: the over-C++ record is not written to results/" in capsys.readouterr().err


def test_over_cpp_warns_when_the_run_it_measured_was_in_the_slow_state(tmp_path, capsys):
    """`cuda-bench over-cpp` (and run's over-C++ step) compares the run it has just measured with the recorded
    runs of the machine: the H200 run overhead-cb56ab9f9-s14-call1b (its C++ twins x1.40 slower than the
    fastest) gets a warning, written or not (--no-write); overhead-cb56ab9f9-s14-call2a, on the next machine
    start (x1.09), does not, and is read against the commit's earlier run nearest the fast state instead
    (overcpp_read.repeat_note)."""
    lines = (ROOT / "results" / "nvidia-h200" / "over-cpp.jsonl").read_text().splitlines()
    at = {"-".join(overcpp_read.run_label(json.loads(line)).rsplit("-", 2)[-2:]): k for k, line in enumerate(lines)}
    machine_dir = tmp_path / "nvidia-h200"
    machine_dir.mkdir()

    def warn(label, written):
        k = at[label]
        (machine_dir / "over-cpp.jsonl").write_text("\n".join(lines[:k + written]) + "\n")
        overcpp.judge(tmp_path, "nvidia-h200", json.loads(lines[k]), written=written)
        return capsys.readouterr().err

    assert "bench: over C++: WARNING: this run's C++ twins ran ×1.400 slower" in warn("s14-call1b", False)
    assert "run it again later" in warn("s14-call1b", True)
    assert "WARNING" not in warn("s14-call2a", False) and "WARNING" not in warn("s14-call2a", True)
    # a run not in the slow state is read against the commit's earlier run nearest the fast state, at once
    said = warn("s14-call2a", False)
    assert "bench: over C++: against overhead-cb56ab9f9-s13-call3b (the earlier run of cb56ab9f9 nearest the " \
           "fast state, ×1.00, on another machine start): 89 of 91 cases (98%) give the same ratio within 5%" in said
    assert said == warn("s14-call2a", True)


def test_a_cut_off_line_in_a_records_file_loses_no_other_record(tmp_path, capsys):
    """A .jsonl write cut off (a machine killed mid-append): the reader names the line and keeps the others,
    and the next record lands on a line of its own."""
    folder = tmp_path / "m"
    path = folder / "steps.jsonl"
    records.append(folder, "step", step_record(base="a", head="b"))
    with open(path, "a") as f:
        f.write('{"base": "b", "hea')  # cut off
    records.append(folder, "step", step_record(base="c", head="d"))
    with open(path, "ab") as f:
        f.write(b'{"base": "\xff"}\n')  # a damaged byte
    records.append(folder, "step", step_record(base="e", head="f"))
    assert len(path.read_text(errors="replace").splitlines()) == 5
    assert [(r["base"], r["head"]) for r in records.read(folder, "step")] == [("a", "b"), ("c", "d"), ("e", "f")]
    err = capsys.readouterr().err
    assert f"{path}:2: does not parse (" in err and "invalid start byte" in err.split(f"{path}:4: does not parse")[1]


def test_builds_are_recorded_whole_and_an_unreadable_build_is_named_not_a_traceback(tmp_path, capsys):
    """results/<machine>/builds.jsonl is rewritten after every asv run: rows of earlier runs stay, a build
    record that does not parse is named and left out, the others are recorded."""
    def build(commit, **more):
        return {"commit": commit, "ok": True, "bindings": "13.3.1", "packages": {}, "seconds": 1.0, **more}

    envs = tmp_path / "env"
    for env, commit in (("env-a", "a" * 40), ("env-b", "b" * 40)):
        wheels = envs / env / "asv-build-cache" / "key" / "wheels"
        wheels.mkdir(parents=True)
        (wheels / "build.json").write_text(json.dumps(build(commit)))
    (envs / "env-b" / "asv-build-cache" / "key" / "wheels" / "build.json").write_text('{"commit": "bbb')
    folder = tmp_path / "res" / "m"
    records.append(folder, "build", build("c" * 40, env="env-c"))  # an earlier run's
    config = tmp_path / "conf.json"
    config.write_text(json.dumps({"env_dir": str(envs), "results_dir": str(tmp_path / "res")}))
    asvrun.record_builds("m", config)
    rows = records.read(folder, "build")
    assert [(r["commit"][0], r["env"]) for r in rows] == [("c", "env-c"), ("a", "env-a")]
    assert "env-b/asv-build-cache/key/wheels: Unterminated string" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["builds.jsonl"]


def test_recheck_measures_again_on_another_start_only_the_flags_no_second_start_has_seen(tmp_path, git_repo,
                                                                                           monkeypatch, capsys):
    """`cuda-bench steps --recheck`: a regression flagged on one machine start only is measured again (its case
    and the harness, in the cuda-bindings its step was measured with), unless this is the start that flagged it
    with a layout per process; one flagged with one fixed layout per build is measured again on any start, its
    own included (the recheck has a layout per process, and `--layouts fixed` is refused); confirmed and
    not-reproduced flags are left alone, and a case the suite no longer has is named and skipped. A recheck that
    cannot be measured is one line that names the command to run later, and exit 2; one that is measured joins
    its step and says how the flag stands."""
    folder = tmp_path / "res" / "m"
    folder.mkdir(parents=True)
    slow = "bench_program.ProgramOptionsCreate.time_program_options_create('core')"
    other = "bench_device.SetCurrent.time_set_current('core')"
    gone = "bench_gone.Gone.time_gone('core')"

    def step(base, head, start, verdicts, layouts="random", bindings="13.3.1"):
        records.append(folder, "step", step_record(
            base=base * 40, head=head * 40, host={"start": start, "boot": f"2026-12-0{start}T00:00:00Z"},
            date=f"2026-12-0{start}T01:00:00Z", settings={"layouts": layouts, "confidence": 0.95, "cores": [1]},
            versions={"base": {"cuda-bindings": "13.3.1"}, "head": {"cuda-bindings": "13.3.1"}}, bindings=bindings,
            cases=[step_case(n, 1.05, v) for n, v in verdicts.items()]))

    step("a", "b", "1", {slow: "regression", other: "same", gone: "regression"})  # gone: named
    step("b", "c", "1", {slow: "regression"}, bindings="source")  # built from source
    step("c", "d", "1", {slow: "regression"}, bindings="auto")  # across CUDA 12/13
    step("d", "e", "1", {slow: "regression"}, bindings="12.9.10")
    step("e", "f", "1", {slow: "regression"})  # confirmed below
    step("e", "f", "2", {slow: "regression"})
    step("f", "g", "1", {slow: "regression"}, layouts="fixed")  # not reproduced below
    step("f", "g", "2", {slow: "same"}, layouts="fixed")
    step("g", "h", "1", {slow: "regression"}, layouts="fixed")  # two starts, one fixed layout
    step("g", "h", "2", {slow: "regression"}, layouts="fixed")
    step("h", "i", "1", {slow: "regression"}, layouts="fixed")  # one start, one fixed layout: measured again there too
    measured = []

    def failing(repo, base, head, **kw):
        assert kw["settings"].layouts == "random"
        measured.append((base[0], head[0], kw["bindings"], kw["bench"]))
        raise gate.CompareError("the build failed")

    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(gate, "measure", failing)
    argv = ["steps", "--recheck", "--repo", str(git_repo), "--machine", "m", "--results-dir", str(tmp_path / "res")]
    monkeypatch.setattr(machine, "host", lambda: {"start": "1", "boot": "2026-12-01T00:00:00Z", "boot_id": "1"})
    bench = [f"^{re.escape(slow)}$", r"^bench_harness\.Floor\.time_noop\("]
    assert cli.main(argv) == 2  # the start that flagged them cannot confirm them; a fixed layout's flags wait not
    assert measured == [("g", "h", "13.3.1", bench), ("h", "i", "13.3.1", bench)]
    measured.clear()
    err = capsys.readouterr().err
    assert "2 regression(s) in 2 step(s)" in err and "5 more flagged on this machine start" in err
    assert cli.main([*argv, "--layouts", "fixed"]) == 3 and measured == []
    assert "could not confirm or clear a flag made with one" in capsys.readouterr().err
    assert cli.main([*argv, "--bindings", "13.3.1"]) == 3
    assert "takes no --bench or --bindings" in capsys.readouterr().err
    monkeypatch.setattr(machine, "host", lambda: {"start": None, "boot": None, "boot_id": None})
    assert cli.main(argv) == 3 and "does not say which start it is on" in capsys.readouterr().err

    monkeypatch.setattr(machine, "host", lambda: {"start": "3", "boot": "2026-12-03T00:00:00Z", "boot_id": "3"})
    assert cli.main([*argv, "--list"]) == 0 and measured == []
    err = capsys.readouterr().err
    assert "6 regression(s) in 6 step(s)" in err and f"aaaaaaaaa -> bbbbbbbbb {gone} is not in the suite" in err
    assert cli.main(argv) == 2
    assert measured == [("a", "b", "13.3.1", bench), ("b", "c", "source", bench), ("c", "d", "auto", bench),
                        ("d", "e", "12.9.10", bench), ("g", "h", "13.3.1", bench), ("h", "i", "13.3.1", bench)]
    assert re.search(bench[0], slow) and not re.search(bench[0], other)
    assert (f"step bbbbbbbbb -> ccccccccc not measured: the build failed (`cuda-bench steps --recheck --repo "
            f"{git_repo} --machine m --results-dir {tmp_path / 'res'}` makes it later)") in capsys.readouterr().err

    # measured: the H200's recheck of ProgramOptionsCreate('core') in results/ (a real run of that case and the
    # harness) joins the first step
    recorded = read_lines(ROOT / "results" / "nvidia-h200" / "steps.jsonl")
    (real,) = [r for r in recorded if "--recheck" in (r["command"] or "") and r["head"].startswith("c278ecb3d")]
    # and g -> h, flagged on two starts with one fixed layout, flagged again here with a layout per process
    last = []

    def summary(report, kind, expected, built, command, info, sides=None):
        base, head = last[-1]
        record = dict(real, base=base, head=head, host={"start": "3", "boot": "2026-12-03T00:00:00Z"},
                      command=command, settings=dict(real["settings"], layouts="random", aslr_off=False))
        if base[0] == "g":
            record["cases"] = [dict(c, ratio=1.05, low=1.04, high=1.06, verdict="regression") if c["name"] == slow
                               else c for c in real["cases"]]
        return record

    def measure(repo, base, head, **kw):
        if base[0] not in "ag":
            failing(repo, base, head, **kw)
        last.append((base, head))
        return None, 60.0

    monkeypatch.setattr(summaries, "summary", summary)
    monkeypatch.setattr(summaries, "write", lambda out, data: None)
    monkeypatch.setattr(gate, "measure", measure)
    assert cli.main(argv) == 1  # g -> h confirmed: a regression outranks the four that still fail to build
    err = capsys.readouterr().err
    assert (f"aaaaaaaaa -> bbbbbbbbb {slow}: not reproduced: ×1.050 [1.040, 1.060] regression (start "
            "2026-12-01T00:00); ×0.999 [0.993, 1.004] same (start 2026-12-03T00:00)") in err
    # the log line says how the flag stands, and that the code its calls run is the same version on both sides
    assert (f"ggggggggg -> hhhhhhhhh {slow}: regression (confirmed on 3 machine starts; cuda-bindings 13.3.1 on "
            "both sides): ×1.050 [1.040, 1.060] regression (start 2026-12-01T00:00); ×1.050 [1.040, 1.060] "
            "regression (start 2026-12-02T00:00); ×1.050 [1.040, 1.060] regression (start 2026-12-03T00:00)") in err
    (first,) = [s for s in history.steps(tmp_path / "res", "m") if s["head"] == "b" * 40]
    assert "--recheck" in first["rechecks"][0]["command"] and first["bindings"] == "13.3.1"
    assert len(read_lines(folder / "steps.jsonl")) == 13


def test_a_step_between_two_release_tags_says_so_in_its_record(tmp_path, git_repo, monkeypatch):
    """`cuda-bench steps` records the release tags of a step's two commits (the release ladder's steps, which
    the nightly issue about main leaves out: history.release_step), and None for any other step."""
    from conftest import git

    commits = []
    for tag in ("cuda-core-v0.1.0", "cuda-core-v0.1.1", None):
        (git_repo / "README").write_text(f"{tag}\n")
        git(git_repo, "commit", "-qam", str(tag))
        if tag:
            git(git_repo, "tag", tag)
        commits.append(git(git_repo, "rev-parse", "HEAD").strip())
    folder = tmp_path / "res" / "m"
    folder.mkdir(parents=True)
    for date, commit in enumerate(commits):
        (folder / f"{commit[:8]}-env.json").write_text(json.dumps(
            {"commit_hash": commit, "date": date, "env_name": "env", "results": {}, "result_columns": [],
             "env_vars": {"CUDA_BENCH_BINDINGS": "auto"}}))
    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(gate, "measure", lambda repo, base, head, **kw: ((base, head), 1.0))
    monkeypatch.setattr(summaries, "summary", lambda report, *args: step_record(base=report[0], head=report[1]))
    monkeypatch.setattr(summaries, "write", lambda out, data: None)
    assert cli.main(["steps", "--repo", str(git_repo), "--machine", "m", "--results-dir", str(tmp_path / "res"),
                     "--bindings", "auto"]) == 0
    first, second = records.read(folder, "step")
    assert first["release_tags"] == ["cuda-core-v0.1.0", "cuda-core-v0.1.1"] and history.release_step(first)
    assert second["release_tags"] is None and not history.release_step(second)
    assert first["bindings"] == second["bindings"] == "auto"


@pytest.mark.parametrize("spec", ["mian", "deadbeef^!"])
def test_run_checks_its_revisions_before_it_builds_anything(tmp_path, git_repo, monkeypatch, capsys, spec):
    """`cuda-bench run mian` (a typo) or a SHA the clone lacks says in one line that it names no commit and
    exits 3, before asv builds or measures anything (no traceback, no "pairing and publishing")."""
    monkeypatch.setenv("HOME", str(tmp_path))
    a_gpu_here(monkeypatch)
    monkeypatch.setattr(asvrun, "asv", lambda *args, **kw: pytest.fail(f"asv ran: {args}"))
    assert cli.main(["run", spec, "--repo", str(git_repo), "--machine", "m", "--results-dir", str(tmp_path / "res"),
                     "--no-publish"]) == 3
    err = capsys.readouterr().err
    assert f"{spec!r} names no commit of {git_repo}" in err
    assert "Traceback" not in err and "pairing" not in err
    assert not (tmp_path / "res").exists()


def test_a_step_measured_but_not_recorded_is_kept_and_said(tmp_path, git_repo, monkeypatch, capsys):
    """A step measured while results/ cannot take its record (read-only, full) is not lost: its summary is
    written to the step's folder first, the command says "measured, not recorded" and where the record is, and
    the exit status is 2 (incomplete), not 0."""
    from cuda_bench.compare import steps

    monkeypatch.setattr(steps, "WORK", tmp_path / "work")
    data = paired_run("release-v0.3.1-v0.3.2")  # a step measured on the H200
    monkeypatch.setattr(gate, "measure", lambda repo, base, head, **kw: ((base, head), 60.0))
    monkeypatch.setattr(summaries, "summary", lambda report, *args: data)
    folder = tmp_path / "res" / "m"
    (folder / records.FILES["step"]).mkdir(parents=True)  # a steps.jsonl that cannot be appended to
    status = steps.make([steps.Step("a" * 40, "b" * 40, "13.3.1")], conf={"repo": str(git_repo)}, machine_name="m",
                        info={}, results_dir=tmp_path / "res", settings=None, command="cuda-bench steps",
                        later="cuda-bench steps")
    assert status == INCOMPLETE
    kept = tmp_path / "work" / "steps" / f"{'a' * 12}-{'b' * 12}" / "summary.json"
    err = capsys.readouterr().err
    assert f"measured, not recorded in {folder / records.FILES['step']}" in err and f"its record is in {kept}" in err
    assert json.loads(kept.read_text())["cases"] == data["cases"]


@pytest.mark.parametrize("code, status", [(0, 0), (None, 0), (3, 3), ("asv: nothing to remove", 1)])
def test_an_asv_command_that_exits_keeps_its_exit_status(tmp_path, code, status, capsys):
    """An asv command wrapped by the plugin that calls sys.exit (asv rm when the user declines: 0) exits as it
    asked; a message is said, with exit status 1, as Python gives it."""
    class Rm:
        @classmethod
        def run_from_conf_args(cls, conf, args):
            sys.exit(code)

    asv_plugin.wrap(Rm)
    conf = SimpleNamespace(repo=str(tmp_path), results_dir=str(tmp_path / "results"), env_dir=str(tmp_path / "env"))
    assert Rm.run_from_conf_args(conf, SimpleNamespace()) == status
    assert (str(code) in capsys.readouterr().err) == isinstance(code, str)
