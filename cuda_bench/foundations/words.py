"""The words of the pages and of docs/method.md that a cuda-python maintainer may not know, each in
one line, written once: publish renders them as the dashboard's ``glossary.html``, which every page
links to from its navigation bar, and they are docs/method.md's section "Words"
(``python -m cuda_bench.foundations.words`` writes that section from here; a test checks that the
two agree).

An entry is plain text; a `backticked` part is code.
"""

from __future__ import annotations

import html
import re
import sys
import textwrap
from pathlib import Path

WORDS = {
    "Case": "one form of one operation, e.g. `bench_device.SetCurrent.time_set_current('core')`.",
    "Sample": "the time of a fixed number of calls, about 200 µs.",
    "ABBA group": "four samples in the order A, B, B, A (A the base build, B the head build).",
    "Process pair": (
        "one worker process per build, pinned to the same core, timing every case in turn; a "
        "paired step runs one pair after another and takes the median over them."
    ),
    "Machine start": "one boot of the machine, named by the kernel's boot id.",
    "Memory layout per process": (
        "each worker starts with address-space randomisation (ASLR) on, so its code and data sit "
        "at addresses of their own (rule 6)."
    ),
    "Fixed layout": (
        "ASLR off (one layout per build): every worker of a build gets the same layout, on every "
        "machine start alike."
    ),
    "Fast state": (
        "on the GPU machines measured here (H100 and H200 alike), a process's Python runs either "
        "fast or about twice as slowly for a while; the fast state is the first."
    ),
    "Slow state": (
        "an over-C++ run whose C++ twins ran more than ×1.15 slower than their fastest recorded "
        "run: probably no process in the fast state, so its ratios read high (rule 12)."
    ),
    "Threshold": (
        "how far from ×1.000 a case's interval must lie before it is flagged: calibrated per case "
        "and machine by an A/A run where one was made, else the default 2 % (each machine's part "
        "of the front page says which)."
    ),
    "Control": (
        "a case that does not run cuda-python code (the C++ twins, the harness floor): shown, "
        "never counted (rule 7)."
    ),
    "Paired step": (
        "two commits timed against each other, sample by sample on one core: a newly measured "
        "commit against the previous measured one, a release against the release before it, or "
        "the newest release against main's head."
    ),
    "Window": (
        "several commits timed in one pass, one worker per build on each core, each adjacent pair "
        "a paired step (rule 10)."
    ),
    "Slower, faster": (
        "what the pages call a regression and an improvement: the whole interval of the case's "
        "ratio lies beyond its threshold (rule 5); every other case is the same."
    ),
    "Confirmed, not yet confirmed, not reproduced": (
        "how a slowdown stands across machine starts: flagged on two, one of them with a memory "
        "layout per process; flagged, but on one start only or only with one fixed layout per "
        "build; or measured on another start without a flag (rule 11)."
    ),
    "Cleared by": (
        "the measurement that made a flag not reproduced: its ratio and interval, and the machine "
        "start it was made on."
    ),
    "Not measured, on one side only": (
        "a case a step could not time (its error is named), and a case only one of its builds has "
        "(e.g. an API the older commit lacks): neither is counted as same."
    ),
    "Paired chain": (
        "the product of a case's paired ratios along the history, from the first commit the steps"
        " reach (rule 10); its band multiplies the ends of the steps' intervals. A chain multiplies"
        " the steps of one build only (the cuda-bindings both sides ran) and starts again where "
        "the build changes."
    ),
    "A/A run": (
        "a commit paired against itself, the same build on both sides: every ratio should be "
        "×1.000, and how far each case strays sets its threshold (`cuda-bench aa`)."
    ),
    "Paired engine": (
        "what makes every paired step: it times two builds in turn on one core, process pair "
        "after process pair, and gives each case a ratio with its 95 % interval (docs/method.md)."
    ),
    "Main's head": (
        "the newest commit of main measured on a machine; main may have newer commits the history "
        "does not hold yet."
    ),
    "Not recorded, not measured": (
        "a number the records do not hold (an older record without it), or a case no run "
        "measured: never a zero."
    ),
    "Geometric mean per library": (
        "of every case's ratio in one step, for one library; a summary, not a verdict."
    ),
    "Harness floor": (
        "what the timing loop costs per call with a call that does nothing "
        '(`bench_harness.Floor`); a Python number "net" of it has the floor taken off.'
    ),
    "C++ twin": (
        "the same driver, runtime or NVRTC call made from C++ (`benchmarks/cpp/twins.cpp`)."
    ),
    "Over C++": (
        "a Python form's time per call against its C++ twin's: paired, timed in turn in one "
        "process (rule 12); where no such run was made, net (asv's median less the harness floor) "
        "or raw (asv's median) against the twin's median."
    ),
    "Work per call": (
        "what one call does, counted rather than timed (CUDA and NVRTC calls, Python calls, C "
        "calls, net blocks: memory blocks allocated and not freed): exact, so any difference "
        "between two commits is a change."
    ),
    "Instructions per call": (
        "what the calling thread executes per call, counted by valgrind's callgrind inside "
        "compiled code too (Cython, CPython, the driver's user-space code): the median of five "
        "memory layouts, each a long run less a short one; a case moved where it changed by more "
        "than its spread and 0.5 % (rule 20). Not the driver's kernel side, other threads and "
        "processes or the GPU, and an instruction is not a cycle."
    ),
    "Release ladder": (
        "every cuda-core release measured on one machine, then main's head, each paired with the "
        "one before it (`cuda-bench ladder`)."
    ),
    "Built from the commit, wheel": (
        "the cuda-bindings a build ran: cuda_bindings compiled from the commit itself (asv's "
        '`CUDA_BENCH_BINDINGS` "source", the default), or a wheel of PyPI, named by the version '
        "its workers reported; a page shows one build per commit, the commit's own first."
    ),
    "Put down to a cuda-bindings change": (
        "a cuda.bindings case of a step whose two sides ran different cuda-bindings wheels: what "
        "it measures is the wheels, so it is listed apart and not counted as the step's."
    ),
    "In one process": (
        "every form of an operation timed beside its C++ twin in the same worker processes (an "
        "over-C++ run); a form over cuda.bindings' is the median over the processes of their "
        "ratio, with its interval."
    ),
    "Over budget, within budget, undecided": (
        "a call of cuda.core or cuda.bindings against its budget in `budgets.json5` (over C++, or "
        "cuda.core over cuda.bindings): over or within only where the whole interval of one "
        "over-C++ run's processes (95 %, or the coverage said beside it) lies above or below the "
        "budget; else undecided. It is confirmed once runs on two machine starts read it, not yet "
        "confirmed on one start, not reproduced where another run reads the opposite (rule 16)."
    ),
    "cuda-bindings auto": (
        "each release measured with the cuda-bindings wheel it supports: 13.3.1 where its "
        "cuda_core declares a `cu13` extra, else 12.9.10."
    ),
    "Cold start": (
        "a fresh interpreter's import, load of the CUDA driver or first context, timed from the "
        "process's start to its end, less the same interpreter's `python -c pass` timed right "
        "after it; paired as every case is (rule 18)."
    ),
    "Build time": (
        "the CPU seconds of one package tree's build (the compilers' user and system time); a "
        "change between adjacent built trees is flagged only beyond what one tree's rebuilds "
        "spread by, and is unpaired (rule 19)."
    ),
}

#: how the pages say each entry's word (a regular expression, matched whole-word and in any case):
#: the first time a page says one, it links to the entry (``pages.html.linked``)
SAID = {
    "Process pair": r"process pairs?",
    "Machine start": r"machine starts?",
    "Memory layout per process": r"(?:a )?layout per process",
    "Fixed layout": r"(?:one )?fixed layout|layout per build",
    "Fast state": r"fast state",
    "Slow state": r"slow state",
    "Threshold": r"thresholds?",
    "Control": r"controls?",
    "Paired step": r"paired steps?",
    "A/A run": r"A/A runs?",
    "Paired engine": r"paired engine|the engine",
    "Main's head": r"main's head",
    "Window": r"one pass",
    "Confirmed, not yet confirmed, not reproduced": r"not yet confirmed|not reproduced|confirmed",
    "Cleared by": r"cleared by",
    "Not measured, on one side only": r"not measured|on one side only",
    "Slower, faster": r"slower|faster",
    "Paired chain": r"paired chains?|chains?",
    "Geometric mean per library": r"geometric means?",
    "Harness floor": r"harness floor",
    "C++ twin": r"C\+\+ twins?|twins?",
    "Over C++": r"over (?:its )?C\+\+",
    "In one process": r"in one process",
    "Work per call": r"work per call",
    "Instructions per call": r"instructions per call",
    "Release ladder": r"release ladder|ladder",
    "Built from the commit, wheel": r"built from the commit|built from each commit",
    "Put down to a cuda-bindings change": r"put down to (?:a|that|the) cuda-bindings change",
    "Cold start": r"cold starts?",
}

SECTION = "## Words\n\n"  # docs/method.md's section of these entries, up to the next "## "
METHOD_MD = Path(__file__).resolve().parents[2] / "docs" / "method.md"


def anchor(word):
    """The glossary page's id of ``word``: ``Paired step`` -> ``paired-step``."""
    return re.sub(r"[^a-z0-9]+", "-", word.lower()).strip("-")


def entry_html(text):
    """An entry as HTML: escaped, its `backticked` parts as code."""
    parts = html.escape(text, quote=True).split("`")
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def glossary_html():
    """The entries as a definition list, each word with its id (:func:`anchor`)."""
    items = "".join(
        f'<dt id="{anchor(word)}">{html.escape(word)}</dt><dd>{entry_html(text)}</dd>\n'
        for word, text in WORDS.items()
    )
    return f'<dl class="glossary">\n{items}</dl>'


def markdown():
    """The entries as docs/method.md's list, each wrapped within 100 characters."""
    return "".join(
        textwrap.fill(
            f"- **{word}**: {text}",
            100,
            subsequent_indent="  ",
            break_long_words=False,
            break_on_hyphens=False,
        )
        + "\n"
        for word, text in WORDS.items()
    )


def method_section(text):
    """(start, end) of the list in ``text`` (docs/method.md): from the first "- " after its
    "## Words" heading to the blank line that ends the list."""
    start = text.index(SECTION) + len(SECTION)
    start = text.index("\n- ", start - 1) + 1
    end = text.index("\n\n", start) + 1
    return start, end


def write_method(path=METHOD_MD):
    """Put :func:`markdown` in ``path``'s "Words" section; True where that changed the file."""
    text = path.read_text()
    start, end = method_section(text)
    new = text[:start] + markdown() + text[end:]
    if new != text:
        path.write_text(new)
    return new != text


if __name__ == "__main__":
    said = "written" if write_method() else "already up to date"
    print(f"{METHOD_MD}: {said}", file=sys.stderr)
