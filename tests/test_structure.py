"""The suite's own rules, checked on its classes: mirrored names, one api parameter, bounded queues,
no CUDA work at import."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

from benchmarks._op import APIS
from cuda_bench.run import apis


def snake(name):
    return re.sub(r"(?<=[a-z])(?=[A-Z0-9])|(?<=[0-9])(?=[A-Z])", "_", name).lower()


OPS = list(dict.fromkeys((case.name.split(".")[0], case.cls) for case in apis.operations().values()))


def test_there_are_operations_in_every_area():
    modules = {module for module, _ in OPS}
    assert {"bench_device", "bench_stream", "bench_event", "bench_memory", "bench_launch", "bench_program",
            "bench_memoryview", "bench_enum", "bench_tensormap", "bench_pathfinder"} <= modules
    assert len(OPS) >= 30


def test_each_operation_times_one_method_named_after_it():
    for module, cls in OPS:
        timed = [name for name in dir(cls) if name.startswith(("time_", "track_", "mem_", "peakmem_"))]
        assert timed == [f"time_{snake(cls.__name__)}"], (module, cls.__name__, timed)
        signature = list(inspect.signature(getattr(cls, timed[0])).parameters)
        assert signature == ["self", *cls.param_names], (cls.__name__, signature)


def test_each_api_has_a_builder_and_declared_needs():
    for _, cls in OPS:
        assert cls.params[0], cls.__name__
        assert set(cls.params[0]) <= set(APIS)
        for api in cls.params[0]:
            assert callable(getattr(cls, api, None)), f"{cls.__name__} has no {api}() builder"
            assert cls.needs[api], f"{cls.__name__}.{api} declares no API it needs"


def test_every_library_names_the_distributions_its_forms_run():
    """Each api value is a library whose distributions ``layout.TIMED_CODE`` names (what the paired engine reads
    to say a case ran the same code on both sides), and every case's first parameter is one of them."""
    from cuda_bench.foundations.names import TIMED_CODE, library_of

    assert set(APIS) == set(TIMED_CODE)
    assert {library_of(name) for name in apis.operations()} == set(APIS)


def test_queued_operations_sample_fixed_batches():
    queued = [cls for _, cls in OPS if cls.queued]
    assert {cls.__name__ for cls in queued} >= {"Launch", "LaunchPrepacked", "EventRecord", "AllocFree"}
    for cls in queued:
        assert cls.number > 0 and cls.warmup_time == 0, cls.__name__


IMPORT_SUITE = """
import importlib, pkgutil, sys
try:
    from cuda.bindings import driver, nvrtc, runtime
except ImportError:
    driver = nvrtc = runtime = None
called = []
for module in (driver, runtime, nvrtc):  # every CUDA entry point, recorded instead of called
    for name in dir(module) if module else ():
        value = getattr(module, name)
        if name.startswith(("cu", "nvrtc")) and callable(value) and not isinstance(value, type):
            setattr(module, name, lambda *a, _name=name, **k: called.append(_name))
import benchmarks
from benchmarks import _compat
for m in pkgutil.iter_modules(benchmarks.__path__):
    importlib.import_module("benchmarks." + m.name)
assert _compat._gpu_problem == [], "a module asked for the GPU at import"
assert not called, f"CUDA called at import: {called}"
print("clean", driver is not None)
"""


@pytest.mark.parametrize("where", ["project", pytest.param("cuda-core", marks=pytest.mark.slow)])
def test_importing_the_suite_does_no_cuda_work(where, request):
    """No benchmark module touches CUDA when imported: with the project's Python (no cuda-python) and in an
    environment with cuda-core and cuda-bindings, where every driver, runtime and NVRTC function is replaced
    by a recorder first (this machine has no libcuda, so a call that got through would raise)."""
    python = sys.executable if where == "project" else str(request.getfixturevalue("newest_env"))
    proc = subprocess.run([python, "-c", IMPORT_SUITE], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.split() == ["clean", str(where == "cuda-core")], proc.stderr


def test_cpp_twins_mirror_python_operations():
    from benchmarks import _kernels, bench_cpp

    python_cases = set()
    for _, cls in OPS:
        cases = [()] if len(cls.params) == 1 else [(c,) for c in cls.params[1]]
        for case in cases:
            python_cases.add(snake(cls.__name__) + (f"[{case[0]}]" if case else ""))
    assert set(bench_cpp.OPS) <= python_cases, set(bench_cpp.OPS) - python_cases
    source = bench_cpp.SOURCE.read_text()
    for op in bench_cpp.OPS:
        assert f'"{op}"' in source, f"twins.cpp does not measure {op}"
    for name in _kernels.KERNEL_NAMES + _kernels.TYPED_KERNEL_NAMES:
        assert f'"{name}"' in source, f"twins.cpp does not launch {name}"


def test_every_case_that_names_a_twin_has_it():
    """layout.cpp_id's name of a case's twin is one twins.cpp measures whenever the operation has twins: a
    case that shares another operation's twins (LaunchPrepacked, LaunchVoidPointer -> launch[...]) must use
    their cases, or over C++ leaves it out without a word (overcpp.items_of)."""
    from benchmarks import bench_cpp
    from cuda_bench.foundations.names import cpp_id, split_case

    twinned = {op.split("[")[0] for op in bench_cpp.OPS}
    named = {name: cpp_id(*split_case(name)) for name in apis.operations()}
    assert {name for name, twin in named.items() if twin.startswith("launch[")} >= {
        "bench_launch.LaunchVoidPointer.time_launch_void_pointer('bindings', '2 ptr')",
        "bench_launch.LaunchPrepacked.time_launch_prepacked('bindings', '512 ptr')"}
    missing = {name: twin for name, twin in named.items()
               if twin.split("[")[0] in twinned and twin not in bench_cpp.OPS}
    assert not missing, missing


@pytest.mark.slow
def test_cpp_twins_compile(newest_env, tmp_path):
    """twins.cpp compiles with the flags its library is built with (to an object: there is no libcuda here
    to link), so a mistake in it stops CI instead of a GPU run. nvrtc.h, which this toolkit lacks, comes
    from the NVRTC wheel of the cuda-core[cu13] test environment."""
    from benchmarks import bench_cpp

    nvcc = bench_cpp.nvcc()
    if nvcc is None:
        pytest.skip("no nvcc on this machine (the twins are built on the GPU machine)")
    headers = sorted(newest_env.parent.parent.glob("lib/python*/site-packages/nvidia/*/include/nvrtc.h"))
    assert headers, "cuda-core[cu13] installs NVRTC's wheel, header included"
    proc = subprocess.run([nvcc, *bench_cpp.FLAGS, "-I", str(headers[0].parent), "-c", str(bench_cpp.SOURCE),
                           "-o", str(tmp_path / "twins.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "twins.o").stat().st_size > 0


#: the stages, each a folder of cuda_bench, in the order of their imports: a module imports only modules of its own
#: stage and of the stages before it. The work goes build -> run -> results -> compare -> publish; results (the shapes
#: of what a run writes, and their readers) sits under run, which writes through it. The commands come last, then the
#: command line (cli.py, __main__.py), which dispatches to them.
STAGES = ["foundations", "build", "results", "run", "compare", "publish", "commands"]


def stage_of(module):
    """The stage of ``module`` (a dotted name under cuda_bench): its folder's, or the command line's (last)."""
    top = module.split(".")[0]
    return STAGES.index(top) if top in STAGES else len(STAGES)


def package_imports():
    """{module: the modules of the package it imports}, each a dotted name under cuda_bench ("compare.paired",
    "publish.pages.html", "cli"), for every module of the package but the packages' faces (__init__.py)."""
    import ast

    package = ROOT / "cuda_bench"
    dotted = {".".join(p.relative_to(package).with_suffix("").parts) for p in package.rglob("*.py")}
    found = {}
    for name in sorted(dotted):
        if name.split(".")[-1] == "__init__":
            continue
        imported = set()
        for node in ast.walk(ast.parse((package / f"{name.replace('.', '/')}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cuda_bench":
                at = node.module.split(".")[1:]
                for alias in node.names:  # a module of that package, or a name of that module
                    whole = ".".join([*at, alias.name])
                    imported.add(whole if whole in dotted else ".".join(at))
            elif isinstance(node, ast.Import):
                imported |= {a.name.split(".", 1)[1] for a in node.names if a.name.startswith("cuda_bench.")}
        found[name] = {m for m in imported if m and m.split(".")[-1] != "__init__"}
    return found


def forward(imports):
    """{module: the modules of later stages it imports}, of the modules that import any."""
    found = {m: sorted(i for i in imported if stage_of(i) > stage_of(m)) for m, imported in imports.items()}
    return {m: later for m, later in found.items() if later}


def test_cuda_bench_modules_import_only_their_own_stage_and_earlier_ones():
    """foundations -> build -> results -> run -> compare -> publish -> commands -> the command line, visible in the
    folders: every module sits in the folder of its stage, no module imports one of a later stage (the check names a
    forward import put in), and no modules import each other in a circle, within a stage either."""
    imports = package_imports()
    assert {m.split(".")[0] for m in imports} == {*STAGES, "cli", "__main__"}
    assert forward(imports) == {}, "imports of a later stage"
    reaching = dict(imports, **{"results.history": imports["results.history"] | {"compare.paired"}})
    assert forward(reaching) == {"results.history": ["compare.paired"]}
    done, path = set(), []

    def visit(module):
        assert module not in path, f"an import circle: {' -> '.join(path[path.index(module):] + [module])}"
        if module not in done:
            path.append(module)
            for other in sorted(imports.get(module, ())):
                visit(other)
            path.pop()
            done.add(module)

    for module in imports:
        visit(module)


#: what reads results/, or makes what a page says of it: only the read layer (cuda_bench.publish.read) calls these for
#: the pages and reports
READERS = {("asv_files", "load_all"), ("asv_files", "load_machine"), ("asv_files", "commits"), ("asv_files", "suite"),
           ("history", "steps"), ("history", "work"), ("history", "missing_steps"), ("records", "read"),
           ("history", "merged_steps"), ("history", "work_of"), ("history", "missing_of"),
           ("overview", "rows_of"), ("summary", "landing"), ("summary", "releases"), ("summary", "regressions")}
#: of READERS, what the read layer calls: each file read once, the rest derived from what was read
READ_LAYER = {("asv_files", "load_all"), ("asv_files", "commits"), ("asv_files", "suite"), ("records", "read"),
              ("history", "merged_steps"), ("history", "work_of"), ("history", "missing_of"),
              ("overview", "rows_of"), ("summary", "landing"), ("summary", "releases"), ("summary", "regressions")}


def test_the_read_layer_reads_each_file_of_the_history_once(monkeypatch):
    """read.load opens every file of results/ at most once (asv's results files, the records, commits.json,
    benchmarks.json), however many machines and steps there are: everything else is derived from what was read."""
    import collections
    from pathlib import Path

    from cuda_bench.publish import read

    opened = collections.Counter()
    for method in ("read_text", "read_bytes"):
        real = getattr(Path, method)

        def counted(self, *args, _real=real, **kwargs):
            opened[self.resolve()] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Path, method, counted)
    history = read.load(ROOT / "results")
    mine = {path: n for path, n in opened.items() if path.is_relative_to(ROOT / "results")}
    assert len(history.runs) >= 30 and len(mine) >= len(history.runs) + 5
    assert max(mine.values()) == 1, sorted((n, str(p)) for p, n in mine.items() if n > 1)


def test_the_pages_and_reports_draw_from_the_read_layer_and_read_no_file():
    """Every page (cuda_bench/publish/pages/), the Markdown report, the nightly issue and README.md's section of what
    the dashboard says (report.py, commands/report.py, readme.py) are drawn from ``read.load``'s History: none of them
    calls what reads results/ or assembles what a page says of it (READERS), and none opens a file of it."""
    import ast

    package = ROOT / "cuda_bench"
    drawers = [*sorted((package / "publish" / "pages").glob("*.py")), package / "publish" / "report.py",
               package / "commands" / "report.py", package / "publish" / "readme.py"]
    for path in drawers:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                assert (node.value.id, node.attr) not in READERS, f"{path.name} calls {node.value.id}.{node.attr}"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                # asv_site reads asv's own published files, readme README.md: neither reads results/
                assert node.func.attr not in ("read_text", "read_bytes") or path.name in ("asv_site.py", "readme.py"), \
                    f"{path.name} reads a file"
    used = {(node.value.id, node.attr) for node in ast.walk(ast.parse((package / "publish" / "read.py").read_text()))
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    assert READ_LAYER <= used and READ_LAYER <= READERS


def command_imports(path, commands):
    """The commands of ``commands`` that the module at ``path`` imports, however it names them."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[2] for a in node.names
                      if a.name.startswith("cuda_bench.commands.")}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:  # from . import x, from .x import y
                module = "cuda_bench.commands" + (f".{module}" if module else "")
            if module == "cuda_bench.commands":
                found |= {a.name for a in node.names}
            elif module.startswith("cuda_bench.commands."):
                found.add(module.split(".")[2])
    return found & commands


def test_no_command_imports_another_command():
    """A command is one module that the command line dispatches to; what commands share is in the
    library (the counting pass that counts, compare and run each make: ``countpass``) or in
    ``commands.common`` (options, checks), so no command imports another, and none depends on
    another's options or internals. ``commands/__init__`` alone imports them all: it is the table
    the command line reads."""
    package = ROOT / "cuda_bench" / "commands"
    commands = {p.stem for p in package.glob("*.py")} - {"__init__", "common"}
    assert {"counts", "compare", "run", "plan"} <= commands
    found = {path.stem: sorted(command_imports(path, commands))
             for path in sorted(package.glob("*.py")) if path.stem != "__init__"}
    assert {name: imported for name, imported in found.items() if imported} == {}
    assert command_imports(package / "__init__.py", commands) == commands


#: the modules that run inside benchmark environments, where nothing of the project is installed
STANDARD_LIBRARY_ONLY = ["foundations.status", "foundations.paths", "foundations.process", "foundations.names",
                         "foundations.suite", "foundations.counts", "foundations.callgrind", "foundations.instructions",
                         "build.toolkit", "build.trees", "build.wheels", "build.environment", "build.carry", "build",
                         "run.worker", "run.apis"]


def test_build_and_worker_need_only_the_standard_library():
    """They run inside benchmark environments, where nothing of the project is installed; so every package they pass
    through (``__init__.py``) imports nothing."""
    import ast

    for name in STANDARD_LIBRARY_ONLY:
        code = f"import sys; sys.modules['json5'] = None; sys.modules['asv'] = None; import cuda_bench.{name}"
        proc = subprocess.run([sys.executable, "-S", "-c", code], cwd=ROOT, capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)
    faces = sorted((ROOT / "cuda_bench").rglob("__init__.py"))
    assert len(faces) == 9
    assert [f for f in faces if f.parent.name != "commands" and any(
        isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.walk(ast.parse(f.read_text())))] == []


def test_one_rule_names_a_release():
    """names.is_release_tag: the ladder (asvrun.release_ladder) and the pages' names of a commit
    (asv_files.release_name) take the same tags: releases, not release candidates nor other tags."""
    from cuda_bench.foundations.names import is_release_tag
    from cuda_bench.results import asv_files

    assert is_release_tag("cuda-core-v0.3.2") and is_release_tag("cuda-core-v1.10.0")
    assert not any(map(is_release_tag, ["cuda-core-v0.4.0rc1", "v13.0.0", "cuda-pathfinder-v1.3.0", "cuda-core-v0.3"]))
    tags = ["cuda-core-v0.4.0rc1", "cuda-core-v0.3.2", "v13.0.0"]
    assert asv_files.release_name({"tags": tags}) == "cuda-core-v0.3.2"
    assert asv_files.release_name({"tags": ["cuda-core-v0.4.0rc1"]}) is None
    assert asv_files.commit_name("c" * 40, {"c" * 40: {"tags": ["cuda-core-v0.4.0rc1"]}}) == "c" * 9



def test_the_method_lists_the_glossarys_words():
    """docs/method.md's section Words is the glossary's entries (``cuda_bench.foundations.words``), as
    ``python -m cuda_bench.foundations.words`` writes them: one list, one source."""
    from cuda_bench.foundations import words

    text = (ROOT / "docs" / "method.md").read_text()
    start, end = words.method_section(text)
    assert text[start:end] == words.markdown(), "docs/method.md: run python -m cuda_bench.foundations.words"
    assert text[:start].endswith("## Words\n\n") and text[end:].startswith("\n## ")


def test_readme_names_every_operation():
    """README's suite table is where a maintainer looks a benchmark up: every operation class is in it."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## The suite"):readme.index("### C++ twins")]
    missing = [cls.__name__ for _, cls in OPS if f"`{cls.__name__}`" not in table]
    assert not missing, f"README's suite table does not name {missing}"


#: words that narrate how the tool was made rather than what it does: a session number, a machine called lent
HISTORY = re.compile(r"\bsessions? ?\d+|\bthe\s+lent\b", re.IGNORECASE)


def test_the_product_says_what_it_does_not_how_it_was_made():
    """Code, docs, tests, scripts, workflows and records say what the tool does and why, in the present tense: no
    session numbers, no machine called lent (dated changes for users are in CHANGELOG.md). This file too."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in tracked:
        path = ROOT / name
        if not path.is_file() or path.suffix in (".png", ".gz", ".whl"):
            continue
        text = path.read_text(errors="replace")
        found += [f"{name}: {m.group(0)!r}" for m in HISTORY.finditer(text)]
    assert found == [], found[:20]


def test_a_ratio_is_written_as_text_in_one_place():
    """Every ratio the pages and reports print is written by cuda_bench.foundations.text (times, times_span, interval):
    no f-string or concatenation of the package puts '×' before a number itself, and graph.js writes its ratios
    with one helper of its own that writes them the same way."""
    import ast
    import re

    package = ROOT / "cuda_bench"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "text.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.JoinedStr):
                for part, after in zip(node.values, node.values[1:]):
                    if isinstance(part, ast.Constant) and str(part.value).endswith("×") and \
                            isinstance(after, ast.FormattedValue):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)) and \
                    isinstance(node.left, ast.Constant) and re.search(r"×(%[.\d]*[sfd])?$", str(node.left.value)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, f"a ratio written outside cuda_bench/foundations/text.py: {found}"
    script = (ROOT / "cuda_bench" / "publish" / "site" / "graph.js").read_text()
    assert script.count("×") == 1 and "return '×' + value.toFixed(" in script


def test_every_module_and_function_stays_a_size_one_reads_whole():
    """No module of the package runs past 600 lines, and no function past 80: a change has one room,
    and a function fits a screen or two."""
    import ast

    too_long = []
    for path in sorted((ROOT / "cuda_bench").rglob("*.py")):
        text = path.read_text()
        name = path.relative_to(ROOT)
        if len(text.splitlines()) > 600:
            too_long.append(f"{name}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > 80:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert not too_long, too_long


def test_an_option_several_commands_take_is_declared_once():
    """--repo, --bindings, --machine, --bench, --no-counts and --block are declared in commands/common.py alone
    (asv's commands/common_args.py is the model): each command that takes one calls its function there."""
    import re

    shared = ("--repo", "--bindings", "--machine", "--bench", "--no-counts", "--block")
    for path in sorted((ROOT / "cuda_bench" / "commands").glob("*.py")):
        if path.name == "common.py":
            continue
        declared = re.findall(r"add_argument\(\s*\"(--[a-z-]+)\"", path.read_text())
        assert not set(declared) & set(shared), f"{path.name} declares {sorted(set(declared) & set(shared))}"
    common = (ROOT / "cuda_bench" / "commands" / "common.py").read_text()
    assert all(len(re.findall(rf"add_argument\(\s*\"{o}\"", common)) == 1 for o in shared)


def test_every_mutation_names_code_that_is_there():
    """Each bug tests/mutations.py puts back replaces code the package holds once: an anchor left behind by a
    move is a mutation that would guard nothing."""
    sys.path.insert(0, str(ROOT / "tests"))
    import mutations

    stale = [(name, path, (ROOT / path).read_text().count(old) if (ROOT / path).exists() else "no file")
             for name, path, old, *_ in mutations.MUTATIONS if not (ROOT / path).exists()
             or (ROOT / path).read_text().count(old) != 1]
    assert stale == []
    named = {t.split("::")[0] for *_, tests in (m[:5] for m in mutations.MUTATIONS) for t in tests}
    assert [t for t in named if not (ROOT / t).exists()] == []


def headings(doc):
    return [line.lstrip("#").strip().replace("`", "") for line in doc.read_text().splitlines() if line.startswith("#")]


def test_every_doc_a_message_points_to_names_a_section_that_exists():
    """A message, docstring or comment of the package that sends the reader to a document names a file that exists
    and, where it names one, a section, a rule of docs/method.md or an anchor that the document has."""
    import ast
    import tokenize

    said = []
    for path in sorted((ROOT / "cuda_bench").rglob("*.py")):
        said += [n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str)]
        with path.open() as f:
            said += [t.string for t in tokenize.generate_tokens(f.readline) if t.type == tokenize.COMMENT]
    said = [" ".join(text.replace("#", " ", 1 if text.startswith("#") else 0).split()) for text in said]
    pointers = 0
    for text in said:
        for doc, title in re.findall(r"\b(README|docs/[\w-]+\.md)(?:'s)?,? (?:section )?['\"]([^'\"]+)['\"]", text):
            path = ROOT / ("README.md" if doc == "README" else doc)
            assert title in headings(path), f"{text!r}: {doc} has no section {title!r}"
            pointers += 1
        for rule in re.findall(r"docs/method\.md, rules? (\d+)", text):
            assert any(h.startswith(f"{rule}. ") for h in headings(ROOT / "docs/method.md")), text
            pointers += 1
        for doc, anchor in re.findall(r"\b([\w-]+\.md)#([\w-]+)", text):
            slugs = {re.sub(r"[^\w -]", "", h.lower()).replace(" ", "-") for h in headings(ROOT / "docs" / doc)}
            assert anchor in slugs, f"{text!r}: docs/{doc} has no #{anchor}"
            pointers += 1
        for doc in re.findall(r"\b(docs/[\w/-]+\.md)\b", text):
            assert (ROOT / doc).exists(), text
    assert pointers >= 5  # the test reads the pointers it checks


PASSES_AND_FAILS = '''
def test_passes(tmp_path):
    (tmp_path / "big").write_bytes(bytes(1 << 20))


def test_fails(tmp_path):
    (tmp_path / "big").write_bytes(bytes(1 << 20))
    assert {fails}
'''


def test_a_test_run_leaves_only_the_newest_runs_failed_tests_temporary_folders(tmp_path):
    """pytest, with the project's settings (pyproject.toml), removes a test's temporary folder when it passes and
    keeps a failed test's, of the newest run only: test runs do not pile hundreds of MB each into the system's
    temporary folder."""
    root = tmp_path / "temproot"
    root.mkdir()
    (tmp_path / "tests").mkdir()

    def run(fails):
        (tmp_path / "tests" / "test_it.py").write_text(PASSES_AND_FAILS.format(fails=not fails))
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                               str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path), str(tmp_path / "tests")],
                              capture_output=True, text=True, env=dict(os.environ, PYTEST_DEBUG_TEMPROOT=str(root)))

    def left():
        return sorted(str(p.relative_to(root)) for p in root.rglob("big"))

    assert run(fails=False).returncode == 0 and left() == []
    for _ in range(2):
        assert run(fails=True).returncode == 1
    (kept,) = left()  # the failed test's folder of the newest run; no passed test's, no older run's
    assert re.fullmatch(r"pytest-of-[^/]+/pytest-\d+/test_fails0/big", kept), kept
