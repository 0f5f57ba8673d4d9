# corpus: fault: 200 MB of output (print, sys.stdout, the raw file descriptor); the answers are right
# category: fault
# status: ok
# fails:
# %% worked_example
import os
import sys

print("x" * (100 << 20))
for _ in range(100):
    sys.stdout.write("y" * (1 << 20))
try:
    for _ in range(100):
        os.write(1, b"z" * (1 << 20))
        os.write(2, b"z" * (1 << 20))
except OSError:
    pass
by_hand_avg = np.array([[3.75, 5.25], [4.50, 1.00]])
by_hand_max = np.array([[6.0, 8.0], [9.0, 2.0]])
