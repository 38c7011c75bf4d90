"""asv benchmarks: latency of cuda.core and cuda.bindings calls, side by side with CuPy.

Modules are named after the area (bench_device, bench_event, ...); each class is one operation with an
``api`` parameter. ``_compat`` is the only place that knows about library versions; ``_op`` holds the
shared setup/teardown; ``_kernels`` the CUDA source the launch benchmarks compile.
"""
