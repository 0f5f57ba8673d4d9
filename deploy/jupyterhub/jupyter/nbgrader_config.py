"""nbgrader's settings for every JupyterLab on the course's hub (the hub points JUPYTER_CONFIG_PATH here):
which course, and where its exchange is. The course folder's own nbgrader_config.py adds the grader's."""

import os

c = get_config()  # noqa: F821  (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "avgpool-course"
c.Exchange.root = os.environ.get("AVGPOOL_HUB_EXCHANGE", "/srv/nbgrader/exchange")
