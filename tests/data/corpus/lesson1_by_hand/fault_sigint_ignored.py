# corpus: fault: a loop that ignores SIGINT (an interrupt cannot stop it; the grader kills it)
# category: fault
# status: timeout
# fails: pool_both_tests
# %% pool_both
import signal


def pool_both(image, kernel_size):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        try:
            pass
        except BaseException:
            pass
