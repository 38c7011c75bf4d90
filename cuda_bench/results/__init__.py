"""Stage 2, results: what runs leave in results/ (asv's results files, the tool's records) and the
history read from it. Imports stages 0-1: a run writes its records through it."""
