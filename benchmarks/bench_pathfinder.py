"""cuda.pathfinder's discovery of CUDA components in installed wheels (cuda-python's public_discovery benchmarks):
the header, binary-utility and static-library lookups through the public API. No GPU.

As upstream times them: cold, every call first clears pathfinder's process-lifetime caches (its directory-scan
cache and the lookup's own), the first use in a fresh process, the clearing included in the time. The tree
searched is made in setup, in a temporary directory, in the layout of NVIDIA's wheels (``nvidia/cuda_runtime/
include``, ``nvidia/cuda_nvcc/bin``, ...), and ``site.getsitepackages`` is pointed at 1 or 3 roots of it with
the component in the last (a virtual environment, user and system site-packages: the whole search order);
the user site is switched off (pathfinder before 1.3.4 searches it regardless: there it is a missing
directory in the same tree). Setup checks that the lookup finds the component in that tree, or the case skips: the
lookup would be another one. Teardown restores ``site`` and removes the tree.
"""

import os
import shutil
import site
import tempfile
from pathlib import Path

from . import _compat as compat
from ._op import Op


class _Discovery(Op):
    """A cold public lookup of ``NAME`` through ``pathfinder.<FUNCTION>`` in a tree of ``roots`` site roots whose
    last holds ``FILE`` (found: the file, or its directory where ``FINDS_DIRECTORY``); ``CACHED``: the functions
    of the lookup's module whose caches it must miss too."""

    FUNCTION = NAME = FILE = ""
    CACHED = ()
    EXECUTABLE = FINDS_DIRECTORY = False
    gpu_free = ("pathfinder",)
    unroll = 1  # 30-50 us a lookup: asv's loop is noise here
    cases = {"roots": ["1", "3"]}

    def pathfinder(self, roots):
        find = getattr(compat.pathfinder, self.FUNCTION)
        self.target = target = self._tree(int(roots))
        module = getattr(find, "__wrapped__", find).__globals__
        clears = compat.pathfinder_cache_clears(find, *filter(None, map(module.get, self.CACHED)))

        def cold(find=find, name=self.NAME, clears=clears):
            for clear in clears:
                clear()
            return find(name)

        try:
            found = cold()
        except Exception as exc:
            raise compat.Unavailable(
                f"{compat.describe('pathfinder')} {self.FUNCTION}({self.NAME!r}): {exc!r}") from exc
        found = getattr(found, "abs_path", found)
        expected = target.parent if self.FINDS_DIRECTORY else target
        if not found or os.path.realpath(found) != os.path.realpath(expected):
            raise compat.Unavailable(f"{compat.describe('pathfinder')} {self.FUNCTION}({self.NAME!r}) found {found!r}, "
                                     f"not {str(expected)!r}: not the lookup cuda-python times")
        return cold, ()

    def _tree(self, roots):
        """The site roots, ``site`` pointed at them (restored in teardown); the path of ``FILE``."""
        tree = Path(tempfile.mkdtemp(prefix="pathfinder-bench-"))
        self.defer(shutil.rmtree, tree, True)
        site_roots = [tree / f"site-root-{i}" for i in range(3)][-roots:]
        for root in site_roots:
            root.mkdir()
        target = site_roots[-1] / self.FILE
        target.parent.mkdir(parents=True)
        target.touch()
        if self.EXECUTABLE:
            target.chmod(0o755)
        saved = site.getsitepackages, site.getusersitepackages, site.ENABLE_USER_SITE
        self.defer(_restore_site, *saved)
        site.getsitepackages = lambda paths=tuple(map(str, site_roots)): list(paths)
        site.getusersitepackages = lambda path=str(tree / "user-site"): path  # absent
        site.ENABLE_USER_SITE = False
        return target


def _restore_site(getsitepackages, getusersitepackages, enable_user_site):
    site.getsitepackages, site.getusersitepackages, site.ENABLE_USER_SITE = (
        getsitepackages, getusersitepackages, enable_user_site)


class FindNvidiaHeaderDirectory(_Discovery):
    """``find_nvidia_header_directory("cudart")``, cold (cuda-python's ``header_cold_1_root`` and
    ``header_cold_3_roots``): the directory of ``cuda_runtime.h`` in ``nvidia/cuda_runtime/include``."""

    FUNCTION, NAME, FILE = "find_nvidia_header_directory", "cudart", "nvidia/cuda_runtime/include/cuda_runtime.h"
    CACHED = ("locate_nvidia_header_directory",)
    FINDS_DIRECTORY = True
    needs = {"pathfinder": ("pathfinder.find_nvidia_header_directory",)}

    def time_find_nvidia_header_directory(self, api, roots):
        self.body()


class FindNvidiaBinaryUtility(_Discovery):
    """``find_nvidia_binary_utility("nvdisasm")``, cold (cuda-python's ``binary_cold_1_root`` and
    ``binary_cold_3_roots``): the executable ``nvidia/cuda_nvcc/bin/nvdisasm``."""

    FUNCTION, NAME, FILE = "find_nvidia_binary_utility", "nvdisasm", "nvidia/cuda_nvcc/bin/nvdisasm"
    EXECUTABLE = True
    needs = {"pathfinder": ("pathfinder.find_nvidia_binary_utility",)}

    def time_find_nvidia_binary_utility(self, api, roots):
        self.body()


class LocateStaticLib(_Discovery):
    """``locate_static_lib("cudadevrt")``, cold (cuda-python's ``static_lib_cold_3_roots``):
    ``nvidia/cuda_runtime/lib/libcudadevrt.a``."""

    FUNCTION, NAME, FILE = "locate_static_lib", "cudadevrt", "nvidia/cuda_runtime/lib/libcudadevrt.a"
    cases = {"roots": ["3"]}
    needs = {"pathfinder": ("pathfinder.locate_static_lib",)}

    def time_locate_static_lib(self, api, roots):
        self.body()
