"""Helpers that the lesson notebooks import: plotting, data, checks, timing, gradient checks.

Nothing here solves an exercise. Start every notebook with::

    from course import setup_notebook
    device = setup_notebook()
"""

from __future__ import annotations

import os
import random
import warnings

__all__ = ["setup_notebook", "pick_device"]

#: What the lessons' code imports on first use besides the set-up's own imports: NumPy's random module
#: (``np.random.seed`` in :func:`setup_notebook`) and what PyTorch's ``backward`` with a given gradient imports
#: (``torch.fx.experimental.symbolic_shapes``, with sympy: 0.35 s of every lesson 4 child). The trusted grader's warm
#: template imports these once (``Lesson.preload_modules``; a blocked module's never), so that each child forked
#: from it does not pay them again.
SETUP_IMPORTS = ("numpy.random", "torch.fx.experimental.symbolic_shapes")

#: Library warnings that are harmless in the lessons; on stderr they would zero a graded cell.
QUIET_WARNINGS = (
    ("ignore", ".*TypedStorage is deprecated.*"),
    ("ignore", ".*Matplotlib is currently using agg.*"),
    ("ignore", ".*non-GUI backend.*"),
    ("ignore", ".*is_categorical_dtype.*"),
)


def pick_device() -> str:
    """``"cuda"`` when PyTorch sees a GPU, else ``"cpu"``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def setup_notebook(seed: int = 0) -> str:
    """Seed every generator (random, NumPy, PyTorch), silence known harmless warnings, set plot defaults.

    Returns the device the lesson should use (``"cuda"`` or ``"cpu"``).
    """
    os.environ.setdefault("PYTHONHASHSEED", str(seed))
    random.seed(seed)
    import numpy as np

    np.random.seed(seed)
    np.set_printoptions(precision=4, suppress=True)
    for action, message in QUIET_WARNINGS:
        warnings.filterwarnings(action, message=message)
    import matplotlib

    matplotlib.rcParams.update({"figure.dpi": 80, "figure.figsize": (6.0, 3.5), "image.cmap": "viridis"})
    try:
        import torch
    except ImportError:  # torch-free lessons still work
        return "cpu"
    torch.manual_seed(seed)
    # full float32 on a GPU: TF32 (the default for convolutions) keeps 10 bits of mantissa, enough to miss
    # the tests' 1e-5 tolerance with an honest convolution-based answer
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    device = pick_device()
    if device == "cpu":  # on CUDA some kernels would warn on stderr, which nbgrader counts as a failure
        # torch.use_deterministic_algorithms(True, warn_only=True) less its import of torch._inductor.config (1.3 s
        # with sympy and dynamo, in every notebook and every grading child), which only sets the flag for
        # torch.compile: no lesson compiles
        torch._C._set_deterministic_algorithms(True, warn_only=True)
    return device
