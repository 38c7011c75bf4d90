"""Stage 0, foundations: paths, processes, names, numbers as text, the statistics, this machine and
the suite, which every stage stands on. Imports the standard library and its own modules alone."""
