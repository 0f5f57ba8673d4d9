"""``nbgrader zip_collect``'s extractor and collector plugins, with the placing rules of
``avgpool-course collect``."""

from __future__ import annotations

from pathlib import Path


from autograder.collect.names import time_zone
from autograder.collect.place import CollectReport, place
from autograder.collect.roster import known_students, read_roster
from autograder.collect.unpack import unpack_folder


try:
    from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
    from traitlets import Unicode
except ImportError:  # pragma: no cover - nbgrader is a dependency of the grading side only
    ExtractorPlugin = FileNameCollectorPlugin = None

if FileNameCollectorPlugin is not None:
    class LMSExtractor(ExtractorPlugin):
        """``nbgrader zip_collect``'s extractor, unpacking as collect does: names decoded as the LMS
        wrote them, within :data:`LIMITS` (each refusal logged), the export's times and the students'
        zips kept (``.collect_unpacked.json``) for :class:`LMSCollector`."""

        def extract(self, archive_path: str, extracted_path: str) -> None:
            for refused in unpack_folder(Path(archive_path), Path(extracted_path), exports_at_top=True):
                self.log.warning("Not collected: %s: %s", refused.file, refused.reason)

    class LMSCollector(FileNameCollectorPlugin):
        """``nbgrader zip_collect``'s collector with ``avgpool-course collect``'s placing rules
        (:func:`place`): files that name no lesson belong to the assignment being collected, files
        of another lesson are skipped, and of two copies the latest is the one returned."""

        timezone = Unicode("", help="The LMS's time zone (IANA name) for times in names and zip entries"
                           ).tag(config=True)
        roster = Unicode("", help="A Canvas gradebook or Moodle participants CSV (see collect.read_roster)"
                         ).tag(config=True)

        _plan: dict | None = None

        def _placed(self) -> dict[str, dict]:
            app = self.parent
            from autograder import coursedir

            lesson = app.coursedir.assignment_id
            root = Path(app.coursedir.root)
            base = Path(app._format_collect_path(app.extracted_directory))
            report = CollectReport(str(base))
            chosen = place(base, coursedir.lessons(root), report, lesson=lesson, zone=time_zone(self.timezone),
                           roster=read_roster(self.roster) if self.roster else None, known=known_students(root))
            for skipped in report.skipped:
                self.log.warning("Not collected: %s: %s", skipped.file, skipped.reason)
            plan = {}
            for entry in report.placed:
                if entry.lesson == lesson:
                    info = {"student_id": entry.student, "file_id": f"{lesson}.ipynb",
                            "first_name": entry.first_name, "last_name": entry.last_name}
                    if entry.timestamp:
                        info["timestamp"] = entry.timestamp
                    plan[str(chosen[(entry.student, entry.lesson)].path)] = info
            return plan

        def collect(self, submitted_file: str) -> dict | None:
            if self._plan is None:
                self._plan = self._placed()
            return self._plan.get(str(Path(submitted_file)))
