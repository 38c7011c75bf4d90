"""``python -m cuda_bench`` = ``scripts/bench``."""

import sys

from cuda_bench.cli import main

sys.exit(main())
