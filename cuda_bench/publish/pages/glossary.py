"""``glossary.html``: the words the pages use, each in one line
(``cuda_bench.foundations.words``)."""

from __future__ import annotations

from cuda_bench.foundations import words
from cuda_bench.publish.pages.html import (
    METHOD,
    banner,
    page,
)

GLOSSARY = f"""<p>Each in one line; the rules behind them, with their evidence, are in
<a href="{METHOD}">docs/method.md</a>, whose section Words holds the same list.</p>"""


def document(found):
    """``glossary.html`` (``found``, a ``read.History``, for the banner)."""
    return page(
        "Words the pages use", GLOSSARY + words.glossary_html(), "glossary.html", banner(found)
    )
