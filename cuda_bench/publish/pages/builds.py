"""``builds.html``: what building each package tree cost, per machine and package: a graph of each
built tree's CPU seconds along the history, and the changes ``buildtime.flags`` flags (unpaired,
beyond one tree's rebuild spread), or why none is judged."""

from __future__ import annotations

from cuda_bench.foundations.text import times
from cuda_bench.publish import summary
from cuda_bench.publish.pages.html import banner, commit_link, esc, page
from cuda_bench.results import buildtime

WIDTH, HEIGHT, PAD = 640, 180, 36

ABOUT = f"""<p>Each package tree the machine compiled, at the first commit that has it: the CPU
seconds of its build (the compilers' user and system time, and everything else <code>pip
wheel</code> ran; the median where the tree was built more than once), with its wall seconds and
versions on hover. Builds through ccache are left out. A change of {buildtime.FACTOR:g}× or more
between adjacent trees is flagged where it also clears the most one tree's rebuilds spread by on the
machine: {esc(buildtime.UNPAIRED)}.</p>"""


def chart(rows, known):
    """An SVG line of the CPU seconds of each built tree (``buildtime.series``' rows), the history's
    order left to right; each point says its commit, CPU and wall seconds and versions on hover."""
    top = max(row["cpu_seconds"] for row in rows) or 1
    step = (WIDTH - 2 * PAD) / max(1, len(rows) - 1)
    points = [
        (PAD + i * step, HEIGHT - PAD - (HEIGHT - 2 * PAD) * row["cpu_seconds"] / top)
        for i, row in enumerate(rows)
    ]
    marks = []
    for (x, y), row in zip(points, rows):
        newest = row["builds"][-1]
        said = (
            f"{summary.name(row['commit'], known)}: {row['cpu_seconds']:g} CPU s "
            f"({len(row['builds'])} build{'s' if len(row['builds']) != 1 else ''}; the newest "
            f"{newest['wall_seconds']:g} s wall, {newest['jobs']} jobs, "
            + ", ".join(f"{k} {v}" for k, v in newest["versions"].items() if v)
            + ")"
        )
        marks.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" data-commit="{esc(row["commit"])}">'
            f"<title>{esc(said)}</title></circle>"
        )
    line = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (
        f'<svg class="build-time" width="{WIDTH}" height="{HEIGHT}" role="img">'
        f'<text x="4" y="{PAD - 12}">{top:g} CPU s</text>'
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#999"/>'
        f'<polyline points="{line}" fill="none" stroke="#337ab7" stroke-width="2"/>'
        + "".join(marks)
        + f'<text x="4" y="{HEIGHT - 8}">0</text></svg>'
    )


def machine_html(name, compiles, known):
    """One machine's part: per package its graph, its flags, or why none is judged."""
    place = lambda commit: summary.place(commit, known)  # noqa: E731
    found, unjudged = buildtime.flags(compiles, place)
    out = [f'<section class="machine" data-machine="{esc(name)}"><h2>{esc(name)}</h2>']
    for package, rows in buildtime.series(compiles, place).items():
        spread = buildtime.spread(compiles, package)
        out.append(f'<h3 data-package="{esc(package)}">{esc(package)}</h3>')
        if rows:
            out.append(chart(rows, known))
        if spread:
            ratio, tree, cpus = spread
            out.append(
                f"<p>One tree built {len(cpus)} times: {', '.join(f'{c:g}' for c in cpus)} CPU "
                f"seconds ({times(ratio, 2)}, tree {esc(tree[:12])}).</p>"
            )
        flags = [f for f in found if f["package"] == package]
        if flags:
            out.append('<ul class="build-flags">')
            out += [
                f'<li data-base="{esc(f["base"]["commit"])}" '
                f'data-head="{esc(f["head"]["commit"])}">'
                f"{commit_link(f['base']['commit'], known)} → "
                f"{commit_link(f['head']['commit'], known)}: {esc(buildtime.flag_line(f))}</li>"
                for f in flags
            ]
            out.append("</ul>")
        elif package in unjudged:
            out.append(f'<p class="unjudged">{esc(unjudged[package])}.</p>')
        else:
            out.append("<p>No change beyond the rebuild spread.</p>")
    if not compiles:
        out.append("<p>No build compiled on this machine has recorded its time yet.</p>")
    out.append("</section>")
    return "\n".join(out)


def document(found):
    """``builds.html`` of ``found`` (``read.History``)."""
    body = ABOUT + "\n".join(
        machine_html(name, machine.compiles, found.known)
        for name, machine in found.machines.items()
    )
    return page("What building each package costs", body, "builds.html", banner(found))
