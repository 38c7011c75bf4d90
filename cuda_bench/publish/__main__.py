"""``python -m cuda_bench.publish``: ``cuda-bench publish`` (``cuda_bench.publish.dashboard``)."""

import sys

from cuda_bench.publish.dashboard import main

sys.exit(main())
