/* cuda-python-bench, loaded in asv.html's head after asv's scripts (which wait for the page): the
   Regressions route opens the project's Regressions page (intervals and status, from the paired
   steps), graphs get one colour per library and times in ns or µs; opened from disk, one line on
   top says how to serve the pages. */
var cudaBench = (function () {
    'use strict';
    function route() {
        var page = window.location.hash.replace(/^#\/?/, '').split('?')[0];
        if (page === 'regressions') {
            window.location.replace('regressions.html');
        }
    }
    route();
    window.addEventListener('hashchange', route);

    function fromDisk() {
        /* asv's pages fetch their data (index.json, graphs/), which browsers refuse to a page
           opened from disk (file://): in place of asv's "Perhaps web server has gone down", one
           line on top says how to serve them; the project's own pages open from disk as they are */
        if (window.location.protocol !== 'file:') {
            return;
        }
        var style = document.createElement('style');
        style.textContent = '#error, .modal-backdrop { display: none !important; }';
        document.head.appendChild(style);
        document.addEventListener('DOMContentLoaded', function () {
            var line = document.createElement('div');
            line.id = 'cuda-bench-serve';
            line.className = 'alert alert-warning';
            line.innerHTML = "asv's pages need a web server: <code>cuda-bench serve</code> (or "
                + '<code>python3 -m http.server -d html</code>), then '
                + 'http://127.0.0.1:8080/asv.html. The project\'s pages open from disk: '
                + '<a href="index.html">Main\'s head</a>.';
            var nav = document.getElementById('nav');  // the line goes under asv's navigation bar
            line.style.top = (nav ? nav.getBoundingClientRect().bottom : 0) + 'px';
            document.body.insertBefore(line, document.body.firstChild);
        });
    }
    fromDisk();

    var palette = {core: [118, 185, 0], bindings: [31, 119, 180], cupy: [148, 103, 189], cpp: [80, 80, 80]};
    var seen = {};
    function color(label) {
        var match = /(?:^|; )api-(\w+)/.exec(label || '');
        var library = match ? match[1] : null;
        if (!library || !palette[library]) {
            return undefined;  // flot picks one
        }
        seen[library] = seen[library] || [];
        if (seen[library].indexOf(label) < 0) {
            seen[library].push(label);
        }
        var k = seen[library].indexOf(label), mix = Math.min(0.12 * k, 0.6);  // lighter for each further case
        var rgb = palette[library].map(function (c) { return Math.round(c + (255 - c) * mix); });
        return 'rgb(' + rgb.join(',') + ')';
    }
    function time(seconds) {
        if (!isFinite(seconds)) {
            return '';
        }
        var ns = seconds * 1e9, a = Math.abs(ns);
        if (a === 0) { return '0'; }
        if (a < 1e3) { return (Math.round(ns * 10) / 10) + ' ns'; }
        if (a < 1e6) { return +(ns / 1e3).toPrecision(3) + ' µs'; }
        if (a < 1e9) { return +(ns / 1e6).toPrecision(3) + ' ms'; }
        return +(ns / 1e9).toPrecision(3) + ' s';
    }
    return {color: color, time: time, route: route};
})();
