# corpus: cheat: a solution cell finds the child's reply pipe to the grader and writes a malformed message on it: that cell crashes (the student's fault, 0 for what needs it), never a grader error
# category: cheat
# status: crash
# fails: pool_both_tests
# %% pool_both +
import fcntl
import json
import os
import stat
import struct

_forged = json.dumps({"op": "cell_done", "index": "not a number", "verdict": "full marks"}).encode()
for _fd in range(3, 256):
    try:
        if stat.S_ISFIFO(os.fstat(_fd).st_mode) and fcntl.fcntl(_fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
            os.write(_fd, struct.pack("!II", len(_forged), 0) + _forged)
    except OSError:
        pass
