"""``python -m cuda_bench.build``: the build steps asv runs (``cuda_bench.build.environment``)."""

import sys

from cuda_bench.build.environment import main

sys.exit(main())
