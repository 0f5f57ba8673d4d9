"""This term's variant settings, shipped to students with ``course/`` (a new term: ``avgpool-course variants
--new-term``; ``c.Variants.enabled`` in ``nbgrader_config.py``, written here by ``avgpool-course release``).

The salt is not a key: it only makes this term's numbers differ from last term's (see :mod:`course.variants`)."""

SALT = "2026-fall-3f9c1a7e"
ENABLED = True
