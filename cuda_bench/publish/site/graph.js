/* cuda-python-bench: graph.html. Per case, one line per library: the paired chain (the product of the paired
   steps' ratios since the first commit of the run of steps that reach it, with its band), a marker where a step
   flagged the case; below, asv's medians per call and the C++ twin's, as context.
   Data: paired/<machine>/<op>.js (cuda_bench.publish.pages.graph.graph_data), scripts that call
   cudaBenchData(name, data): a page opened from disk (file://) may run scripts, never fetch JSON.
   What the data says (commit names and titles, tags, case names) goes into the page as text, never
   as HTML: jQuery's .text(), or escaped() where flot takes HTML. */
'use strict';
$(function () {
    var COLORS = {core: '#5d9200', bindings: '#1f77b4', cupy: '#9467bd', pathfinder: '#d62728', cpp: '#444444'};
    var NAMES = {core: 'cuda.core', bindings: 'cuda.bindings', cupy: 'CuPy', pathfinder: 'cuda.pathfinder',
                 cpp: 'C++ twin'};
    var ORDER = ['core', 'bindings', 'cupy', 'pathfinder', 'cpp'];
    // flag colours at least 4.5:1 against the plot's white (WCAG AA)
    var MARKS = {regression: '#c12e2a', improvement: '#2b7a2b', 'not reproduced': '#6b6b6b', 'put down': '#a45f00'};
    var index = null, wanted = null, loaded = {};
    window.cudaBenchGraph = {ready: false};
    window.cudaBenchData = function (name, data) { loaded[name] = data; };

    function fetchData(name, done) {
        /* paired/<name>.js, run once as a script; done(its data) */
        if (loaded.hasOwnProperty(name)) {
            done(loaded[name]);
            return;
        }
        var script = document.createElement('script');
        var src = 'paired/' + name.split('/').map(encodeURIComponent).join('/') + '.js';
        script.src = src;
        script.onload = function () {
            script.remove();
            if (loaded.hasOwnProperty(name)) {
                done(loaded[name]);
            } else {
                $('#graph-notes').text(src + ' holds no graph data: cuda-bench publish writes it.');
            }
        };
        script.onerror = function () {
            script.remove();
            $('#graph-notes').text(src + ' could not be read: cuda-bench publish writes it.');
        };
        document.head.appendChild(script);
    }

    function parseHash() {
        var out = {};
        window.location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
            var i = kv.indexOf('=');
            if (i > 0) {
                out[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1).replace(/\+/g, ' '));
            }
        });
        return out;
    }

    function setHash(state) {
        var parts = [];
        ['machine', 'benchmark', 'case'].forEach(function (key) {
            if (state[key] !== undefined && state[key] !== null) {
                parts.push(key + '=' + encodeURIComponent(state[key]));
            }
        });
        var hash = '#' + parts.join('&');
        if (hash !== window.location.hash) {
            window.location.hash = hash;
        }
    }

    function time(seconds) {
        var ns = seconds * 1e9, a = Math.abs(ns);
        if (a < 1e3) { return (Math.round(ns * 10) / 10) + ' ns'; }
        if (a < 1e6) { return +(ns / 1e3).toPrecision(3) + ' µs'; }
        return +(ns / 1e6).toPrecision(3) + ' ms';
    }

    function escaped(text) {
        /* text as HTML, for the one place that takes HTML: flot writes its tick labels with innerHTML */
        return $('<span/>').text(text === null || text === undefined ? '' : String(text)).html();
    }

    function options(select, values, chosen) {
        select.empty();
        values.forEach(function (v) {
            select.append($('<option/>').attr('value', v[0]).text(v[1]).prop('selected', v[0] === chosen));
        });
    }

    function load() {
        var state = parseHash();
        var machines = Object.keys(index);
        if (!machines.length) {
            $('#graph-notes').text('Nothing measured yet.');
            return;
        }
        var machine = index[state.machine] ? state.machine : machines[0];
        var list = index[machine];
        var entry = list.filter(function (e) { return e[0] === state.benchmark; })[0]
            || list.filter(function (e) { return e[0] === 'bench_device.SetCurrent.time_set_current'; })[0] || list[0];
        var label = entry[2].indexOf(state.case) >= 0 ? state.case : entry[2][0];
        // a case asked for by name that this machine never measured: said, never another case in its place
        var missing = state.benchmark === entry[0] && state.case !== undefined && label !== state.case
            ? 'Case ' + state.case + ' of ' + entry[1] + ' has no paired step and no median on ' + machine
              + ': it was never measured there. Shown: case ' + (label || '(one case)') + '.' : '';
        options($('#machine'), machines.map(function (m) { return [m, m]; }), machine);
        options($('#benchmark'), list.map(function (e) { return [e[0], e[1]]; }), entry[0]);
        options($('#case'), entry[2].map(function (c) { return [c, c || '(one case)']; }), label);
        $('#case').prop('disabled', entry[2].length < 2);
        window.cudaBenchGraph.ready = false;
        var asked = wanted = {};
        fetchData(machine + '/' + entry[0], function (data) {
            if (asked === wanted) {  // else another graph was asked for since
                draw(data, label);
                if (missing) {
                    $('#graph-notes').prepend($('<p class="missing-case alert alert-warning"/>').text(missing));
                }
            }
        });
    }

    function downTriangle(ctx, x, y, radius) {
        var size = radius * Math.sqrt(Math.PI) / 2;
        ctx.moveTo(x - size, y - size);
        ctx.lineTo(x + size, y - size);
        ctx.lineTo(x, y + size);
        ctx.lineTo(x - size, y - size);
    }

    function ratioTicks(axis) {
        /* ratios on a log scale: round ratios over a wide range, even steps over a narrow one */
        var lo = axis.min, hi = axis.max, out = [];
        if (hi / lo >= 1.5) {
            var gap = Math.log(hi / lo) / 9;  // labels at least a ninth of the axis apart
            [1, 0.9, 1.1, 0.8, 1.25, 0.7, 1.5, 0.5, 2, 0.3, 3, 0.2, 5, 0.1, 10, 0.05, 20, 0.02, 50, 0.01, 100]
                .forEach(function (v) {
                    var far = out.every(function (u) { return Math.abs(Math.log(v / u)) >= gap; });
                    if (v >= lo && v <= hi && far) { out.push(v); }
                });
            out.sort(function (a, b) { return a - b; });
            if (out.length >= 3) {
                return out;
            }
        }
        var raw = (hi - lo) / 6, step = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10));
        step *= raw / step > 5 ? 10 : raw / step > 2 ? 5 : raw / step > 1 ? 2 : 1;
        for (var v = Math.ceil(lo / step) * step; v <= hi + 1e-12; v += step) {
            out.push(+v.toFixed(6));
        }
        return out;
    }

    function envMarkings(commits) {
        /* a grey line where the cuda-bindings the builds ran changes (a wheel's version, or a wheel to
           cuda_bindings built from each commit), from what their workers reported */
        var marks = [], changes = [];
        for (var i = 1; i < commits.length; ++i) {
            if (commits[i].bindings !== commits[i - 1].bindings) {
                marks.push({xaxis: {from: i - 0.5, to: i - 0.5}, color: '#bbbbbb', lineWidth: 1});
                changes.push([i - 0.5, commits[i - 1].bindings, commits[i].bindings]);
            }
        }
        return {marks: marks, changes: changes};
    }

    function labelEnv(plot, placeholder, changes) {
        changes.forEach(function (c) {
            var at = plot.pointOffset({x: c[0], y: plot.getAxes().yaxis.max});
            var mark = $('<div class="env-mark"/>').css({left: at.left + 4, top: at.top + 2})
                .text('cuda-bindings ' + (c[1] || '?') + ' \u2192 ' + (c[2] || '?'));
            placeholder.append(mark);
            // near the plot's right edge the label goes left of its line, inside the page's width
            if (at.left + 4 + mark.outerWidth() > placeholder.width()) {
                mark.css({left: Math.max(0, at.left - 4 - mark.outerWidth())});
            }
        });
    }

    function draw(data, label) {
        var per = data.cases[label] || {};
        var commits = data.commits;
        var ticks = commits.map(function (c, i) { return [i, escaped(c.name)]; });
        var env = envMarkings(commits);
        var chain = [], flagged = [], medians = [], notes = [], legend = [], restarts = [], builds = [];
        ORDER.forEach(function (api) {
            var s = per[api];
            if (!s) {
                return;
            }
            legend.push(api);
            if (s.chain.length) {
                // one chain per build family (p[5]): a chain never crosses builds
                var families = [];
                s.chain.forEach(function (p) { if (families.indexOf(p[5]) < 0) { families.push(p[5]); } });
                families.forEach(function (family, k) {
                    // thick, round points: the build the commit is shown in (the table's cuda-bindings); thin,
                    // squares: another build of the same commits
                    var shown = [], other = [], low = [], high = [], prev = null;
                    s.chain.filter(function (p) { return p[5] === family; }).forEach(function (p) {
                        // [x, value, low, high, the commit its run of steps starts at, its build family, steps]
                        var mine = commits[p[0]].bindings === family;
                        if (prev === null || p[4] !== prev[4]) {
                            if (prev !== null) { low.push(null); high.push(null); }
                            if (p[0] > 0) { restarts.push([p[0], p[4], family, api]); }
                        } else {
                            var both = mine && commits[prev[0]].bindings === family;
                            (both ? shown : other).push([prev[0], prev[1]], [p[0], p[1]], null);
                        }
                        (mine ? shown : other).push([p[0], p[1]], null);
                        low.push([p[0], p[2]]); high.push([p[0], p[3]]);
                        prev = p;
                    });
                    var id = api + '-' + k, cb = {api: api, family: family};
                    chain.push({id: id + '-low', data: low, color: COLORS[api], lines: {show: true, lineWidth: 0},
                                cb: $.extend({kind: 'low'}, cb)});
                    chain.push({id: id + '-high', data: high, color: COLORS[api], fillBetween: id + '-low',
                                lines: {show: true, lineWidth: 0, fill: 0.15}, cb: $.extend({kind: 'high'}, cb)});
                    chain.push({data: shown, color: COLORS[api], lines: {show: true, lineWidth: 2},
                                points: {show: true, radius: 2.5}, cb: $.extend({kind: 'chain'}, cb)});
                    if (other.length) {
                        chain.push({data: other, color: COLORS[api], lines: {show: true, lineWidth: 1},
                                    points: {show: true, radius: 3, symbol: 'square'},
                                    cb: $.extend({kind: 'chain', other: true}, cb)});
                    }
                });
                ['regression', 'improvement', 'not reproduced', 'put down'].forEach(function (verdict) {
                    // a flag put down to a cuda-bindings change (f[8]) is that change's, not a verdict on the commits
                    var points = s.flags.filter(function (f) {
                        return (f[8] ? 'put down' : f[1]) === verdict && chainAt(s.chain, f, commits) !== undefined;
                    }).map(function (f) { return [f[0], chainAt(s.chain, f, commits)]; });
                    if (points.length) {  // drawn last, over every chain: hovered, a flag is what is said
                        flagged.push({data: points, color: MARKS[verdict], lines: {show: false},
                                    points: {show: true, radius: 7, fill: verdict !== 'not reproduced',
                                             fillColor: MARKS[verdict], lineWidth: 2,
                                             symbol: verdict === 'improvement' ? downTriangle
                                                 : verdict === 'regression' ? 'triangle'
                                                 : verdict === 'put down' ? 'diamond' : 'circle'},
                                    cb: {api: api, kind: 'flag', verdict: verdict}});
                    }
                });
                if (families.length > 1) {
                    builds.push(NAMES[api] + ': ' + families.join(', '));
                }
            }
            if (s.median.length) {
                medians.push({data: s.median, color: COLORS[api], lines: {show: true, lineWidth: 1.5},
                              points: {show: true, radius: 2}, cb: {api: api, kind: 'median'}});
            }
        });
        chain = chain.concat(flagged);
        var xaxis = {ticks: ticks, min: -0.5, max: commits.length - 0.5, labelHeight: 70};
        var grid = {hoverable: true, markings: env.marks, borderWidth: 1, borderColor: '#ccc'};
        var values = [];
        chain.forEach(function (s) { s.data.forEach(function (p) { if (p) { values.push(p[1]); } }); });
        var low = values.length ? Math.min.apply(null, values) : 0.9, high = values.length ? Math.max.apply(null, values) : 1.1;
        var pad = Math.max(Math.pow(high / low, 0.06), 1.01);
        var chainPlot = $.plot('#chain', chain, {
            xaxis: xaxis, grid: grid, legend: {show: false},
            yaxis: {labelWidth: 56, transform: Math.log, inverseTransform: Math.exp, ticks: ratioTicks,
                    min: low / pad, max: high * pad,
                    tickFormatter: function (v) { return times(+v.toPrecision(3), v < 10 ? 3 : 1); }}
        });
        var medianPlot = $.plot('#medians', medians, {
            xaxis: xaxis, grid: grid, legend: {show: false},
            yaxis: {labelWidth: 56, min: 0, tickFormatter: time}
        });
        labelEnv(chainPlot, $('#chain'), env.changes);
        labelEnv(medianPlot, $('#medians'), env.changes);
        $('#graph-legend').empty().append(legend.map(function (api) {
            return $('<span class="lib"/>').attr('data-api', api)
                .append($('<span class="swatch"/>').css('background', COLORS[api]))
                .append(document.createTextNode(NAMES[api] + (api === 'cpp' ? ' (' + per.cpp.twin + ')' : '')));
        }));
        restartNotes(restarts, commits).forEach(function (n) { notes.push(n); });
        if (builds.length) {
            notes.push('One chain per build, never one across builds: ' + builds.join('; ') + '. A thick line and '
                       + 'round points: the build each commit is shown in (the cuda-bindings column below); a thin '
                       + 'line and squares: another build of the same commits.');
        }
        if (!chain.length) {
            notes.push('No paired step measured this case yet.');
        }
        if (env.changes.length) {
            notes.push('The grey line marks where the cuda-bindings the builds ran changes: every chain stops there, '
                       + 'since a chain multiplies the steps of one build only, and a flag of a cuda.bindings case '
                       + 'across a wheel change (◆) is put down to that change.');
        }
        $('#graph-notes').empty().append(notes.map(function (n) { return $('<p/>').text(n); }));
        var table = $('#graph-commits').empty();
        table.append('<thead><tr><th>#</th><th>commit</th><th>title</th><th>date</th><th>cuda-bindings</th></tr></thead>');
        var body = $('<tbody/>');
        commits.forEach(function (c, i) {
            body.append($('<tr/>').attr('data-commit', c.hash).append(
                $('<td/>').text(i), $('<td class="name"/>').text(c.name), $('<td/>').text(c.title),
                $('<td/>').text(c.date ? new Date(c.date).toISOString().slice(0, 10) : ''), $('<td/>').text(c.bindings)));
        });
        table.append(body);
        dataTable(commits, per);
        tooltips($('#chain'), data, per, 'chain');
        tooltips($('#medians'), data, per, 'median');
        window.cudaBenchGraph = {ready: true, chain: chainPlot, medians: medianPlot, data: data, label: label};
    }

    function dataTable(commits, per) {
        /* the graphs' numbers as a table (keyboard and screen readers reach it): per commit and library, each
           chain's value with its band, since where and in which build, and asv's median */
        var table = $('#graph-data').empty(), body = $('<tbody/>');
        table.append('<thead><tr><th>commit</th><th>library</th><th>paired chain [band]</th><th>since</th>'
                     + '<th>build</th><th>asv\'s median (unpaired, context)</th></tr></thead>');
        commits.forEach(function (c, x) {
            ORDER.filter(function (api) { return per[api]; }).forEach(function (api) {
                var median = per[api].median.filter(function (p) { return p[0] === x; })[0];
                var points = per[api].chain.filter(function (p) { return p[0] === x; });
                (points.length ? points : [null]).forEach(function (p) {
                    if (!p && !median) {
                        return;
                    }
                    body.append($('<tr/>').attr({'data-commit': c.hash, 'data-api': api}).append(
                        $('<td class="name"/>').text(c.name), $('<td/>').text(NAMES[api]),
                        $('<td class="ratio"/>').text(p ? interval(p[1], p[2], p[3]) : ''),
                        $('<td/>').text(p ? p[4] : ''), $('<td/>').text(p ? p[5] : c.bindings),
                        $('<td class="median"/>').text(median ? time(median[1]) : '')));
                });
            });
        });
        table.append(body);
    }

    function chainAt(points, flag, commits) {
        /* where a flag sits: its step's chain at its head, else (a step across builds) the chain of the build
           the head is shown in, else any chain there */
        var at = points.filter(function (p) { return p[0] === flag[0]; });
        var found = at.filter(function (p) { return p[5] === flag[9]; })[0]
            || at.filter(function (p) { return p[5] === commits[flag[0]].bindings; })[0] || at[0];
        return found ? found[1] : undefined;
    }

    function restartNotes(restarts, commits) {
        /* where each chain starts again after the first commit, and why: the builds change there, or no paired
           step of that build links it to the commits before it */
        var said = {}, order = [];
        restarts.forEach(function (r) {
            var before = commits[r[0] - 1].bindings, why = before !== r[2]
                ? 'the builds change there (' + before + ' \u2192 ' + r[2] + '), and a chain never crosses builds'
                : 'no paired step of that build links ' + r[1] + ' to the commits before it';
            var key = r[1] + '|' + r[2];
            if (!said[key]) {
                said[key] = {root: r[1], family: r[2], why: why, apis: []};
                order.push(key);
            }
            said[key].apis.push(NAMES[r[3]]);
        });
        return order.map(function (key) {
            var r = said[key];
            return 'The chain of ' + r.apis.join(', ') + ' (' + r.family + ') starts again at ' + times(1) + ' at '
                + r.root + ': ' + r.why + '.';
        });
    }

    // a ratio, and a ratio with its interval, as the pages write them (cuda_bench.foundations.text: times, interval)
    function times(value, digits) {
        return '×' + value.toFixed(digits === undefined ? 3 : digits);
    }

    function interval(ratio, low, high) {
        return times(ratio) + ' [' + low.toFixed(3) + ', ' + high.toFixed(3) + ']';
    }

    function tooltips(placeholder, data, per, kind) {
        var tip = $('#graph-tip');
        if (!tip.length) {
            tip = $('<div id="graph-tip"/>').appendTo('body');
        }
        placeholder.off('plothover').on('plothover', function (event, pos, item) {
            if (!item || !item.series.cb || (item.series.cb.kind !== kind && item.series.cb.kind !== 'flag')) {
                tip.hide();
                return;
            }
            var x = item.datapoint[0], commit = data.commits[x], api = item.series.cb.api;
            var lines = [commit.name, commit.title, NAMES[api] + ', cuda-bindings ' + commit.bindings];
            if (kind === 'chain') {
                var family = item.series.cb.family;
                var p = per[api].chain.filter(function (q) { return q[0] === x && (!family || q[5] === family); })[0];
                lines.push(interval(p[1], p[2], p[3]) + ' since ' + p[4] + ' (' + p[6] + ' paired step'
                           + (p[6] === 1 ? '' : 's') + ', all ' + p[5] + ')');
                per[api].flags.filter(function (f) { return f[0] === x; }).forEach(function (f) {
                    lines.push(f[6] + ' → ' + f[7] + ': ' + interval(f[3], f[4], f[5]) + ' '
                               + (f[8] ? 'put down to ' + f[8] : f[2]));
                });
            } else {
                lines.push(time(item.datapoint[1]) + " (asv's median: unpaired, context)");
            }
            tip.empty().append(lines.filter(Boolean).map(function (l) { return $('<div/>').text(l); }))
                .css({left: 0, top: item.pageY + 12}).show();
            // its own width, whatever the room to the right: left of the pointer near the page's right edge
            var right = $(window).scrollLeft() + $(window).width() - 8;
            tip.css({left: item.pageX + 12 + tip.outerWidth() > right ? Math.max(0, item.pageX - 12 - tip.outerWidth())
                                                                       : item.pageX + 12});
        });
    }

    $('#machine').on('change', function () { setHash({machine: this.value}); });
    $('#benchmark').on('change', function () { setHash({machine: $('#machine').val(), benchmark: this.value}); });
    $('#case').on('change', function () {
        setHash({machine: $('#machine').val(), benchmark: $('#benchmark').val(), case: this.value});
    });
    $(window).on('hashchange', function () { if (index) { load(); } });
    fetchData('index', function (data) { index = data; load(); });
});
