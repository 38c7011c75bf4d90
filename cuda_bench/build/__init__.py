"""Stage 1, build: cuda-python's packages at a commit, built into cached wheels and environments.
Imports stage 0 and the standard library alone: it runs inside benchmark environments."""
