"""Stage 4, compare: what the paired engine is asked (:class:`Settings`: process pairs, groups,
memory layouts, and how each kind of case is sampled) and what it measures (:class:`Side`: one
build). ``cuda_bench.compare.paired`` and ``window`` read them; ``paired.Settings`` and
``paired.Side`` name the same classes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from cuda_bench.foundations import stats
from cuda_bench.foundations.names import is_cold_start, is_first_context
from cuda_bench.foundations.paths import BENCHMARKS

# over C++: two runs of 60 processes agree within 5% on 89-100% of cases on one machine start
# (docs/method.md, rule 12)
OVER_CPP_PROCESSES = 60
#: over C++ keeps one layout per run: its two sides are different code in one process, and there
#: random layouts agreed less across machine starts, not more (docs/method.md, rule 12)
OVER_CPP_LAYOUTS = "fixed"


#: the seconds one first-context sample takes alone on the machine: its two fresh processes, the
#: statement's and ``python -c pass`` (H100: 0.3-0.8 s; docs/evidence/cold-starts-h100)
FIRST_CONTEXT_SAMPLE = 0.6


@dataclass
class Side:
    """One build: the interpreter of its environment, and what it was built from."""

    name: str  # "base" or "head"
    rev: str  # as the user named it
    commit: str
    python: str
    env: dict = field(default_factory=dict)  # extra variables for its workers
    record: dict = field(default_factory=dict)  # the environment's build record


@dataclass
class Settings:
    pairs: int = 45  # process pairs (fresh processes each): the interval is over their ratios
    seconds: float = 0.1  # of ABBA groups per case and pair
    sample_ns: int = 200_000  # target length of one sample
    min_groups: int = 3  # even for a case whose samples are long (compilation)
    max_groups: int = 5000
    jobs: int = 0  # process pairs at a time; 0: one per core but core 0
    benchmark_dir: Path = BENCHMARKS
    confidence: float = stats.CONFIDENCE
    # seconds a worker may take to answer one request (a setup compiles kernels)
    timeout: float = 600
    #: "random": ASLR on, each worker process its own memory layout, which the median over the
    #: process pairs averages. "fixed": ASLR off, one layout per build for the whole run; that
    #: layout biases a build by up to 4.5% on some forms, the same way on every machine start, so a
    #: change to what else the process holds reads as a reproducible regression (docs/method.md,
    #: rule 6).
    layouts: str = "random"
    #: process pairs that time a cold start (``names.is_cold_start``: each sample starts two fresh
    #: processes, tens to hundreds of milliseconds): the first this many, one wave of 15 cores,
    #: enough for a 95 % interval; the imports and the driver's load take about 11 s a commit
    cold_pairs: int = 15
    #: process pairs that time a first context (``names.is_first_context``): its samples run one
    #: at a time after every other case, with nothing else on the machine (``paired.in_groups``;
    #: the driver queues first contexts across processes, and other processes' GPU work widens
    #: them), so the fewest whose median has a 95 % interval (``stats.fewest_pairs``)
    #: and one to spare, one ABBA group each and no warm-up turn (:meth:`for_case`): 14 samples a
    #: build and case, about 35 s of the GPU a commit for the four first contexts
    first_context_pairs: int = 7
    #: a turn of each worker before a case's groups (:meth:`for_case`: not for a first context)
    warm_up: bool = True
    #: a command the workers run under (the instruction pass's valgrind), before their Python
    wrapper: tuple = ()

    def pairs_of(self, name):
        """How many process pairs time the case ``name``: the first ``first_context_pairs`` for a
        first context, the first ``cold_pairs`` for another cold start, every one for the others."""
        if is_first_context(name):
            return min(self.pairs, self.first_context_pairs)
        return min(self.pairs, self.cold_pairs) if is_cold_start(name) else self.pairs

    def first_context_seconds(self):
        """The seconds one first context takes a build: its samples run one at a time after the
        other cases, so no number of cores shortens them (two a process pair,
        :data:`FIRST_CONTEXT_SAMPLE` each)."""
        return 2 * min(self.pairs, self.first_context_pairs) * FIRST_CONTEXT_SAMPLE

    def first_contexts_seconds(self, names, builds):
        """The seconds the first contexts among ``names`` take in a pass of ``builds`` builds."""
        return sum(map(is_first_context, names)) * builds * self.first_context_seconds()

    def for_case(self, name):
        """The settings one process pair samples the case ``name`` with: a first context's one
        ABBA group and no warm-up turn, every other case's as they are."""
        if is_first_context(name):
            return replace(self, min_groups=1, seconds=0.0, warm_up=False)
        return self

    @classmethod
    def over_cpp(cls, **given):
        """Over C++'s settings: ``OVER_CPP_PROCESSES`` processes, ``OVER_CPP_LAYOUTS``, and what is
        ``given``."""
        return cls(**{"pairs": OVER_CPP_PROCESSES, "layouts": OVER_CPP_LAYOUTS, **given})

    def describe(self):
        return {
            "pairs": self.pairs,
            "seconds_per_case_and_pair": self.seconds,
            "sample_ns": self.sample_ns,
            "min_groups": self.min_groups,
            "confidence": self.confidence,
            "layouts": self.layouts,
            "cold_pairs": self.cold_pairs,
            "first_context_pairs": self.first_context_pairs,
        }
