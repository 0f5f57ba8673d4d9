# corpus: bad input: a truncated notebook file (not JSON)
# category: input
# status: invalid submission
# fails: *
# %% raw
{"cells": [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "output_size", "solution": true}}, "source": "def output_size(
