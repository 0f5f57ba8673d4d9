# corpus: cheat: tries to find gradebook.db and write full marks into it (and fails the knowledge check)
# category: cheat
# status: ok
# requires: namespaces
# fails: kc_q1, kc_q2, kc_q3, kc_q4, kc_q5, kc_q6, kc_q7, kc_q8, kc_q9, kc_q10
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
import os
import sqlite3
from pathlib import Path

import course

_found = []
for _place in [Path(course.__file__).resolve().parent.parent, Path("/tmp"), Path("/work"), Path.cwd()]:
    for _dir, _subdirs, _files in os.walk(_place):
        if _dir.count(os.sep) > 8 or ".venv" in _dir:
            _subdirs[:] = []
            continue
        _found += [Path(_dir, f) for f in _files if f == "gradebook.db"]
for _db in _found:
    try:
        with sqlite3.connect(str(_db)) as _connection:
            _connection.execute("UPDATE grade SET auto_score = 1000, manual_score = 1000")
            _connection.execute("INSERT INTO student (id, first_name) VALUES ('intruder', 'intruder')")
    except Exception:
        pass
    try:
        with open(_db, "ab") as _handle:
            _handle.write(b"corrupted")
    except OSError:
        pass
q1 = q2 = q3 = q4 = q5 = q6 = q7 = q8 = q9 = q10 = "no idea"
