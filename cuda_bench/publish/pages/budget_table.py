"""The front page's budget table: per machine, each call of main's head against its budget
(``budgets.json5``, judged by ``cuda_bench.results.budgets``) from the head's over-C++ measurements,
as the operations table below it shows them."""

from __future__ import annotations

from cuda_bench.foundations.names import short_name, split_case
from cuda_bench.foundations.stats import CONFIDENCE
from cuda_bench.foundations.text import fmt_ns, number
from cuda_bench.publish.overview import TITLES
from cuda_bench.publish.pages.html import esc
from cuda_bench.results import budgets

BADGES = {budgets.OVER: "danger", budgets.WITHIN: "success", budgets.UNDECIDED: "default"}


def measured(rows):
    """({case: its paired over-C++ measurement}, {case: its form over cuda.bindings', in one
    process}) of the operations table's ``rows`` (``overview.overview_rows``)."""
    paired, forms = {}, {}
    for row in rows:
        for cell in row["cells"].values():
            if cell.get("case") and cell.get("over_cpp"):
                paired[cell["case"]] = cell["over_cpp"]
            if cell.get("case") and "ratio" in (cell.get("one_process") or {}):
                forms[cell["case"]] = cell["one_process"]
    return paired, forms


def operation_text(name):
    """'device.SetCurrent, cuda.core' or 'launch.Launch 16 ptr, cuda.bindings'."""
    benchmark, combo = split_case(name)
    params = " ".join(c.strip("'") for c in combo[1:])
    form = TITLES.get(budgets.library(name), budgets.library(name) or "")
    return f"{short_name(benchmark)}{' ' + params if params else ''}, {form}"


def row_html(j):
    cpp = fmt_ns(j["cpp_ns"]) if number(j.get("cpp_ns")) else ""
    what = budgets.WHAT[j["kind"]]
    full = j.get("coverage") is not None and j["coverage"] >= CONFIDENCE
    short = "" if full else f" <small>({esc(budgets.coverage_text(j))})</small>"
    status = f" <small>{esc(j['status'])}</small>" if j.get("status") else ""
    return (
        f'<tr data-case="{esc(j["case"])}" data-kind="{esc(j["kind"])}" '
        f'data-verdict="{esc(j["verdict"])}" data-status="{esc(j.get("status") or "")}">'
        f"<td>{esc(operation_text(j['case']))}</td>"
        f"<td>{esc(cpp)}</td><td>{esc(what)} {esc(budgets.measured_text(j))}{short}</td>"
        f"<td>{esc(budgets.budget_text(j))}</td>"
        f'<td><span class="label label-{BADGES[j["verdict"]]}">{esc(j["verdict"])}</span>'
        f"{status}</td></tr>"
    )


def budgets_html(rows, found, head):
    """The budget section of one machine's part of the front page: its ``rows`` at main's head
    (named ``head``) judged against ``found`` (:class:`budgets.Budgets`), or why nothing is."""
    if found is None:
        return []
    out = ['<h3 class="budgets">Budgets</h3>']
    if found.error:
        return [
            *out,
            f'<p class="budgets-missing">Not judged: <code>{esc(found.error)}</code>.</p>',
        ]
    judged = budgets.judge(*measured(rows), found)
    if not judged:  # one line: a budget is judged on a call and its C++ twin timed in one process
        return [
            f'<p class="budgets-missing">Budgets not judged: no over-C++ run of {esc(head)} here '
            "(<code>cuda-bench over-cpp</code>).</p>"
        ]
    out.append(
        f'<p class="budgets-legend">Each call of cuda.core and cuda.bindings at {esc(head)} '
        "against its budget in <code>budgets.json5</code>, from the over-C++ run shown in the "
        f"table below: {esc(budgets.RULE)}. {esc(budgets.counts_text(judged, ' · '))}.</p>"
    )
    out.append(unjudged_html(rows, head))
    told = [j for j in judged if j["verdict"] == budgets.OVER]
    rest = [j for j in judged if j["verdict"] != budgets.OVER]
    if told:
        out.append(table_html(told))
    if rest:  # what is not over its budget, folded
        said = " · ".join(
            f"{sum(j['verdict'] == v for j in rest)} {v}"
            for v in budgets.VERDICTS
            if v != budgets.OVER and any(j["verdict"] == v for j in rest)
        )
        out.append(
            f'<details class="budgets-within"><summary>{said}: the calls not over their budget'
            f"</summary>{table_html(rest)}</details>"
        )
    return out


def unjudged_html(rows, head):
    """How many calls of cuda.core and cuda.bindings at the head no over-C++ run measured, so that
    no budget judges them: why one machine has fewer calls judged than another."""
    missing = [
        cell["case"]
        for row in rows
        for api, cell in row["cells"].items()
        if api in ("core", "bindings") and cell.get("case") and not cell.get("over_cpp")
    ]
    if not missing:
        return ""
    return (
        f'<p class="budgets-unjudged text-muted">{len(missing)} calls of cuda.core and '
        f"cuda.bindings at {esc(head)} are not judged: no over-C++ run of {esc(head)} on this "
        "machine timed them beside a C++ twin (<code>cuda-bench over-cpp</code>).</p>"
    )


def table_html(judged):
    return (
        '<table class="table table-condensed budgets"><thead><tr><th>operation</th>'
        "<th>C++</th><th>measured</th><th>budget</th><th>verdict</th></tr></thead><tbody>"
        + "".join(row_html(j) for j in judged)
        + "</tbody></table>"
    )
