"""Publishing never loses the dashboard: html/ is replaced only by a complete new one, put back when the swap
fails, left as it was when publishing fails, and no folder of a publish stays behind. asv publish reads the
history from results/ alone (the plugin's ResultsRepo). No browser needed."""

from __future__ import annotations

import json

import pytest

from cuda_bench.foundations.paths import WORK
from cuda_bench.publish import dashboard
from cuda_bench.publish.pages import asv_site


def site_in(folder, text):
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text)
    (folder / "README.md").write_text("the dashboard\n")
    return folder


def test_a_complete_new_dashboard_takes_the_place_of_the_old(tmp_path):
    html = site_in(tmp_path / "html", "old")
    new = site_in(tmp_path / "work" / "html", "new")
    dashboard.swap_in(new, html, tmp_path / "work" / "old")
    assert (html / "index.html").read_text() == "new" and not new.exists()


def test_when_the_new_one_cannot_take_its_place_the_old_one_is_put_back(tmp_path):
    html = site_in(tmp_path / "html", "old")
    missing = tmp_path / "work" / "html"  # the rename of the new one fails: it is not there
    (tmp_path / "work").mkdir()
    with pytest.raises(FileNotFoundError):
        dashboard.swap_in(missing, html, tmp_path / "work" / "old")
    assert (html / "index.html").read_text() == "old" and (html / "README.md").exists()


def test_a_failed_publish_leaves_html_as_it_was_and_no_folder_behind(tmp_path):
    """asv publish fails here (its results come without asv's benchmarks.json): one line, html/ and its README
    untouched, nothing left in .asv/ or beside html/."""
    from conftest import ROOT

    html = site_in(tmp_path / "html", "old")
    results = tmp_path / "results" / "m"
    results.mkdir(parents=True)
    (results / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    data = json.loads(next((ROOT / "results" / "nvidia-h200").glob("cb56ab9f*.json")).read_text())
    (results / "cb56ab9f-x.json").write_text(json.dumps(data))
    conf = tmp_path / "asv.conf.json"
    conf.write_text(json.dumps({"version": 1, "project": "p", "repo": str(tmp_path / "no-such-repo"),
                                "branches": ["main"], "dvcs": "git", "env_dir": "env", "results_dir": "results",
                                "html_dir": "html", "benchmark_dir": str(ROOT / "benchmarks")}))
    before = set(WORK.glob("publish-*")) if WORK.exists() else set()
    with pytest.raises(dashboard.DashboardError, match="is as it was"):
        dashboard.publish(conf)
    assert (html / "index.html").read_text() == "old" and (html / "README.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asv.conf.json", "html", "results"]
    assert (set(WORK.glob("publish-*")) if WORK.exists() else set()) == before


def test_asv_reads_the_history_from_results_alone(tmp_path):
    """The plugin's repository for asv publish: commit order by date, release tags and main's first-parent line
    from results/commits.json, a measured commit it lacks left out (named, with the fix: nothing places it), ranges
    as git rev-list --first-parent gives them; no clone, no network."""
    from asv.repo import NoSuchNameError
    from conftest import ROOT

    from cuda_bench.publish import asv_plugin
    from cuda_bench.results import asv_files

    results_dir = tmp_path / "results"
    (results_dir / "m").mkdir(parents=True)
    (results_dir / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    data = json.loads(next((ROOT / "results" / "nvidia-h200").glob("cb56ab9f*.json")).read_text())
    a, b, c, d = (ch * 40 for ch in "abcd")
    (results_dir / "commits.json").write_text(json.dumps({
        a: {"title": "release", "date": 1000, "tags": ["cuda-core-v0.1.0", "cuda-core-v0.1.0rc1"], "position": None},
        b: {"title": "first", "date": 2000, "tags": [], "position": 10},
        c: {"title": "second", "date": 3000, "tags": [], "position": 11}}))
    for commit, date in ((a, 1000), (b, 2000), (c, 3000), (d, 4000)):
        (results_dir / "m" / f"{commit[:8]}-env.json").write_text(json.dumps(data | {"commit_hash": commit,
                                                                                    "date": date}))
    repo_class = asv_plugin.history_repo()
    repo_class.results_dir = str(results_dir)
    repo = repo_class("https://unreachable.invalid/cuda-python.git", "cuda-python")
    assert repo.get_tags() == {"cuda-core-v0.1.0": a, "cuda-core-v0.1.0rc1": a}
    assert repo.get_revisions({a, b, c, d}) == {a: 0, b: 1, c: 2}  # d: not in commits.json, on no page
    assert repo.get_branch_commits("main") == [c, b]
    assert repo.get_hash_from_name("cuda-core-v0.1.0") == a and repo.get_hash_from_name("main") == c
    assert repo.get_hash_from_name("bbbb") == b and repo.get_date_from_name(c) == 3000
    assert repo.get_hashes_from_range(f"{b}..{c}") == [c] and repo.get_hashes_from_range(c) == [c, b]
    assert [(p.name, why) for p, _, why in asv_files.noted(results_dir)] == [
        ("dddddddd-env.json", f"its commit {d[:9]} is not in commits.json; `cuda-bench publish --repo CLONE` records "
                              "it there from a clone of cuda-python that has it")]
    assert repo.get_name_from_hash(a) == "cuda-core-v0.1.0" and repo.get_name_from_hash(b) is None
    with pytest.raises(NoSuchNameError):
        repo.get_hash_from_name("cuda-core-v9.9.9")


def test_publish_with_a_clone_records_the_commits_results_lack(tmp_path, git_repo):
    """`cuda-bench publish --repo PATH` first adds to results/commits.json the measured commits it lacks (measured
    before it existed), from the clone; without --repo nothing is written and the pages name them by hash."""
    from conftest import ROOT, git

    from cuda_bench.commands import publish as command
    from cuda_bench.results import asv_files

    git(git_repo, "tag", "cuda-core-v0.9.0")
    head = git(git_repo, "rev-parse", "HEAD")
    results_dir = tmp_path / "results"
    (results_dir / "m").mkdir(parents=True)
    (results_dir / "m" / "machine.json").write_text(json.dumps({"machine": "m", "version": 1}))
    data = json.loads(next((ROOT / "results" / "nvidia-h200").glob("cb56ab9f*.json")).read_text())
    (results_dir / "m" / f"{head[:8]}-env.json").write_text(json.dumps(data | {"commit_hash": head}))
    assert asv_files.commits(results_dir)[head]["recorded"] is False
    assert asv_files.commit_name(head, asv_files.commits(results_dir)) == head[:9]
    command.record_missing(git_repo, results_dir)
    known = asv_files.commits(results_dir)
    assert known[head]["recorded"] and known[head]["title"] == "init" and known[head]["tags"] == ["cuda-core-v0.9.0"]
    assert asv_files.commit_name(head, known) == "cuda-core-v0.9.0"


def test_publish_needs_no_clone_when_the_one_init_recorded_is_gone(tmp_path, monkeypatch):
    """The pages come from results/ alone: a clone that `cuda-bench init` recorded and that was removed since stops
    the commands that build (one line naming it and the fix), not publish."""
    from cuda_bench.run import asvrun

    monkeypatch.setattr(asvrun, "local_settings", lambda: {"repo": str(tmp_path / "gone")})
    try:
        conf = json.loads(asvrun.derived_conf(need_repo=False).read_text())
    finally:
        asvrun.remove_temporary()  # what a command removes when it ends
    assert conf["repo"] != str(tmp_path / "gone")
    with pytest.raises(asvrun.RunError, match=r"the clone in .*local\.json .*gone is not a git repository: "
                                              r"`cuda-bench init --repo PATH` names another"):
        asvrun.derived_conf()
    with pytest.raises(asvrun.RunError, match=r"^--repo .*gone is not a git repository$"):
        asvrun.derived_conf(str(tmp_path / "gone"), need_repo=False)


def test_publish_needs_no_network_and_no_npm(tmp_path):
    """The libraries asv's pages load come from dashboard/vendor (each package's licence beside its files, its
    version in the README there), never from npm: publish runs with no npm, node or git on its PATH and, where
    this machine lets a process leave the network (``unshare -rn``), with no network at all."""
    import os
    import shutil
    import subprocess
    import sys

    from conftest import ROOT, asv_conf

    from cuda_bench.foundations.paths import VENDOR

    results_dir = tmp_path / "results"
    shutil.copytree(ROOT / "tests" / "fixtures" / "site" / "results", results_dir)
    conf = asv_conf(tmp_path, tmp_path / "no-clone-here", sys.executable, results_dir=str(results_dir))
    (tmp_path / "bin").mkdir()  # a PATH with nothing on it
    command = [sys.executable, "-m", "cuda_bench.publish", "--config", str(conf)]
    unshare = shutil.which("unshare")
    offline = unshare is not None and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0
    proc = subprocess.run([unshare, "-rn", *command] if offline else command, cwd=ROOT, capture_output=True,
                          text=True, env=dict(os.environ, PATH=str(tmp_path / "bin"), PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = tmp_path / "html"
    for path in [*asv_site.ASSETS.values(), *asv_site.EXTRA_FILES]:
        assert (html / "vendor" / path).exists(), path
    readme = (VENDOR / "README.md").read_text()
    for package in sorted(p.name for p in VENDOR.iterdir() if p.is_dir()):
        assert f"| {package} | " in readme, package
        assert any(p.name.startswith("LICENSE") for p in (html / "vendor" / package).iterdir()) or \
            "no licence file" in readme, package
    assert not (ROOT / "dashboard" / "package.json").exists()


@pytest.mark.slow
def test_every_published_file_is_as_the_manifest_says():
    """Both histories (the committed one and the dashboard tests' one) published again give every file of
    tests/fixtures/pages.json byte for byte: a change to how pages are assembled or drawn shows here, by name,
    and ``python tests/pages.py --write`` records one that is meant."""
    import pages

    expected = json.loads(pages.MANIFEST.read_text())
    assert pages.differences(expected, pages.current()) == []


def test_publishing_leaves_the_checkouts_html_readme_as_committed():
    """publish writes dashboard/html-README.md as html/README.md, which git tracks: the two are one text."""
    from cuda_bench.foundations.paths import DASHBOARD, ROOT

    assert (ROOT / "html" / "README.md").read_text() == (DASHBOARD / "html-README.md").read_text()
