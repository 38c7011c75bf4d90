"""Stage 5, publish: the dashboard's pages as HTML, one module per page, each drawn from the read
layer's History (``cuda_bench.publish.read``): none reads results/ or decides a verdict. ``html``
holds the pieces they share, ``asv_site`` what becomes of asv's own pages."""
