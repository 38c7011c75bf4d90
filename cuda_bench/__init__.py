"""cuda-python-bench: the latency of every cuda.core and cuda.bindings call, commit after commit.

The flow of the work, one folder per stage (docs/layout.md):

    foundations/  paths, processes, names, numbers as text, the statistics, this machine, the suite
    build/        cuda-python's packages at a commit: asv's build step, the engines' environments
    results/      what runs leave in results/ (asv's results files, the tool's records), read
    run/          asv over commits of cuda-python; the worker that times the suite in a build
    compare/      the engines (paired, window): pull requests, A/A, the history's steps, windows
    publish/      the static dashboard in html/; report.py: the same history as Markdown

``commands/`` holds one module per command, ``cli`` the command line (``scripts/bench``). A module
imports only modules of its own stage and of the stages above it in this list
(``tests/test_structure.py``): results/, the shapes and readers of what runs leave, comes before
run/, which writes through them; importing the package does nothing.
"""
