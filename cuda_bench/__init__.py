"""cuda-python-bench: the latency of every cuda.core and cuda.bindings call, commit after commit.

One module per stage, each importing only the ones before it:

    build    (build.py)    cuda-python's packages at a commit: asv's build step, the paired engine's environments
    run      (run.py)      asv over commits of cuda-python: the history in results/
    results  (results.py)  the one reader of what runs leave: asv's results, builds, paired steps, calibration
    compare  (compare.py)  the paired engine (paired.py, worker.py, stats.py): pull requests, A/A, history steps
    publish  (publish.py)  the static dashboard in html/; report.py: the same rows as Markdown

``layout`` holds every path and naming rule, ``machine`` this machine, ``suite`` what the benchmark suite
holds, ``cli`` the command line (``scripts/bench``). Importing the package does nothing.
"""
