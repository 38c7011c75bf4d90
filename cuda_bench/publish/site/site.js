/* cuda-python-bench: the project's pages. They open from disk (file://) as they are; asv's pages
   (asv.html) fetch their data, which browsers refuse to a page opened from disk. Opened from disk,
   the navigation's link to asv's pages says how to serve them, in place of opening a page that
   cannot load. */
(function () {
    'use strict';
    if (window.location.protocol !== 'file:') {
        return;
    }
    var URL = 'http://127.0.0.1:8080/asv.html';
    var SAID = "asv's pages need a web server: cuda-bench serve (or python3 -m http.server 8080 -d html), "
        + 'then ' + URL;

    function say(nav) {
        var line = document.getElementById('asv-serve');
        if (line) {
            return line;
        }
        line = document.createElement('p');
        line.id = 'asv-serve';
        line.className = 'alert alert-warning';
        line.innerHTML = "asv's pages need a web server, since a browser refuses them their data "
            + 'opened from disk: <code>cuda-bench serve</code> (or <code>python3 -m http.server 8080 -d '
            + 'html</code>), then <a href="' + URL + '">' + URL + '</a>. The project\'s pages open '
            + 'from disk as they are.';
        nav.appendChild(line);
        return line;
    }

    document.addEventListener('DOMContentLoaded', function () {
        var nav = document.querySelector('nav.site');
        var link = nav && nav.querySelector('a[href="asv.html"]');
        if (!link) {
            return;
        }
        link.title = SAID;
        link.addEventListener('click', function (event) {
            event.preventDefault();
            say(nav);
        });
    });
})();
