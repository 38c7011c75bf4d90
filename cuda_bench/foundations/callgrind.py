"""Valgrind's callgrind, as the instruction pass uses it (``cuda_bench.foundations.instructions``):
the command a worker runs under, the client requests the worker makes, a dump file read into its
counts per function, and names for the functions a stripped extension module leaves unnamed.

A worker runs under ``valgrind --tool=callgrind --instr-atstart=no --collect-atstart=no``: nothing
is instrumented while it imports, sets a case up and warms it up (the program runs about five times
slower than natively instead of about fifty), and nothing is counted but what the worker switches
on. Around each counted run it makes three client requests: collection on, collection off (in the
calling thread: callgrind keeps the switch per thread, so the driver's own threads are never
counted) and a dump with a label (``callgrind.out.<pid>.<n>``, one file per run).

A client request is a special instruction sequence that valgrind recognises and that does nothing
natively. Python has no inline assembly, so :class:`Requests` writes valgrind.h's sequence for
amd64 into an executable page and calls it through ctypes. Standard library only: it runs inside
benchmark environments, where nothing of the project is installed.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import mmap
import os
import platform
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

# valgrind.h's VALGRIND_DO_CLIENT_REQUEST_EXPR for amd64 Linux, as a function
# uint64_t request(uint64_t *args, uint64_t default):
#   mov rax, rdi; mov rdx, rsi        the arguments' address; the value natively
#   rol rdi, 3; rol rdi, 13           the preamble (rdi turned by 128 bits: unchanged)
#   rol rdi, 61; rol rdi, 51
#   xchg rbx, rbx                     the request: rdx = request(rax) under valgrind
#   mov rax, rdx; ret
REQUEST_CODE = bytes.fromhex("4889f84889f248c1c70348c1c70d48c1c73d48c1c7334887db4889d0c3")
RUNNING_ON_VALGRIND = 0x1001
_CALLGRIND = (ord("C") << 24) | (ord("T") << 16)  # callgrind.h's VG_USERREQ_TOOL_BASE('C', 'T')
TOGGLE_COLLECT = _CALLGRIND + 2
DUMP_STATS_AT = _CALLGRIND + 3
START_INSTRUMENTATION = _CALLGRIND + 4
STOP_INSTRUMENTATION = _CALLGRIND + 5

WARM_REQUESTS = 2048
#: where a worker's dumps go: the path given to --callgrind-out-file (``%p``: the process id)
OUT_VARIABLE = "CUDA_BENCH_CALLGRIND_OUT"
#: which valgrind the instruction pass runs (else ``valgrind`` on PATH)
VALGRIND_VARIABLE = "CUDA_BENCH_VALGRIND"


class Requests:
    """Callgrind's client requests from this process (amd64 Linux); natively each does nothing and
    :meth:`running` is 0. ``dumps`` counts the dumps made, which callgrind numbers from 1."""

    def __init__(self):
        if platform.machine() not in ("x86_64", "AMD64"):
            raise RuntimeError(
                f"valgrind client requests are written for x86_64, not {platform.machine()}"
            )
        self._page = mmap.mmap(
            -1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC
        )
        self._page.write(REQUEST_CODE)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        kind = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64)
        self._call = kind(address)
        self._args = (ctypes.c_uint64 * 6)()
        self.dumps = 0
        # CPython cannot specialise the calls below (a ctypes array, a ctypes function) and retries
        # after 1, 2, 4, ... calls; a retry inside a count lands in some runs only: retried here,
        # until the next retry is thousands of requests away
        for _ in range(WARM_REQUESTS):
            self.request(RUNNING_ON_VALGRIND)

    def request(self, code, argument=0):
        self._args[0], self._args[1] = code, argument
        return self._call(self._args, 0)

    def running(self):
        """How many valgrinds this process runs under: 0 natively."""
        return self.request(RUNNING_ON_VALGRIND)

    def toggle(self):
        """Collection on or off, in this thread."""
        self.request(TOGGLE_COLLECT)

    def instrument(self, on):
        """Instrumentation on or off (each switch drops valgrind's translations)."""
        self.request(START_INSTRUMENTATION if on else STOP_INSTRUMENTATION)

    def dump(self, label):
        """Write what was collected since the last dump to the next dump file, ``label`` in its
        ``desc: Trigger`` line, and zero the counts; the file's number."""
        text = ctypes.create_string_buffer(label.encode()[:200])
        self.request(DUMP_STATS_AT, ctypes.addressof(text))
        self.dumps += 1
        return self.dumps


@functools.cache
def requests():
    """This process's :class:`Requests`."""
    return Requests()


def dump_file(template, pid, number):
    """The path of dump ``number`` of process ``pid`` (``--callgrind-out-file=template``)."""
    return f"{template.replace('%p', str(pid))}.{number}"


# --- the command ----------------------------------------------------------------------------------
def find():
    """(the valgrind to run, None) or (None, why there is none): ``$CUDA_BENCH_VALGRIND``, else
    ``valgrind`` on PATH, either with its callgrind tool."""
    named = os.environ.get(VALGRIND_VARIABLE)
    path = named or shutil.which("valgrind")
    if not path or not Path(path).is_file():
        return None, (
            f"no valgrind at {named} ({VALGRIND_VARIABLE})"
            if named
            else "no valgrind on PATH (set CUDA_BENCH_VALGRIND, or see docs/guide.md's "
            "instructions per call)"
        )
    try:
        done = subprocess.run(
            [path, "--tool=callgrind", "--version"], capture_output=True, text=True, timeout=60
        )
    except OSError as exc:
        return None, f"{path} does not run: {exc}"
    if done.returncode or not done.stdout.startswith("valgrind-"):
        said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"{path} --tool=callgrind does not run: {said[0]}"
    return path, None


def version(valgrind):
    """``3.19.0`` of ``valgrind-3.19.0``: counts are compared only between runs of one version."""
    # with its tool named: a carried valgrind holds callgrind alone, and the launcher starts the
    # default tool (memcheck) even for --version
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--version"], capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip().removeprefix("valgrind-")


def command(valgrind, template):
    """The command a counting worker runs under: nothing instrumented nor collected until it says,
    each dump to ``template`` (``%p``: its process id)."""
    return [
        valgrind,
        "--tool=callgrind",
        "--instr-atstart=no",
        "--collect-atstart=no",
        f"--callgrind-out-file={template}",
    ]


# --- a dump file ----------------------------------------------------------------------------------
@dataclass
class Dump:
    """One dump: its label, its total (instructions: the ``Ir`` event) and per function
    ``{(name, object): [self, inclusive]}``. Inclusive is callgrind_annotate's: the calls into a
    function, or for one never called within the dump its own cost and its calls'."""

    label: str
    total: int
    functions: dict = field(default_factory=dict)


_NAMED = re.compile(r"\((\d+)\)(?: (.*))?$")


def total(path, tail=4096):
    """The count of callgrind's file at ``path`` from its ``totals:`` line, read from the file's end
    (the line is its last) without the functions before it: what a worker reads of its own dumps
    while it counts (None where the file has none). Not the header's ``summary:``: that is the
    process's cost so far, which with client requests (the toggles and dumps of a count) can be
    larger than this dump's; ``totals:`` is this dump's alone (iai-callgrind reads it first for the
    same reason)."""
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - tail))
        lines = f.read().decode(errors="replace").splitlines()
    for line in reversed(lines):
        if line.startswith("totals:"):
            return int(line.split()[1])
    return None


def read(path):
    """The :class:`Dump` in callgrind's file at ``path`` (names compressed or not, positions of one
    or two columns; the first event is the count read)."""
    names = {"fn": {}, "ob": {}}

    def named(kind, text):
        found = _NAMED.match(text)
        if not found:
            return text
        key, name = found.groups()
        if name is not None:
            names[kind][key] = name
        return names[kind].get(key, f"({key})")

    own, into, out = collections.Counter(), collections.Counter(), collections.Counter()
    called = set()
    label, total, positions = "", None, 1
    fn = callee = None
    obj = callee_obj = ""
    pending = False
    with open(path, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            first = line[:1]
            if first and (first.isdigit() or first in "+-*"):
                parts = line.split()
                cost = int(parts[positions]) if len(parts) > positions else 0
                if pending:
                    into[callee] += cost
                    out[fn] += cost
                    called.add(callee)
                    pending = False
                else:
                    own[fn] += cost
            elif line.startswith("fn="):
                fn = (named("fn", line[3:]), Path(obj).name)
                own[fn] += 0
            elif line.startswith("ob="):
                obj = named("ob", line[3:])
            elif line.startswith("cob="):
                callee_obj = named("ob", line[4:])
            elif line.startswith("cfn="):
                callee = (named("fn", line[4:]), Path(callee_obj or obj).name)
                callee_obj = ""
            elif line.startswith("calls="):
                pending = True
            elif line.startswith("positions:"):
                positions = len(line.split()) - 1
            elif line.startswith("totals:"):
                total = int(line.split()[1])
            elif line.startswith("desc: Trigger: Client Request: "):
                label = line.removeprefix("desc: Trigger: Client Request: ")
    functions = {
        key: [own[key], into[key] if key in called else own[key] + out[key]]
        for key in own.keys() | into.keys()
    }
    if total is None:
        total = sum(own.values())
    return Dump(label, total, functions)


# --- names for what a stripped module leaves unnamed ----------------------------------------------
# PyTypeObject's slots named here (their offsets on 64-bit CPython 3.8-3.13), and the descriptors'
# C functions: PyWrapperDescrObject.d_wrapped, PyMethodDescrObject.d_method -> ml_meth,
# PyGetSetDescrObject.d_getset -> get, set, a builtin or Cython function's m_ml -> ml_meth
TYPE_SLOTS = {48: "__dealloc__", 120: "__hash__", 128: "__call__", 200: "__richcmp__",
              296: "__init__", 312: "__new__"}  # fmt: skip
_DESCRIPTOR_HEAD = 40  # PyObject_HEAD, d_type, d_name, d_qualname


def _pointer(address):
    return ctypes.c_void_p.from_address(address).value


def _functions_of(qualname, value, module_name):
    """(C function address, name) of what ``value`` (a class or function of the extension module
    ``module_name``) runs."""
    kind = type(value).__name__
    if isinstance(value, type):
        if value.__module__ != module_name:
            return
        for offset, slot in TYPE_SLOTS.items():
            yield _pointer(id(value) + offset), f"{qualname}.{slot}"
        for name, attr in vars(value).items():
            yield from _functions_of(f"{qualname}.{name}", attr, module_name)
    elif kind == "wrapper_descriptor":
        yield _pointer(id(value) + _DESCRIPTOR_HEAD + 8), qualname
    elif kind in ("method_descriptor", "classmethod_descriptor"):
        yield _pointer(_pointer(id(value) + _DESCRIPTOR_HEAD) + 8), qualname
    elif kind == "getset_descriptor":
        getset = _pointer(id(value) + _DESCRIPTOR_HEAD)
        yield _pointer(getset + 8), f"{qualname} (get)"
        yield _pointer(getset + 16), f"{qualname} (set)"
    elif kind in ("builtin_function_or_method", "cython_function_or_method"):
        if getattr(value, "__module__", None) == module_name:
            yield _pointer(_pointer(id(value) + 16) + 8), qualname
    elif kind in ("staticmethod", "classmethod"):
        yield from _functions_of(qualname, value.__func__, module_name)


def _mapped():
    """{file: (where its offset 0 is mapped, [(start, end) of each of its mappings])} of this
    process (/proc/self/maps)."""
    found = {}
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or not parts[5].startswith("/"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            base, ranges = found.setdefault(parts[5].strip(), [None, []])
            ranges.append((start, end))
            if int(parts[2], 16) == 0 and base is None:
                found[parts[5].strip()][0] = start
    return found


def unnamed_functions(prefixes=("cuda.", "cupy")):
    """{object file name: {callgrind's name of an unnamed function ("0x" and its address in the
    file, 16 digits): its Python name}} for the C functions of the classes and functions of the
    extension modules loaded whose names start with ``prefixes``: their types' slots (``__init__``,
    ``__new__``, ...), methods, properties and module functions. A stripped build (cuda_core's
    are linked ``--strip-all``) leaves these unnamed in callgrind's files; a C function that Python
    cannot reach (a ``cdef`` function) stays unnamed."""
    import sys

    mapped = _mapped()
    found = {}
    for module_name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if not module_name.startswith(prefixes) or not path.endswith(".so"):
            continue
        base, ranges = mapped.get(os.path.realpath(path), (None, ()))
        if base is None:
            continue
        mine = found.setdefault(Path(path).name, {})
        for name, value in list(vars(module).items()):
            try:
                pairs = list(_functions_of(name, value, module_name))
            except (TypeError, ValueError, AttributeError):
                continue
            for address, qualname in pairs:
                if address and any(start <= address < end for start, end in ranges):
                    mine.setdefault(f"0x{address - base:016x}", qualname)
    return {name: table for name, table in found.items() if table}
