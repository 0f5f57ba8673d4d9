# corpus: fault: SystemExit from a graded function (fails that test) and at the end of a cell (harmless)
# category: fault
# status: ok
# fails: pool_both_tests
# %% pool_both
import sys


def pool_both(image, kernel_size):
    sys.exit("giving up")
# %% knowledge_check
q1, q2, q3, q4, q5 = "the arithmetic mean of the window's values", True, "c", "(N, C, 1, 1)", False
q6, q7, q8, q9, q10 = "a", "it removes millions of parameters, and so reduces overfitting", "nn.AdaptiveAvgPool2d((1, 1))", False, "b"
raise SystemExit(0)
