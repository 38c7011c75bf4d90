"""cuda-python-bench: the latency of every cuda.core and cuda.bindings call, commit after commit.

The flow, one module per stage:

    build    (build.py)    cuda-python's packages at a commit: asv's build step, the paired
                           engine's environments
    run      (run.py)      asv over commits of cuda-python: the history in results/
    results  (results.py)  the one reader of what runs leave: asv's results, builds, paired steps,
                           calibration
    compare  (compare.py)  the paired engine (paired.py, worker.py, stats.py): pull requests, A/A,
                           history steps
    publish  (publish.py)  the static dashboard in html/; report.py: the same rows as Markdown

``layout`` holds every path and naming rule, ``machine`` this machine, ``suite`` what the benchmark
suite holds, ``cli`` the command line (``scripts/bench``), ``status`` the exit statuses every
command returns. A module imports only modules listed before it in ``tests/test_structure.py``'s
FLOW (results, the reader, comes before run, which reads what asv wrote); importing the package does
nothing.
"""
