"""``cuda-bench publish``: html/ from results/ alone; ``cuda-bench serve``: html/ on 127.0.0.1."""

from __future__ import annotations

import errno
import functools
import http.server

from cuda_bench import asvrun, compare, publish
from cuda_bench.commands.common import log
from cuda_bench.paths import ROOT


def add(sub):
    p = sub.add_parser("publish", description="asv publish into a new folder, made self-contained, with the pages "
                       "of the paired engine; it replaces html/ only when complete. Needs no network: what the "
                       "pages say of each commit is recorded in results/ when it is measured.")
    p.add_argument("--repo", metavar="PATH", help="a local clone of cuda-python (default: the one `cuda-bench init` "
                   "set, else what results/commits.json recorded)")
    p.add_argument("--results-dir", metavar="DIR", help="publish these results instead of results/")
    p = sub.add_parser("serve", description="html/ on http://127.0.0.1:PORT (browsers refuse asv's data from "
                       "file://); Ctrl-C stops it")
    p.add_argument("--port", type=int, default=8080, help="the port on 127.0.0.1 (default %(default)s)")


def main(args, argv):
    if args.command == "serve":
        return serve(args.port)
    publish.publish(asvrun.derived_conf(args.repo, None, args.results_dir, None))
    return compare.OK


def serve(port, html=ROOT / "html"):
    if not (html / "index.html").is_file():
        raise asvrun.RunError(f"{html} has no dashboard yet: `cuda-bench publish` makes it")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(html))
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise asvrun.RunError(f"port {port} on 127.0.0.1 is in use: `cuda-bench serve --port N` takes another") \
                from None
        raise asvrun.RunError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    log(f"serving {html} on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return compare.OK
