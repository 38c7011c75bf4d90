"""Shared fixtures: real virtual environments with real cuda-core releases from PyPI, and real git repos.

Environments are cached under ``.asv/test-envs`` (``CUDA_BENCH_TEST_ENVS`` to move them), keyed by their
requirements, so a second test run reuses them; pip's cache is there too (unless ``PIP_CACHE_DIR`` names one).

The tests run with a home folder of their own (:data:`TEST_HOME`, removed when they end): ``HOME``, the XDG
folders and npm's cache point into it, so chromium, Playwright, pip, ccache and the wheel cache write there and
never into yours (:data:`REAL_HOME`, which the last test checks is as it was).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENVS = Path(os.environ.get("CUDA_BENCH_TEST_ENVS", ROOT / ".asv" / "test-envs"))


def own_home():
    """(the home folder the tests were started with, a new one for them): set before anything reads ``HOME``
    (``cuda_bench.foundations.paths`` reads it on import), for this process and every one it starts."""
    real = Path.home()
    home = Path(tempfile.mkdtemp(prefix="cuda-bench-tests-home-"))
    os.environ.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                      XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local" / "share"),
                      XDG_STATE_HOME=str(home / ".local" / "state"), npm_config_cache=str(home / ".npm"))
    os.environ.setdefault("PIP_CACHE_DIR", str(ENVS / "pip-cache"))
    for who in ("AUTHOR", "COMMITTER"):  # the commits tests make need a name: none is configured in a new home
        os.environ.setdefault(f"GIT_{who}_NAME", "cuda-python-bench tests")
        os.environ.setdefault(f"GIT_{who}_EMAIL", "tests@cuda-python-bench.invalid")
    return real, home


REAL_HOME, TEST_HOME = own_home()
sys.path.insert(0, str(ROOT))  # the cuda_bench package
from cuda_bench.foundations.paths import OVER_CPP, STEPS, machine_dirs, result_files  # noqa: E402

#: what every benchmark environment needs besides cuda-core (asv_runner pinned as in asv.conf.json)
RUNNER = ["asv_runner==0.2.5", "pympler", "numpy"]

#: the cuda-core releases the suite must resolve against, and how each one installs.
#: 0.1-0.3.0 only exist for CUDA 12; 0.1.1 still imports cuda.cuda, which cuda-python 12.x provides.
RELEASES = {
    "0.1.1": ["cuda-core==0.1.1", "cuda-python==12.9.*"],
    "0.2.0": ["cuda-core==0.2.0", "cuda-bindings==12.9.*"],
    "0.3.2": ["cuda-core==0.3.2", "cuda-bindings==13.*"],
    "0.4.2": ["cuda-core==0.4.2", "cuda-bindings==13.*"],
    "0.5.1": ["cuda-core==0.5.1", "cuda-bindings==13.*"],
    "0.7.0": ["cuda-core==0.7.0", "cuda-bindings==13.*"],
    "1.0.1": ["cuda-core==1.0.1", "cuda-bindings==13.*"],
    "1.2.2": ["cuda-core==1.2.2", "cuda-bindings==13.*"],
}
NEWEST = "1.2.2"
#: the newest release with NVRTC, for running the GPU-free benchmarks for real
NEWEST_WITH_NVRTC = [f"cuda-core[cu13]=={NEWEST}"]


def aslr_can_be_switched_off():
    """Whether this kernel lets a process start with address-space randomisation off, probed here with
    util-linux's setarch itself (not through cuda_bench.foundations.machine, whose probe the tests check)."""
    import platform
    import shutil

    if not shutil.which("setarch"):
        return False
    return subprocess.run(["setarch", platform.machine(), "-R", "true"], capture_output=True).returncode == 0


def make_env(requirements):
    """A venv with ``requirements`` installed; returns its python. Cached by the requirement list."""
    key = hashlib.sha256(json.dumps(sorted(requirements)).encode()).hexdigest()[:12]
    path = ENVS / key
    python = path / "bin" / "python"
    done = path / "requirements.json"
    if not done.exists():
        venv.create(path, with_pip=True, clear=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
            check=True,
        )
        done.write_text(json.dumps(requirements))
    return python


@pytest.fixture(scope="session")
def newest_env():
    return make_env(NEWEST_WITH_NVRTC + RUNNER)


def as_a_terminal_starts_it():
    """``preexec_fn`` for a command a test interrupts with Ctrl-C: SIGINT as a terminal's foreground job has it
    (a test run started in the background, as ``nohup ... &``, passes SIGINT on ignored)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ctrl_c_when(marker, cmd, wait=300, **popen):
    """``cmd`` started as a terminal starts a command (a session of its own, SIGINT as it gives it), Ctrl-C to its
    whole group once ``marker`` exists (the command reached what the test interrupts), and at most 60 s for it to
    stop; whatever happens, nothing of it stays. (exit status, stdout, stderr, seconds it took to stop)."""
    import os
    import signal
    import time

    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=as_a_terminal_starts_it, **popen)
    try:
        deadline = time.monotonic() + wait
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), proc.communicate()[1][-3000:] if proc.poll() is not None else f"not there in {wait} s"
        sent = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        return proc.returncode, out, err, time.monotonic() - sent
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def with_a_gpu(monkeypatch):
    """This machine as nvidia-smi would describe one with a GPU, for a command whose measurement a test has
    replaced: without one, window and bisect stop before anything is built."""
    from cuda_bench.foundations import machine

    monkeypatch.setattr(machine, "gpu_info", lambda: {"gpu": "NVIDIA H200", "gpu_count": "1", "gpu_cc": "9.0",
                                                      "driver": "575.57.08", "cuda_driver": "12.9"})


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def git_repo(tmp_path):
    """A real git repository with one commit (asv needs a repository to attach results to)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    (repo / "README").write_text("x\n")
    git(repo, "add", "README")
    git(repo, "commit", "-qm", "init")
    return repo


def asv_conf(tmp_path, repo, python, **overrides):
    """The project's asv.conf.json, pointed at ``repo`` and an existing environment, paths in tmp_path."""
    import json5

    conf = json5.loads((ROOT / "asv.conf.json").read_text())
    conf.update(
        repo=str(repo),
        benchmark_dir=str(ROOT / "benchmarks"),
        env_dir=str(tmp_path / "env"),
        results_dir=str(tmp_path / "results"),
        html_dir=str(tmp_path / "html"),
        environment_type="existing",
        pythons=[str(python)],
        matrix={},
    )
    conf.update(overrides)
    path = tmp_path / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=1))
    return path


def real_results_in_a_repo(tmp, results_dir=None):
    """(repo, results) where asv can read the committed H200 results: CUDA_BENCH_REPO (a cuda-python clone
    with their commits) and results/ as they are; otherwise a throwaway repository with one commit per
    results commit, in the same order, and a copy of results/ re-keyed onto those commits (every number
    kept). CI has no copy of cuda-python, and asv needs the commits in a repository."""
    import shutil

    source = Path(results_dir or ROOT / "results")
    if os.environ.get("CUDA_BENCH_REPO"):
        results = tmp / "results"  # a copy: tests write steps next to the results
        shutil.copytree(source, results)
        return Path(os.environ["CUDA_BENCH_REPO"]), results, {}
    repo, results = tmp / "repo", tmp / "results"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = [p for m in machine_dirs(source) for p in result_files(m)]
    files.sort(key=lambda p: json.loads(p.read_text())["date"])
    commits = {}
    for path in files:
        data = json.loads(path.read_text())
        if data["commit_hash"] not in commits:
            (repo / "n").write_text(data["commit_hash"])
            git(repo, "add", "n")
            git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", data["commit_hash"])
            commits[data["commit_hash"]] = git(repo, "rev-parse", "HEAD")
        new = commits[data["commit_hash"]]
        data["commit_hash"] = new
        target = results / path.parent.name / (new[:8] + path.name[8:])
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path.parent / "machine.json", target.parent / "machine.json")
        target.write_text(json.dumps(data))
    shutil.copy2(source / "benchmarks.json", results / "benchmarks.json")
    for machine in machine_dirs(source):  # the paired over-C++ records of those commits, re-keyed the same way
        records = [json.loads(line) for line in (machine / OVER_CPP).read_text().splitlines()] \
            if (machine / OVER_CPP).exists() else []
        (results / machine.name / OVER_CPP).write_text("".join(
            json.dumps({**r, "commit": commits[r["commit"]]}) + "\n" for r in records if r["commit"] in commits))
        steps = [json.loads(line) for line in (machine / STEPS).read_text().splitlines()] \
            if (machine / STEPS).exists() else []  # and the paired steps between them
        (results / machine.name / STEPS).write_text("".join(
            json.dumps({**r, "base": commits[r["base"]], "head": commits[r["head"]]}) + "\n"
            for r in steps if r["base"] in commits and r["head"] in commits))
    return repo, results, commits


def asv_results(path):
    """{(benchmark, (param, ...)): value} of one asv results file, params without asv's quotes."""
    data = json.loads(Path(path).read_text())
    out = {}
    for name, row in data["results"].items():
        entry = dict(zip(data["result_columns"], row, strict=False))
        params = entry.get("params") or []
        values = entry["result"] if params else [entry["result"]]
        for combo, value in zip(itertools.product(*params), values, strict=False):
            out[(name, tuple(p.strip("'") for p in combo))] = value
    return out


def run_module(module, *args, check=True, env=None, python=sys.executable, cwd=ROOT):
    """``python -m module args`` with the project importable, as scripts/bench runs it."""
    full_env = dict(os.environ if env is None else env)
    full_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [full_env.get("PYTHONPATH")])])
    proc = subprocess.run([str(python), "-m", module, *map(str, args)], capture_output=True, text=True, env=full_env,
                          cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"{module} {args} exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def asv_env(home):
    """The environment of an asv command in a test: its machine file (``~/.asv-machine.json``) in ``home``, pip's
    cache the tests' own (``PIP_CACHE_DIR``)."""
    Path(home).mkdir(parents=True, exist_ok=True)
    return dict(os.environ, HOME=str(home))


def run_asv(conf, *args, check=True):
    proc = subprocess.run(
        [sys.executable, "-m", "asv", *args, "--config", str(conf)],
        capture_output=True, text=True, cwd=conf.parent, env=asv_env(conf.parent / "home"),
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"asv {' '.join(args)} exited {proc.returncode}:\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-4000:]}")
    return proc


def read_lines(path):
    """The parsed lines of a ``.jsonl`` file (records.lines, without the line numbers)."""
    from cuda_bench.results import records

    return [found for _, found in records.lines(path)]


def paired_run(name):
    """A paired run from the H200 (its summary.json), kept as a fixture: fixtures/paired/NAME.json."""
    return json.loads((Path(__file__).parent / "fixtures" / "paired" / f"{name}.json").read_text())


# --- whole records, built by hand -------------------------------------------------------------------------------
def step_case(name, ratio=1.0, verdict="same", **overrides):
    """One case of a step record (``records.STEP_CASE``): ``ratio`` with the interval 0.01 either side of it, a 1%
    threshold, 100 ns on the base side; ``overrides`` replace fields."""
    from cuda_bench.foundations.names import is_control

    return {"name": name, "ratio": ratio, "low": ratio - 0.01, "high": ratio + 0.01, "verdict": verdict,
            "threshold": 0.01, "coverage": 0.95, "pairs": [], "base_ns": 100.0, "head_ns": 100.0 * ratio,
            "groups": 100, "calls_per_sample": 1, "control": is_control(name)} | overrides


def step_record(**overrides):
    """A whole step record (``records.SHAPES["step"]``, not yet stamped): the step a... -> b... measured on machine
    start "1" with a layout per process, in cuda-bindings 13.3.1, nothing measured; ``overrides`` replace fields
    (``host`` and ``settings`` whole)."""
    record = {"kind": "step", "base": "a" * 40, "head": "b" * 40, "date": "2026-12-04T12:00:00Z", "seconds": 60.0,
              "build_seconds": 0.0, "command": None, "machine": {},
              "host": {"start": "1", "boot": "2026-12-04T00:00:00Z"},
              "settings": {"layouts": "random", "confidence": 0.95, "cores": [1]},
              "versions": {"base": {}, "head": {}}, "cases": [], "skipped": {}, "only": {}, "errors": {}, "lost": {},
              "expected": [], "env": {}, "bindings": "13.3.1", "release_tags": None} | overrides
    return {"base_rev": record["base"], "head_rev": record["head"]} | record


def over_cpp_case(name, ratio=2.0, **overrides):
    """One case of an over-C++ record (``records.OVER_CPP_CASE``): ``ratio`` with the interval 0.05 either side of
    it over a 100 ns C++ twin, no benchmark version; ``overrides`` replace fields."""
    cpp_ns = overrides.get("cpp_ns", 100.0)
    return {"name": name, "twin": "x", "ratio": ratio, "low": ratio - 0.05, "high": ratio + 0.05, "coverage": 0.95,
            "over_ns": (ratio - 1) * cpp_ns, "over_low": (ratio - 1.05) * cpp_ns, "over_high": (ratio - 0.95) * cpp_ns,
            "py_ns": ratio * cpp_ns, "cpp_ns": cpp_ns, "processes": 60, "groups": 1000, "version": None,
            "fast": None} | overrides


def over_cpp_record(**overrides):
    """A whole over-C++ record (``records.SHAPES["over-cpp"]``, not yet stamped), by default what
    ``records.upgrade`` makes of a record that does not say: no twins named, one fixed layout, ratios over all
    processes, no machine start; at commit c..., nothing measured. ``overrides`` replace fields (``host`` and
    ``settings`` whole)."""
    return {"kind": "over-cpp", "commit": "c" * 40, "rev": "main", "date": "2026-12-04T12:00:00Z", "seconds": 60.0,
            "build_seconds": 0.0, "command": None, "machine": {}, "host": {"start": None, "boot": None},
            "settings": {"layouts": "fixed", "state": "all", "processes": 60, "confidence": 0.95},
            "versions": None, "twins": None, "cases": [], "skipped": {}, "errors": {}, "lost": {}} | overrides


def write_records(folder, kind, found):
    """``found`` (records of type ``kind``) as the lines of their file in ``folder``, stamped (``records.stamped``)
    and checked as ``records.append`` checks them; the file is written anew."""
    from cuda_bench.results import records

    path = Path(folder) / records.FILES[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(records.check(records.stamped(r, kind), kind)) + "\n" for r in found))
    return path


# --- the tests leave nothing behind --------------------------------------------------------------------
#: what tests may add to the checkout: caches of their own environments, of what the suite says (``calls.suite_said``)
#: and of Python's tools
MAY_CHANGE = (".asv/test-envs", ".asv/suite-said.json", ".pytest_cache", ".ruff_cache", "__pycache__")


def what_is_here():
    """What the tests must leave as they found it: the checkout's changed and untracked files (git), the files in
    .asv/ and html/ (ignored), the entries of the home folder the tests were started with (:data:`REAL_HOME`) and
    asv's machine file there."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                            capture_output=True, text=True).stdout.splitlines()

    def files(folder, depth):
        base = ROOT / folder
        return {str(p.relative_to(ROOT)) for p in base.glob("/".join(["*"] * depth))} if base.is_dir() else set()

    work = {p for d in (1, 2) for p in files(".asv", d) if not p.startswith(MAY_CHANGE)}
    home = REAL_HOME
    machine_file = home / ".asv-machine.json"
    return {"git status": sorted(s for s in status if not any(k in s for k in MAY_CHANGE)),
            ".asv/": sorted(work), "html/": sorted(files("html", 1)),
            "$HOME": sorted(p.name for p in home.iterdir()),
            "~/.asv-machine.json": machine_file.read_text() if machine_file.exists() else None}


@pytest.fixture(scope="session", autouse=True)
def leaves_nothing_behind():
    """Every test writes into its own temporary folders: the checkout and $HOME are as they were when the tests end
    (a test that writes there fails the last test's teardown, with what it left). The tests' own home goes."""
    import shutil

    before = what_is_here()
    yield
    shutil.rmtree(TEST_HOME, ignore_errors=True)
    after = what_is_here()
    changed = {key: {"added": sorted(set(after[key] or []) - set(before[key] or [])),
                     "gone": sorted(set(before[key] or []) - set(after[key] or []))}
               if isinstance(after[key], list) else {"was": before[key], "now": after[key]}
               for key in after if after[key] != before[key]}
    assert not changed, f"the tests left these behind: {changed}"
