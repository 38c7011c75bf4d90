"""Every published file's SHA-256, for two histories: the committed one (``results/``) and the dashboard tests' one
with known answers (``tests/fixtures/site/results``). ``tests/fixtures/pages.json`` holds them;
``test_publish.py`` publishes both again and compares, so a change to how the pages are assembled or drawn that
changes a byte says which files it changed.

    python tests/pages.py            # which files differ from tests/fixtures/pages.json
    python tests/pages.py --write    # write it anew (a change meant to change the pages; the diff shows which)

Left out: ``vendor/`` (copied from ``dashboard/vendor/`` as it is) and asv's ``info.json`` (the time of publishing).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "tests" / "fixtures" / "pages.json"
LEFT_OUT = ("vendor", "info.json")
HISTORIES = {"results": ROOT / "results", "site": ROOT / "tests" / "fixtures" / "site" / "results"}


def published(results_dir, tmp):
    """``results_dir`` published into ``tmp/html`` by ``cuda-bench publish`` (asv's config pointed at ``tmp``)."""
    import json5

    conf = json5.loads((ROOT / "asv.conf.json").read_text())
    conf.update(repo=str(tmp / "no-clone-here"), results_dir=str(results_dir), html_dir=str(tmp / "html"),
                benchmark_dir=str(ROOT / "benchmarks"), env_dir=str(tmp / "env"))
    config = tmp / "asv.conf.json"
    config.write_text(json.dumps(conf))
    proc = subprocess.run([sys.executable, "-m", "cuda_bench.publish", "--config", str(config)], cwd=ROOT,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin",
                                                                "HOME": str(tmp)})
    if proc.returncode not in (0, 2):  # 2: a history with files it cannot read (the site's has none)
        raise RuntimeError(f"publish of {results_dir} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return tmp / "html"


def digests(html):
    return {str(path.relative_to(html)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(html.rglob("*")) if path.is_file() and path.relative_to(html).parts[0] not in LEFT_OUT}


def current():
    """{history: {file: digest}} of both histories published now."""
    found = {}
    for name, results_dir in HISTORIES.items():
        with tempfile.TemporaryDirectory(prefix="pages-") as tmp:
            found[name] = digests(published(results_dir, Path(tmp)))
    return found


def differences(expected, found):
    """Lines naming each file added, gone or changed."""
    lines = []
    for name in sorted(set(expected) | set(found)):
        want, got = expected.get(name, {}), found.get(name, {})
        for path in sorted(set(want) | set(got)):
            if path not in got:
                lines.append(f"{name}: {path} is no longer written")
            elif path not in want:
                lines.append(f"{name}: {path} is new")
            elif want[path] != got[path]:
                lines.append(f"{name}: {path} changed")
    return lines


def main(argv):
    found = current()
    if "--write" in argv:
        MANIFEST.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
        print(f"{MANIFEST.relative_to(ROOT)}: {sum(map(len, found.values()))} files")
        return 0
    lines = differences(json.loads(MANIFEST.read_text()), found)
    print("\n".join(lines) or "every published file is as tests/fixtures/pages.json says")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
