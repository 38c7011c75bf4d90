"""Run the suite with asv and publish the dashboard: the project's main command.

    scripts/bench run                      # newest commit of cuda-python main, then publish html/
    scripts/bench run HEAD~20..HEAD        # any asv range (commits of cuda-python)
    scripts/bench run --repo ~/cuda-python --bindings source HEAD^!
    scripts/bench publish [--repo PATH]    # html/ from results/: asv's pages, self-contained, + overview
    scripts/bench serve                    # serve html/ on http://127.0.0.1:8080
    scripts/bench ladder [--repo PATH]     # every cuda-core-v* release and main's head (asv HASHFILE:)
    scripts/bench ladder --tags 'v0[.]5[.]1$|^main$'   # only the names that match
    scripts/bench compare BASE HEAD        # asv continuous + the PR comment (scripts/compare.py)
    scripts/bench aa [--runs 3] COMMIT     # A/A: one commit N times, each into its own results dir
    scripts/bench machine                  # record this machine (GPU, driver, CPU) for asv

Options that change asv.conf.json for this run only (a derived config, ``.asv/asv.conf.local.json``):

``--repo PATH``         a local clone or fork of cuda-python instead of GitHub
``--bindings VERSION``  take this cuda-bindings wheel (``source``: build it from each commit)
``--system-site DIR``   reuse CuPy and numpy from DIR (a GPU box with no network); drops them from
                        the environment matrix
``--machine NAME``      asv machine name (default: named after the GPU, e.g. ``nvidia-h200``)
``--results-dir DIR``   write asv's results there instead of ``results/`` (measurements kept apart)
``--cpu-affinity LIST`` pin the benchmark processes (asv ``--cpu-affinity``); default ``auto``: the last
                        core on a machine with 4 or more, nothing on smaller ones; ``none`` to switch off
``--clock wall|reference``  the samples' clock (benchmarks/_clock.py). ``wall`` (default): asv's own
                        timer. ``reference``: wall time scaled to the machine's full speed by a reference
                        body timed around each sample; needs the machine's ``reference_ns`` in
                        asv.conf.json (``scripts/noise_probe.py --timeline 10 --write-reference MACHINE``).
                        Results of the two clocks are separate asv versions of each benchmark: keep one clock
                        per results directory (docs/measurement.md says which to choose)

Every timed asv command also runs with address-space randomisation off (``setarch -R``, where the kernel
allows it) and ``PYTHONHASHSEED=0``: each asv run otherwise gets its own memory layout, and 100-ns calls
move with it from run to run (docs/measurement.md).

Everything after the options goes to ``asv run`` unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "asv.conf.json"
LOCAL_CONF = ROOT / ".asv" / "asv.conf.local.json"


def fail(message):
    print(f"bench: {message}", file=sys.stderr)
    sys.exit(2)


def load_conf():
    import json5  # asv's own config reader; the file has comments

    return json5.loads(CONF.read_text())


def rewrite_conf_block(conf_path, key, update, indent=None):
    """Replace the flat JSON object under ``key`` in asv.conf.json with ``update(its text)`` (a dict). The file
    has comments, so it is edited as text; ValueError unless it holds exactly one such object."""
    text = Path(conf_path).read_text()
    found = list(re.finditer(rf'"{re.escape(key)}"\s*:\s*(\{{[^{{}}]*\}})', text))
    if len(found) != 1:
        raise ValueError(f"{conf_path}: no single {key} block to replace")
    match = found[0]
    rendered = json.dumps(update(match.group(1)), indent=indent)
    if indent:
        rendered = rendered.replace("\n", "\n    ")  # the block sits one level into the file
    Path(conf_path).write_text(text[:match.start(1)] + rendered + text[match.end(1):])


def derived_conf(args):
    """asv.conf.json with this run's overrides, written next to it so relative paths still hold."""
    conf = load_conf()
    if getattr(args, "repo", None):
        repo = Path(args.repo).expanduser().resolve()
        if not (repo / ".git").exists() and not (repo / "HEAD").exists():
            fail(f"--repo {repo} is not a git repository")
        conf["repo"] = str(repo)
    matrix = conf.setdefault("matrix", {})
    env = matrix.setdefault("env", {})
    if getattr(args, "bindings", None):
        env["CUDA_BENCH_BINDINGS"] = [args.bindings]
    if getattr(args, "results_dir", None):
        conf["results_dir"] = str(Path(args.results_dir).resolve())
    if getattr(args, "system_site", None):
        site = Path(args.system_site).resolve()
        if not site.is_dir():
            fail(f"--system-site {site} is not a directory")
        env["CUDA_BENCH_SYSTEM_SITE"] = [str(site)]
        for name in ("numpy", "cupy-cuda13x", "cupy-cuda12x"):
            matrix.get("req", {}).pop(name, None)
    # paths in the derived file must mean what they mean in asv.conf.json, which sits in ROOT
    for key in ("env_dir", "results_dir", "html_dir", "benchmark_dir"):  # an absolute one stays as it is
        conf[key] = str((ROOT / conf[key]).resolve())
    for key in ("build_command", "install_command", "uninstall_command"):
        conf[key] = [cmd.replace("{conf_dir}", str(ROOT)) for cmd in conf.get(key, [])]
    LOCAL_CONF.parent.mkdir(parents=True, exist_ok=True)
    LOCAL_CONF.write_text(json.dumps(conf, indent=1))
    return LOCAL_CONF


def gpu_info():
    """GPU fields for asv's machine file (it has none): from nvidia-smi, when there is one."""
    if not shutil.which("nvidia-smi"):
        return {}
    query = "name,driver_version,compute_cap,memory.total,count"
    try:
        rows = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
            capture_output=True, text=True, check=True, timeout=60,
        ).stdout.strip().splitlines()
        header = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=60).stdout
    except (subprocess.SubprocessError, OSError) as exc:
        print(f"bench: nvidia-smi failed ({exc}); recording no GPU", file=sys.stderr)
        return {}
    if not rows:
        return {}
    name, driver, cc, memory, count = [field.strip() for field in rows[0].split(",")]
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", header)
    return {
        "gpu": name,
        "gpu_count": count,
        "gpu_cc": cc,
        "gpu_memory": memory,
        "driver": driver,
        "cuda_driver": cuda.group(1) if cuda else "",
    }


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def default_machine_name(gpu):
    if gpu:
        return re.sub(r"[^a-z0-9]+", "-", gpu["gpu"].lower()).strip("-")
    return f"cpu-{socket.gethostname()}"


def record_machine(name=None):
    """Write this machine into asv's machine file, GPU fields included; asv copies them into results."""
    from asv.machine import Machine, MachineCollection

    gpu = gpu_info()
    name = name or default_machine_name(gpu)
    info = Machine.get_defaults()
    info.update(machine=name, cpu=cpu_model(), num_cpu=str(os.cpu_count()), **gpu)
    MachineCollection.save(name, info)
    print("bench: machine " + ", ".join(f"{k}={v}" for k, v in info.items()), file=sys.stderr)
    return name


def record_builds(machine, conf_path):
    """Keep what each commit was built from (package versions, bindings source, build times) next to the
    results: ``results/<machine>/builds.jsonl``, one line per commit and environment (asv reads only
    ``*.json`` there, so the file travels with the results without confusing asv)."""
    conf = json.loads(Path(conf_path).read_text())
    env_dir, results = Path(conf["env_dir"]), Path(conf["results_dir"]) / machine
    path = results / "builds.jsonl"
    seen = {}
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            seen[(row["commit"], row["env"])] = row
    for build in env_dir.glob("*/asv-build-cache/*/wheels/build.json"):
        row = json.loads(build.read_text())
        installed = build.with_name("installed.json")
        if installed.exists():
            row["installed"] = json.loads(installed.read_text())
        env_path = build.parents[3]
        info = env_path / "asv-env-info.json"
        if info.exists():
            info = json.loads(info.read_text())
            row.update(python=info.get("python"), env_vars=info.get("build_env_vars"))
        row["env"] = env_path.name
        seen[(row["commit"], row["env"])] = row
    if seen:
        results.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in seen.values()))


def release_ladder(repo, branch="main"):
    """The commits of every cuda-core release tag (no release candidates), oldest first, then the
    branch head: what `asv run HASHFILE:` should run to show latency across releases."""
    refs = subprocess.run(["git", "ls-remote", repo, "refs/tags/cuda-core-v*", f"refs/heads/{branch}"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    tags, head = {}, None
    for line in refs:
        sha, ref = line.split("\t")
        if ref == f"refs/heads/{branch}":
            head = sha
            continue
        tag = ref[len("refs/tags/"):].removesuffix("^{}")
        if re.fullmatch(r"cuda-core-v\d+\.\d+\.\d+", tag):
            # an annotated tag is listed twice; its peeled ("^{}") line names the commit
            if ref.endswith("^{}") or tag not in tags:
                tags[tag] = sha
    ordered = sorted(tags, key=lambda t: tuple(int(x) for x in t.split("v")[-1].split(".")))
    commits = [(tag, tags[tag]) for tag in ordered]
    if head and head not in {sha for _, sha in commits}:
        commits.append((branch, head))
    return commits


def no_aslr_prefix():
    """``setarch <arch> -R`` where the kernel lets this process switch address-space randomisation off
    (containers' seccomp profiles often do not), else nothing. Children inherit it: asv's forkserver and
    every benchmark process then get the same memory layout in every run."""
    if not shutil.which("setarch"):
        return []
    prefix = ["setarch", platform.machine(), "-R"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else []


def cpu_affinity(choice):
    """asv's ``--cpu-affinity`` arguments for ``auto`` / ``none`` / an explicit list such as ``7`` or ``6,7``."""
    if choice in (None, "none"):
        return []
    if choice == "auto":
        cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        return ["--cpu-affinity", str(cores[-1])] if len(cores) >= 4 else []
    return ["--cpu-affinity", choice]


def clock_env(clock, machine):
    """The variables that give asv's benchmark processes their clock (benchmarks/_clock.py): ``reference``
    sets CUDA_BENCH_REFERENCE_NS from asv.conf.json's ``reference_ns`` for ``machine``; ``wall`` clears it."""
    if clock == "wall":
        return {"CUDA_BENCH_REFERENCE_NS": None}
    table = load_conf().get("reference_ns") or {}
    if machine not in table:
        fail(f"--clock reference: asv.conf.json has no reference_ns for machine {machine!r}. Measure it there "
             f"(python scripts/noise_probe.py --timeline 10 --write-reference {machine}) or use --clock wall")
    return {"CUDA_BENCH_REFERENCE_NS": str(table[machine])}


def asv(*args, config=CONF, timed=False, affinity=None, clock=None):
    """Run asv. ``timed``: a command that measures (run, continuous): pinned, without ASLR, fixed hash seed,
    and the ``clock`` variables (clock_env) in the benchmark processes' environment."""
    cmd = [sys.executable, "-m", "asv", *args, "--config", str(config)]
    env = None
    if timed:
        cmd = [*no_aslr_prefix(), *cmd[:4], *cpu_affinity(affinity), *cmd[4:]]
        env = dict(os.environ, PYTHONHASHSEED=os.environ.get("PYTHONHASHSEED", "0"))
        for key, value in (clock or {}).items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
    print("bench: $ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.call(cmd, cwd=ROOT, env=env)


def aa_runs(args, rest):
    """``bench aa COMMIT``: asv runs of one commit, each into ``OUT/<machine>/aa-<commit>/run-<i>`` with its
    samples recorded, then the spread per benchmark of the medians and of the fastest samples
    (scripts/thresholds.py). The runs share one built environment."""
    import thresholds

    name = record_machine(args.machine)
    clock = clock_env(args.clock, name)
    label = re.sub(r"[^A-Za-z0-9._-]+", "_", args.commit)
    base = Path(args.out).resolve() / name / f"aa-{label}{'-reference' if args.clock == 'reference' else ''}"
    dirs = []
    for i in range(1, args.runs + 1):
        args.results_dir = base / f"run-{i}"
        config = derived_conf(args)
        print(f"bench: A/A run {i} of {args.runs} -> {args.results_dir}", file=sys.stderr, flush=True)
        status = asv("run", "--machine", name, "--show-stderr", "--record-samples", *rest, f"{args.commit}^!",
                     config=config, timed=True, affinity=args.cpu_affinity, clock=clock)
        record_builds(name, config)
        if status != 0:
            return status
        dirs.append(args.results_dir)
    return thresholds.main(["--machine", name, "--runs", *map(str, dirs), "--summary"])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["compare"]:  # scripts/bench compare BASE HEAD ...: the PR workflow's job, locally
        import compare

        return compare.main(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("run", "asv run, then publish"),
                       ("ladder", "asv run over every cuda-core release tag and main's head"),
                       ("aa", "A/A: asv run of one commit several times, each into its own results dir")):
        run = sub.add_parser(name, help=text)
        run.add_argument("--repo")
        run.add_argument("--bindings")
        run.add_argument("--system-site")
        run.add_argument("--machine")
        run.add_argument("--cpu-affinity", default="auto")
        run.add_argument("--clock", choices=["wall", "reference"], default="wall")
        if name == "ladder":
            run.add_argument("--tags", metavar="REGEX", help="only ladder names (tags, 'main') that match")
        if name == "aa":
            run.add_argument("commit")
            run.add_argument("--runs", type=int, default=3)
            run.add_argument("--out", default=str(ROOT / "measurements"), help="default: measurements/")
        else:
            run.add_argument("--results-dir")
            run.add_argument("--no-publish", action="store_true")
    pub = sub.add_parser("publish", help="publish html/ from results/ (self-contained, with the overview)")
    pub.add_argument("--repo")
    serve = sub.add_parser("serve", help="serve html/ on localhost")
    serve.add_argument("--port", default="8080")
    machine = sub.add_parser("machine", help="record this machine")
    machine.add_argument("--machine")
    args, rest = parser.parse_known_args(argv)

    if args.command == "machine":
        record_machine(args.machine)
        return 0
    if args.command == "serve":
        return asv("preview", "--port", args.port)
    if args.command == "ladder" and not args.bindings:
        args.bindings = "auto"  # releases span CUDA 12 and 13: each gets a bindings wheel it supports
    if args.command == "aa":
        if args.runs < 2:
            fail("an A/A run needs --runs 2 or more")
        return aa_runs(args, rest)
    config = derived_conf(args)
    if args.command == "publish":
        return publish(config)
    if args.command == "ladder":
        conf = json.loads(config.read_text())
        commits = release_ladder(conf["repo"], (conf.get("branches") or ["main"])[0])
        if args.tags:
            commits = [(tag, sha) for tag, sha in commits if re.search(args.tags, tag)]
        if not commits:
            fail(f"{conf['repo']} has no cuda-core-v* tags" + (f" matching {args.tags!r}" if args.tags else ""))
        hashfile = ROOT / ".asv" / "ladder.txt"
        hashfile.write_text("".join(sha + "\n" for _, sha in commits))
        print("bench: ladder " + ", ".join(name for name, _ in commits), file=sys.stderr)
        rest = [f"HASHFILE:{hashfile}", *rest]
    name = record_machine(args.machine)
    # --show-stderr: skip reasons and build logs reach the console; failures are never silent
    status = asv("run", "--machine", name, "--show-stderr", *rest, config=config, timed=True,
                 affinity=args.cpu_affinity, clock=clock_env(args.clock, name))
    record_builds(name, config)
    if not args.no_publish:
        status = status or publish(config)
    return status


def publish(config):
    """asv publish + self-contained assets + the overview page (scripts/dashboard.py)."""
    import dashboard

    try:
        dashboard.publish(config)
    except dashboard.DashboardError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
