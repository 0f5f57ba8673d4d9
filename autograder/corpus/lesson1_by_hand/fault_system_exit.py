# corpus: fault: SystemExit from a graded function (fails that test) and at the end of a cell (harmless)
# category: fault
# status: ok
# fails: pool_both_tests
# %% pool_both
import sys


def pool_both(image, kernel_size):
    sys.exit("giving up")
# %% knowledge_check
q1, q2, q3, q4, q5 = "a", "a", "b", "b", "b"
q6, q7, q8, q9, q10 = "b", "b", "b", "b", "b"
raise SystemExit(0)
