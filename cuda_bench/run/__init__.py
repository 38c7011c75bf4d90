"""Stage 3, run: asv driven over commits, and the processes that time the suite in a build's
environment (worker, apis: the standard library alone). Imports stages 0-2."""
