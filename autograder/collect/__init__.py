"""Collect student notebooks from an LMS export (a .zip or a folder) into nbgrader's ``submitted/`` layout.

Learning platforms name files in many ways; all of these land in ``submitted/<student>/<lesson>/``::

    alice_12345_lesson2_loops.ipynb                 Canvas: login, user id, file id, then the file name
    alice_LATE_12345_67890_lesson2_loops-1.ipynb    Canvas marks late work in the name
    Wei Zhang_6666_assignsubmission_file_/my homework (final).ipynb   Moodle: full name, participant id
    Bob Smith - lesson1_by_hand (2).ipynb           full name, re-uploads numbered
    lesson3_numpy/carol/anything.ipynb              one folder per lesson, then per student
    carol/lesson3_numpy/lesson3_numpy.ipynb         nbgrader's own layout (with timestamp.txt)
    submissions/dave_lesson4_torch_LATE.ipynb       generic folders are ignored
    lesson1_by_hand_erin_attempt_2025-03-02-14-05-00.ipynb   Blackboard, with the upload time

The placing rules, in one place (``avgpool-course collect`` and ``nbgrader zip_collect``, through
:class:`LMSCollector`, use the same ones):

* lesson: the lesson name (or its ``lessonN`` prefix) found in the path, else ``--lesson``;
* student: only from the names the export itself gives (never from inside a zip a student uploaded:
  there any name may be anyone's): the first folder that names someone (or else the file name) once
  lesson names, copy numbers, dates and LMS words are removed: the words before the first number are
  the name, that number is the LMS's user id. Names keep their letters in any script (``José Núñez``
  -> ``jose_nunez``, ``李明`` -> ``李明``). The student id is the name, or ``<name>_<LMS id>`` when two
  LMS ids share a name (in this export or in the gradebook), or what ``--roster`` (a Canvas gradebook
  or Moodle participants CSV) says; the gradebook keeps each student's LMS id, so an id once given
  stays that student's;
* time: a date in the export's part of the name, else nbgrader's ``timestamp.txt`` beside the notebook
  (not inside a student's zip), else the export's zip entry time (a student's zip: that zip's time);
  times without a zone are the LMS's local time (``--timezone``, default UTC). Written to
  ``timestamp.txt`` in nbgrader's format, so that ``nbgrader autograde`` knows how late it is;
* late: marked LATE by the LMS, or after ``--due``; when one student handed in a lesson twice, the
  latest copy wins (by time, then copy number).

Every file that cannot be placed is reported with the reason and what to do; one bad file never stops
the others. Links, ``..`` and absolute paths are never followed; archives (an export zip, and a
student's zip in a zip or folder export alike) are unpacked within :class:`UnpackLimits`, checked while
streaming, each refusal reported.

Modules: ``names`` (who, which lesson and when, read from a path), ``roster`` (the roster and the
students the gradebook knows), ``unpack`` (archives within limits), ``place`` (into ``submitted/``, and
the gradebook), ``zip_collect`` (nbgrader's plugins: ``autograder.collect.zip_collect.LMSExtractor`` and
``LMSCollector`` in ``nbgrader_config.py``), ``exchange`` (nbgrader's exchange on a hub: the student from
the uid that owns each hand-in, its time from the kernel, no links, within the same ``UnpackLimits``;
``c.ExchangeFactory.collect`` in ``nbgrader_config.py``). What the CLI, the sample class and the tests use:
"""

from autograder.collect.names import (TIMESTAMP_FORMAT, UNPACKED, describe, name_in, normalize, parse_due,
                                      parse_time)
from autograder.collect.place import CollectReport, collect, place, record_in_gradebook
from autograder.collect.roster import check_student_id, read_roster
from autograder.collect.unpack import LIMITS, MiB, Skipped, UnpackLimits, unpack_folder, unpack_zip

__all__ = ["TIMESTAMP_FORMAT", "check_student_id", "describe", "name_in", "normalize", "parse_due", "parse_time",
           "CollectReport", "collect", "place", "record_in_gradebook", "read_roster", "LIMITS", "UNPACKED", "MiB",
           "Skipped", "UnpackLimits", "unpack_folder", "unpack_zip"]
