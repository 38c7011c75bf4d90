"""A generated history of N commits on two machines, to time the read side at upstream's size.

    python scripts/scale_history.py N OUT [--source results]
    python scripts/scale_history.py --time 100 300 1000 [--out DIR]   # generate, publish, read; a table

Each machine of the committed history (``--source``) gets N commits of main: every commit an asv results file
copied from the machine's newest one, every adjacent pair a paired step copied from one of its steps, every
tenth commit a counts record; ``commits.json`` names them all. The numbers are the source's, moved by a small
factor per commit so that no two files are the same: the shapes and sizes of the records are real, the values
say nothing. They never go into ``results/``.

``--time`` publishes each generated history with ``cuda-bench publish`` (asv's pages and the project's, in a
folder of its own) and reads it with ``read.load`` in a fresh process, and prints the seconds of each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cuda_bench.foundations.paths import COUNTS, STEPS, machine_dirs, result_files  # noqa: E402


def sha(n, machine=""):
    return hashlib.sha1(f"commit {n}".encode()).hexdigest()


def generate(n, out, source):
    """N commits a machine into ``out`` (a results folder), from ``source``'s machines."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(Path(source) / "benchmarks.json", out / "benchmarks.json")
    rng = random.Random(n)
    commits = [sha(i) for i in range(n)]
    start = 1_700_000_000_000
    known = {
        c: {"title": f"Commit {i} of a generated history", "date": start + i * 3_600_000, "tags": [],
            "position": i + 1}
        for i, c in enumerate(commits)
    }
    (out / "commits.json").write_text(json.dumps(known, indent=1))
    for folder in machine_dirs(source):
        target = out / folder.name
        target.mkdir()
        shutil.copy2(folder / "machine.json", target / "machine.json")
        template = max((json.loads(p.read_text()) for p in result_files(folder)), key=lambda d: d["date"])
        env = template["env_name"]
        for commit in commits:
            data = json.loads(json.dumps(template))
            factor = 1 + rng.uniform(-0.02, 0.02)
            for row in data["results"].values():
                values = row[0] if isinstance(row[0], list) else [row[0]]
                moved = [v * factor if isinstance(v, float) else v for v in values]
                row[0] = moved if isinstance(row[0], list) else moved[0]
            data.update(commit_hash=commit, date=known[commit]["date"])
            (target / f"{commit[:8]}-{env}.json").write_text(json.dumps(data))
        steps = [json.loads(line) for line in (folder / STEPS).read_text().splitlines() if line.strip()]
        steps = [s for s in steps if s.get("cases") and not s.get("identical")]
        with open(target / STEPS, "w") as f:
            for i, (base, head) in enumerate(zip(commits, commits[1:])):
                step = json.loads(json.dumps(steps[i % len(steps)]))
                step.update(base=base, head=head, base_rev=base, head_rev=head, release_tags=None,
                            bindings=template["env_vars"].get("CUDA_BENCH_BINDINGS", "source"))
                f.write(json.dumps(step) + "\n")
        counted = [json.loads(line) for line in (folder / COUNTS).read_text().splitlines() if line.strip()] \
            if (folder / COUNTS).exists() else []
        if counted:
            with open(target / COUNTS, "w") as f:
                for i, commit in enumerate(commits[::10]):
                    f.write(json.dumps(counted[i % len(counted)] | {"commit": commit, "rev": commit}) + "\n")
    return out


def timed(n, where, source):
    """(files, seconds to publish, seconds for read.load in a fresh process) of an N-commit history."""
    results_dir = generate(n, Path(where) / f"results-{n}", source)
    import json5

    conf = json5.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(Path(where) / "no-clone"), results_dir=str(results_dir),
                html_dir=str(Path(where) / f"html-{n}"), benchmark_dir=str(ROOT / "benchmarks"),
                env_dir=str(Path(where) / "env"))
    config = Path(where) / f"asv.conf-{n}.json"
    config.write_text(json.dumps(conf))
    begun = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cuda_bench.publish", "--config", str(config)],
                          capture_output=True, text=True, cwd=ROOT)
    publish = time.monotonic() - begun
    if proc.returncode not in (0, 2):
        raise SystemExit(f"publish of {n} commits exited {proc.returncode}: {proc.stderr[-2000:]}")
    probe = ("import time, sys; from cuda_bench.publish import read; t = time.monotonic(); read.load(sys.argv[1]); "
             "print(time.monotonic() - t)")
    read = float(subprocess.run([sys.executable, "-c", probe, str(results_dir)], capture_output=True, text=True,
                                cwd=ROOT, check=True).stdout)
    files = sum(1 for _ in results_dir.rglob("*") if _.is_file())
    return files, publish, read


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="*", type=int)
    parser.add_argument("--time", action="store_true", help="publish and read each N, print a table")
    parser.add_argument("--out", help="where the generated histories go (default: a temporary folder)")
    parser.add_argument("--source", default=str(ROOT / "results"))
    args = parser.parse_args(argv)
    if not args.time:
        n, out = args.n[0], args.out or "scale-history"
        print(generate(n, out, args.source))
        return 0
    where = Path(args.out or tempfile.mkdtemp(prefix="scale-history-"))
    print("| commits a machine | files | publish (s) | read.load (s) | publish per commit (ms) |")
    print("|--:|--:|--:|--:|--:|")
    for n in args.n:
        files, publish, read = timed(n, where, args.source)
        print(f"| {n} | {files} | {publish:.1f} | {read:.2f} | {1000 * publish / n:.0f} |", flush=True)
    if not args.out:
        shutil.rmtree(where, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
