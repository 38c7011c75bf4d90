"""Publishing never loses the dashboard: html/ is replaced only by a complete new one, put back when the swap
fails, left as it was when publishing fails, and no folder of a publish stays behind. No browser needed."""

from __future__ import annotations

import json

import pytest

from cuda_bench import publish
from cuda_bench.paths import WORK


def dashboard(folder, text):
    folder.mkdir(parents=True)
    (folder / "index.html").write_text(text)
    (folder / "README.md").write_text("the dashboard\n")
    return folder


def test_a_complete_new_dashboard_takes_the_place_of_the_old(tmp_path):
    html = dashboard(tmp_path / "html", "old")
    new = dashboard(tmp_path / "work" / "html", "new")
    publish.swap_in(new, html, tmp_path / "work" / "old")
    assert (html / "index.html").read_text() == "new" and not new.exists()


def test_when_the_new_one_cannot_take_its_place_the_old_one_is_put_back(tmp_path):
    html = dashboard(tmp_path / "html", "old")
    missing = tmp_path / "work" / "html"  # the rename of the new one fails: it is not there
    (tmp_path / "work").mkdir()
    with pytest.raises(FileNotFoundError):
        publish.swap_in(missing, html, tmp_path / "work" / "old")
    assert (html / "index.html").read_text() == "old" and (html / "README.md").exists()


def test_a_failed_publish_leaves_html_as_it_was_and_no_folder_behind(tmp_path):
    """asv publish fails here (its results name a commit its repository does not have): one line, html/ and
    its README untouched, nothing left in .asv/ or beside html/."""
    from conftest import ROOT

    html = dashboard(tmp_path / "html", "old")
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
    with pytest.raises(publish.DashboardError, match="is as it was"):
        publish.publish(conf)
    assert (html / "index.html").read_text() == "old" and (html / "README.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["asv.conf.json", "html", "results"]
    assert (set(WORK.glob("publish-*")) if WORK.exists() else set()) == before
