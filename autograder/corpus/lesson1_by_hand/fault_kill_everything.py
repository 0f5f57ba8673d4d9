# corpus: fault: tries to kill its parent and every process it can reach; in its own PID namespace it reaches none
# category: fault
# status: ok
# requires: namespaces
# fails:
# %% knowledge_check
import os
import signal

q1, q2, q3, q4, q5 = "a", "a", "b", "b", "b"
q6, q7, q8, q9, q10 = "b", "b", "b", "b", "b"
for _pid in (os.getppid(), 1, -1):
    try:
        os.kill(_pid, signal.SIGKILL)
    except OSError:
        pass
