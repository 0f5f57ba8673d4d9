# corpus: bad input: numpy.py, torch.py and course.py next to the notebook (ignored); answers right
# category: input
# status: ok
# fails:
# %% file numpy.py
raise ImportError("a student's numpy.py must never be imported by the grader")
# %% file torch.py
raise ImportError("a student's torch.py must never be imported by the grader")
# %% file course.py
def check_value(*args, **kwargs):
    return None
