"""Stage 5, publish: the static dashboard in ``html/``, from ``results/`` alone, saying only what
the paired steps say.

    python -m cuda_bench.publish [--config asv.conf.json]     # cuda-bench publish

``asv publish`` writes asv's pages into a new folder next to ``html/``: the project's asv plugin
gives it the history from ``results/commits.json`` (commit order, dates, release tags; no clone, no
network) and one line per case across every cuda-bindings environment. :func:`finish` then makes the
site (plain ``asv publish`` calls it too, through the plugin); only when every step has worked does
the folder replace ``html/`` (a failed publish leaves the old dashboard). A results file or a
record's line that cannot be read is left out with one line naming it, every page says so on top
(file and line), and the command exits 2 (``asv_files.unreadable``).

The site: the project's pages, each drawn by a module of ``cuda_bench.publish.pages`` from the read
layer's History (``cuda_bench.publish.read``): ``index.html`` (main's head), ``releases.html``,
``regressions.html`` (and its feed), ``steps.html``, ``graph.html`` and ``glossary.html``; and asv's
own app at ``asv.html``, made self-contained, its Benchmark list holding the medians alone,
``regressions.json`` and the feed the paired steps' flags (``pages.asv_site``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cuda_bench.foundations.paths import ASV_PAGES_ONLY, CONF, DASHBOARD, ROOT, WORK
from cuda_bench.publish import read
from cuda_bench.publish.pages import (
    asv_site,
    builds,
    glossary,
    graph,
    landing,
    regressions,
    releases,
    steps,
)
from cuda_bench.publish.pages.asv_site import DashboardError
from cuda_bench.results import asv_files

#: the project's pages: file -> the module that draws it from the read layer's History
PAGES = {
    "index.html": landing,
    "releases.html": releases,
    "regressions.html": regressions,
    "steps.html": steps,
    "graph.html": graph,
    "builds.html": builds,
    "glossary.html": glossary,
}


def finish(conf, results_dir, html_dir, found=None):
    """Make asv's published ``html_dir`` the project's site (``conf``: asv's config, for the
    project's name): self-contained, asv's app at asv.html, the project's pages (each drawn from
    ``read.load``'s History of ``results_dir``; ``found``: that History, where it was read
    already), asv's list the medians alone, its regressions and feed the paired steps' flags.
    Returns (operation rows, asv regressions entries)."""
    html_dir = Path(html_dir)
    asv_site.vendor(html_dir)
    asv_site.asv_app(html_dir)
    found = found or read.load(results_dir)
    index = json.loads((html_dir / "index.json").read_text())
    revisions = {commit: int(rev) for rev, commit in index.get("revision_to_hash", {}).items()}
    (html_dir / "overview.json").write_text(json.dumps(found.rows, indent=1))
    for name, module in PAGES.items():
        (html_dir / name).write_text(module.document(found))
    graph.write_data(html_dir, found)
    asv_site.median_summaries(html_dir, found.runs, revisions)
    entries = asv_site.asv_regressions(found.steps, found.suite, revisions, html_dir)
    (html_dir / "regressions.json").write_text(
        json.dumps({"regressions": entries}, separators=(",", ":"))
    )
    regressions.write_feed(
        html_dir,
        getattr(conf, "project", "cuda-python"),
        {name: machine.regressions for name, machine in found.machines.items()},
        found.known,
    )
    shutil.copy2(DASHBOARD / "html-README.md", html_dir / "README.md")
    return found.rows, entries


def clean_results(results_dir, work, bad):
    """``results_dir`` itself, or, for asv, a copy in ``work`` without the results files that do not
    parse (``bad``, each named in a line and noted when it was read: ``asv_files.load_all``)."""
    if not bad:
        return Path(results_dir)
    copy = Path(work) / "results"
    shutil.copytree(results_dir, copy)
    for path in bad:
        (copy / path.relative_to(results_dir)).unlink()
    if not asv_files.load_all(copy):
        raise DashboardError(f"no readable results left in {results_dir}")
    return copy


def swap_in(new, html_dir, aside):
    """``new`` becomes ``html_dir``: the old one is moved to ``aside`` first and put back if the new
    one cannot take its place, so ``html_dir`` is never left missing."""
    had = html_dir.exists()
    if had:
        html_dir.rename(aside)
    try:
        new.rename(html_dir)
    except BaseException:
        if had:
            aside.rename(html_dir)
        raise


def publish(config=CONF):
    """Publish ``config``'s results into its html_dir: built aside (in .asv/, which git ignores),
    swapped in only when complete; a failure or an interrupt at any point leaves the old html_dir as
    it was."""
    import json5  # asv's own reader of its config (the file has comments)

    config = Path(config).resolve()
    conf = json5.loads(config.read_text())
    base = config.parent
    html_dir = (base / conf.get("html_dir", "html")).resolve()
    results_dir = (base / conf.get("results_dir", "results")).resolve()
    bad = []
    # read once: the pages are drawn from these; asv's copy lacks what they leave out
    runs = asv_files.load_all(results_dir, bad, asv_files.listed(results_dir))
    if not runs:
        raise DashboardError(f"no results in {results_dir} to publish (cuda-bench run makes some)")
    html_dir.parent.mkdir(parents=True, exist_ok=True)
    WORK.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="publish-", dir=WORK))
    temp_config = (
        work / "asv.conf.json"
    )  # in .asv/: nothing of a publish is left in the checkout, killed or not
    try:
        new_html = work / "html"
        used = clean_results(results_dir, work, bad)
        conf.update(html_dir=str(new_html), results_dir=str(used))
        for key in ("env_dir", "benchmark_dir"):
            conf[key] = str((base / conf[key]).resolve())
        temp_config.write_text(json.dumps(conf))
        path = os.pathsep.join(
            [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        )  # the project's plugin
        said = work / "asv-publish.log"
        with open(said, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "asv", "publish", "--config", str(temp_config)],
                cwd=base,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=dict(os.environ, PYTHONPATH=path, **{ASV_PAGES_ONLY: "1"}),
            )
        try:
            # while asv draws its pages, the history is read for the project's (on another core):
            # from the results themselves (the copy asv reads lacks what could not be read, which
            # the pages name)
            found = read.load(results_dir, runs)
            status = proc.wait()
        finally:
            if proc.poll() is None:  # an interrupt or an error here: asv stops too
                proc.kill()
                proc.wait()
        if status != 0:
            lines = [line for line in said.read_text().splitlines() if line.strip()]
            last = lines[-1].strip() if lines else "no output"
            raise DashboardError(f"asv publish exited {status} ({last}); {html_dir} is as it was")
        rows, entries = finish(
            argparse.Namespace(project=conf.get("project", "cuda-python")),
            results_dir,
            new_html,
            found=found,
        )
        swap_in(new_html, html_dir, work / "old")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"publish: {html_dir} ({len(rows)} operation rows, {len(entries)} open regressions from "
        "paired steps). "
        f"Open {html_dir / 'index.html'}; asv's pages (asv.html) need `cuda-bench serve` "
        "(http://127.0.0.1:8080): browsers refuse asv's data from file://",
        file=sys.stderr,
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m cuda_bench.publish", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--config", default=str(CONF))
    args = parser.parse_args(argv)
    asv_files.forget()
    try:
        publish(args.config)
    except DashboardError as exc:
        print(f"publish: {exc}", file=sys.stderr)
        return 3  # as every command that could not do its job (cuda_bench.cli)
    return 2 if asv_files.say_unreadable("publish") else 0  # 2: something could not be read
