# corpus: fault: tries to kill its parent and every process it can reach; in its own PID namespace it reaches none
# category: fault
# status: ok
# requires: namespaces
# fails:
# %% knowledge_check
import os
import signal

q1, q2, q3, q4, q5 = "the arithmetic mean of the window's values", True, "c", "(N, C, 1, 1)", False
q6, q7, q8, q9, q10 = "a", "it removes millions of parameters, and so reduces overfitting", "nn.AdaptiveAvgPool2d((1, 1))", False, "b"
for _pid in (os.getppid(), 1, -1):
    try:
        os.kill(_pid, signal.SIGKILL)
    except OSError:
        pass
