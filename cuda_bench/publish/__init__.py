"""Stage 5, publish: the history read once and drawn: the pages, the Markdown report, README's
section, the site swapped in whole, asv's plugin. Imports stages 0-4."""
