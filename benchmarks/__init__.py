"""Benchmarks of the course: every stage (loops, NumPy, the autograd Function) against PyTorch's own
``avg_pool2d`` and against this machine's memory-bandwidth floor.

Run ``python -m benchmarks.run`` (the whole CPU table, a few minutes), ``python -m benchmarks.run --quick``
(CI: tiny shapes, checks the harness only) or ``python -m benchmarks.run --device cuda`` (the GPU table).
The reference solutions are taken from the solution cells of ``source/`` (:mod:`autograder.solutions`, as the grader takes them),
every figure is the median of per-round ratios measured in interleaved rounds (:func:`course.timing.compare`, the lessons' own harness).
"""
