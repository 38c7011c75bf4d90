"""``cuda-bench publish``: html/ from results/ alone; ``cuda-bench serve``: html/ on 127.0.0.1."""

from __future__ import annotations

import errno
import functools
import http.server
import json
from pathlib import Path

from cuda_bench.commands.common import log, repo_option
from cuda_bench.foundations.paths import COMMITS, ROOT
from cuda_bench.foundations.status import OK
from cuda_bench.publish import dashboard
from cuda_bench.results import asv_files
from cuda_bench.run import asvrun


def add(sub):
    p = sub.add_parser(
        "publish",
        description="asv publish into a new folder, made self-contained, with the pages of the "
        "paired engine; it replaces html/ only when complete. Needs no network and no clone: "
        "commit order, dates and release tags come from results/commits.json, recorded when each "
        "commit is measured.",
    )
    repo_option(
        p,
        "a local clone of cuda-python: first add to results/commits.json the measured commits it "
        "lacks (commits measured before it existed)",
    )
    p.add_argument("--results-dir", metavar="DIR", help="publish these results instead of results/")
    p = sub.add_parser(
        "serve",
        description="html/ on http://127.0.0.1:PORT (browsers refuse asv's data from "
        "file://); Ctrl-C stops it",
    )
    p.add_argument(
        "--port", type=int, default=8080, help="the port on 127.0.0.1 (default %(default)s)"
    )


def main(args, argv):
    if args.command == "serve":
        return serve(args.port)
    conf = asvrun.derived_conf(args.repo, None, args.results_dir, None, need_repo=False)
    if args.repo:
        record_missing(args.repo, Path(json.loads(conf.read_text())["results_dir"]))
    dashboard.publish(conf)
    return OK


def record_missing(repo, results_dir):
    """Add to ``results_dir/commits.json`` what the pages say of each measured commit it lacks, from
    ``repo``."""
    known = asv_files.commits(results_dir, asv_files.load_all(results_dir))  # those it lacks too
    missing = sorted(commit for commit, info in known.items() if not info["recorded"])
    if missing:
        found = asvrun.record_commits(repo, missing, results_dir / COMMITS.name)
        log(
            f"results/commits.json: {sum(c in found for c in missing)} of {len(missing)} measured "
            f"commit(s) it lacked recorded from {repo}"
        )


def serve(port, html=ROOT / "html"):
    if not (html / "index.html").is_file():
        raise asvrun.RunError(f"{html} has no dashboard yet: `cuda-bench publish` makes it")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(html))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise asvrun.RunError(
                f"port {port} on 127.0.0.1 is in use: `cuda-bench serve --port N` takes another"
            ) from None
        raise asvrun.RunError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    log(f"serving {html} on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    with server:  # Ctrl-C: exit status 130, as for every command (cuda_bench.cli)
        server.serve_forever()
    return OK
