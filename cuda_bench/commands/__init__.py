"""The commands of ``cuda-bench``, one module each (as asv's ``asv/commands/``): each adds its
parser(s) with ``add(subparsers)`` and runs with ``main(args, argv)`` (``run`` also takes what goes
to ``asv run``). ``common`` holds what several share."""

from cuda_bench.commands import (
    bisect,
    compare,
    counts,
    init,
    over_cpp,
    plan,
    prebuild,
    publish,
    report,
    run,
    steps,
    upgrade,
    window,
)

#: command name -> its module, in the order ``cuda-bench --help`` lists them
COMMANDS = {
    "init": init,
    "run": run,
    "ladder": run,
    "window": window,
    "steps": steps,
    "compare": compare,
    "aa": compare,
    "bisect": bisect,
    "over-cpp": over_cpp,
    "counts": counts,
    "plan": plan,
    "publish": publish,
    "serve": publish,
    "report": report,
    "prebuild": prebuild,
    "upgrade": upgrade,
}
