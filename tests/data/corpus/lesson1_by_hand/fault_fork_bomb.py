# corpus: fault: a fork bomb inside a graded function, bounded by the process, memory and time limits
# category: fault
# status: timeout | memory
# requires: nproc
# fails: pool_both_tests
# %% pool_both
import os


def pool_both(image, kernel_size):
    while True:
        try:
            os.fork()
        except OSError:
            pass
