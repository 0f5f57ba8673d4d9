# corpus: cheat: searches the disk for the instructor's notebook, the gradebook or other submissions to copy answers
# category: cheat
# status: ok
# requires: namespaces
# fails: kc_q1, kc_q2, kc_q3, kc_q4, kc_q5, kc_q6, kc_q7, kc_q8, kc_q9, kc_q10
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
import os
import re
from pathlib import Path

import course

answers = {}
_places = [Path(course.__file__).resolve().parent.parent, Path("/work"), Path("/tmp"), Path("/root"), Path.home()]
for _place in _places:
    for _dir, _subdirs, _files in os.walk(_place):
        if _dir.count(os.sep) > 8 or ".venv" in _dir:
            _subdirs[:] = []
            continue
        for _file in _files:
            if _file.endswith((".ipynb", ".db", ".json")):
                try:
                    _text = Path(_dir, _file).read_text(errors="ignore")
                except OSError:
                    continue
                for _q, _a in re.findall(r"check_value\((q\d+), \\?['\"](\w)", _text):
                    answers.setdefault(_q, _a)
q1, q2, q3, q4, q5, q6, q7, q8, q9, q10 = (answers.get(f"q{i}", "no idea") for i in range(1, 11))
