"""The reference clock (benchmarks/_clock.py): its arithmetic, its switch, and what real asv records with it."""

from __future__ import annotations

import json
import os
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT))
import bench  # noqa: E402
import noise_probe  # noqa: E402
from benchmarks import _clock  # noqa: E402


class Scripted:
    """A time source the test advances by hand, and a reference body that costs what the test says."""

    def __init__(self):
        self.t = 100.0
        self.reference_call_s = 1e-7

    def now(self):
        return self.t

    def call(self):
        self.t += self.reference_call_s


def clock_on(script, reference_ns):
    clock = _clock.ReferenceClock(reference_ns)
    clock._now, clock._call = script.now, script.call
    return clock


def sample(clock, script, seconds, reference_call_s):
    """One timed sample as timeit takes it: clock(), the work, clock(); the machine at one speed."""
    script.reference_call_s = reference_call_s
    start = clock()
    script.t += seconds
    return clock() - start


def test_a_sample_at_half_speed_reads_what_it_takes_at_full_speed():
    script = Scripted()
    clock = clock_on(script, reference_ns=100)  # the reference costs 100 ns at full speed
    full = sample(clock, script, 1e-3, reference_call_s=100e-9)
    half = sample(clock, script, 2e-3, reference_call_s=200e-9)  # everything twice slower, reference too
    assert full == pytest.approx(1e-3)
    assert half == pytest.approx(1e-3)


def test_the_reference_is_outside_the_timed_interval_and_the_clock_only_moves_forward():
    script = Scripted()
    clock = clock_on(script, reference_ns=100)
    readings = []
    for seconds in (1e-3, 0.0, 5e-3):
        readings.append(clock())
        script.t += seconds
        readings.append(clock())
    # reference blocks cost 5 x 100 calls x 100 ns each time the clock is read; none of it is counted
    assert [b - a for a, b in zip(readings[::2], readings[1::2])] == pytest.approx([1e-3, 0.0, 5e-3])
    assert readings == sorted(readings)


def test_a_bad_reference_is_a_clear_error(monkeypatch):
    monkeypatch.setenv(_clock.ENV, "fast")
    with pytest.raises(ValueError, match="CUDA_BENCH_REFERENCE_NS must be a number"):
        _clock.timer()
    with pytest.raises(ValueError, match="positive"):
        _clock.ReferenceClock(0)
    monkeypatch.delenv(_clock.ENV)
    assert _clock.timer() is _clock.timeit.default_timer


def test_clock_choice_follows_the_machine_table(monkeypatch, capsys):
    monkeypatch.setattr(bench, "load_conf", lambda: {"reference_ns": {"nvidia-h200": 77.5}})
    assert bench.clock_env("reference", "nvidia-h200") == {"CUDA_BENCH_REFERENCE_NS": "77.5"}
    assert bench.clock_env("wall", "nvidia-h200") == {"CUDA_BENCH_REFERENCE_NS": None}
    assert bench.clock_env("wall", "other") == {"CUDA_BENCH_REFERENCE_NS": None}
    with pytest.raises(SystemExit) as exit_info:
        bench.clock_env("reference", "other")
    assert exit_info.value.code == 2
    assert "--write-reference other" in capsys.readouterr().err


def test_write_reference_keeps_the_rest_of_the_config(tmp_path):
    import json5

    conf = tmp_path / "asv.conf.json"
    conf.write_text((bench.ROOT / "asv.conf.json").read_text())
    before = json5.loads(conf.read_text())
    noise_probe.write_reference(conf, "box-a", 81.24)
    noise_probe.write_reference(conf, "box-b", 90)
    noise_probe.write_reference(conf, "box-a", 79.96)
    after = json5.loads(conf.read_text())
    assert after.pop("reference_ns") == {**before.pop("reference_ns"), "box-a": 80.0, "box-b": 90}
    assert after == before
    assert conf.read_text().count("//") == (bench.ROOT / "asv.conf.json").read_text().count("//")


def test_real_asv_times_the_floor_with_the_reference_clock_as_a_separate_version(tmp_path, git_repo, newest_env,
                                                                                 monkeypatch):
    """Under the reference clock the floor reads about reference_ns (its body is the reference), far from
    its wall time, and asv records another benchmark version, so the two are never graphed together."""
    from conftest import asv_conf, asv_results, git

    monkeypatch.setenv("HOME", str(tmp_path))
    conf = asv_conf(tmp_path, git_repo, newest_env)
    assert bench.asv("machine", "--yes", "--machine", "clock", config=conf) == 0
    commit = git(git_repo, "rev-parse", "HEAD")
    found = {}
    for clock, results in (({"CUDA_BENCH_REFERENCE_NS": "1000"}, "reference"), ({}, "wall")):
        conf_data = json.loads(conf.read_text())
        conf_data["results_dir"] = str(tmp_path / results)
        conf.write_text(json.dumps(conf_data))
        status = bench.asv("run", "--machine", "clock", "--set-commit-hash", commit, "-b", "bench_harness",
                           "-a", "repeat=5", "-a", "rounds=1", "-E", f"existing:{newest_env}",
                           config=conf, timed=True, affinity="none", clock=clock)
        assert status == 0
        (path,) = [p for p in (tmp_path / results / "clock").glob("*.json") if p.name != "machine.json"]
        (value,) = asv_results(path).values()
        data = json.loads(path.read_text())
        version = data["results"]["bench_harness.Floor.time_noop"][data["result_columns"].index("version")]
        found[results] = (value[0] if isinstance(value, list) else value, version)
    (reference, reference_version), (wall, wall_version) = found["reference"], found["wall"]
    # 1 us by construction, give or take this machine's noise; the wall clock reads an int() call, ~0.1 us
    assert 0.5e-6 < reference < 2e-6 and wall < 0.4e-6, (reference, wall)
    assert reference_version.endswith("+reference-clock") and reference_version != wall_version
    assert os.environ.get("CUDA_BENCH_REFERENCE_NS") is None  # only the benchmark processes got it
