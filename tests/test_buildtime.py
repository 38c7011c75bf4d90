"""Build time per package tree (cuda_bench.results.buildtime, wheels.compile_record): what a real pip wheel's children
cost in CPU seconds, one record per tree compiled, and the flag between adjacent built trees that needs to clear
what one tree's rebuilds spread by."""

from __future__ import annotations

from cuda_bench.results import buildtime, records

HOST = {"start": "boot-1", "boot": "1"}


def built(package, tree, commit, cpu, when, cython="3.0.12", jobs=16, ccache=False):
    """A build record's package entry, as wheels.build_one writes it, in a build record of ``commit``."""
    versions = {"python": "3.12.3", "cython": cython, "setuptools": "80.9.0", "compiler": "gcc (GCC) 13.3.0"}
    return {"commit": commit, "packages": {package: {
        "action": "built", "key": tree, "seconds": cpu / jobs, "wheels": [],
        "compile": {"built": when, "wall_seconds": cpu / jobs, "cpu_seconds": cpu, "jobs": jobs, "ccache": ccache,
                    "versions": versions}}}}


ORDER = ["c1", "c2", "c3", "c4"]


def place(commit):
    return ORDER.index(commit)


def kept(folder, rows):
    """``rows`` (build records) kept as a run keeps them: the history's compile records."""
    buildtime.keep(folder, rows, HOST)
    return records.read(folder, "compile")


def test_a_doubling_with_a_cython_change_is_flagged_by_name_once_one_tree_was_built_twice(tmp_path):
    rows = [built("cuda_bindings", "t1", "c1", 400.0, "2026-01-01T00:00:00Z"),
            built("cuda_bindings", "t2", "c2", 412.0, "2026-01-02T00:00:00Z"),
            built("cuda_bindings", "t3", "c3", 840.0, "2026-01-03T00:00:00Z", cython="3.1.0")]
    compiles = kept(tmp_path, rows)
    found, unjudged = buildtime.flags(compiles, place)
    assert found == [] and "no tree of cuda_bindings built twice" in unjudged["cuda_bindings"]
    # the same tree built again on a fresh machine: 4 % apart
    compiles = kept(tmp_path, rows + [built("cuda_bindings", "t1", "c1", 416.0, "2026-01-04T00:00:00Z")])
    assert len(compiles) == 4  # a build record kept again adds nothing; a rebuild adds its own
    assert buildtime.spread(compiles, "cuda_bindings")[:2] == (1.04, "t1")
    (flag,), unjudged = buildtime.flags(compiles, place)
    assert unjudged == {}
    assert (flag["base"]["tree"], flag["head"]["tree"], flag["ratio"]) == ("t2", "t3", 2.039)
    assert flag["changed"] == ["Cython 3.0.12 → 3.1.0"]
    line = buildtime.flag_line(flag)
    assert "412 → 840 CPU seconds (×2.04" in line and "Cython 3.0.12 → 3.1.0 (unpaired)" in line
    assert [row["tree"] for row in buildtime.series(compiles, place)["cuda_bindings"]] == ["t1", "t2", "t3"]


def test_a_change_within_the_rebuild_spread_or_through_ccache_is_not_flagged(tmp_path):
    rows = [built("cuda_core", "t1", "c1", 40.0, "2026-01-01T00:00:00Z"),
            built("cuda_core", "t1", "c1", 58.0, "2026-01-02T00:00:00Z"),  # one tree, ×1.45 apart
            built("cuda_core", "t2", "c2", 70.0, "2026-01-03T00:00:00Z"),  # ×1.43 over t1's median, 49
            built("cuda_core", "t3", "c3", 7.0, "2026-01-04T00:00:00Z", ccache=True)]
    found, _ = buildtime.flags(kept(tmp_path, rows), place)
    assert found == []
    rows.append(built("cuda_core", "t4", "c4", 140.0, "2026-01-05T00:00:00Z", jobs=8))
    (flag,), _ = buildtime.flags(kept(tmp_path, rows), place)
    assert (flag["base"]["tree"], flag["head"]["tree"], flag["changed"]) == ("t2", "t4", ["jobs 16 → 8"])
