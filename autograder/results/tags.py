"""The start tags of an HTML page, read as Python's ``html.parser`` reads them (BeautifulSoup's parser, which
nbconvert's ``HTMLExporter`` used to run over every feedback page), without building a tree: one regular
expression over the text, in C. Comments and the text of ``<script>`` and ``<style>`` hold no tags; a quote opens
an attribute's value only right after its ``=``; values may be unquoted, and hold character references
(``&#104;``)."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Iterable, Iterator

#: One attribute in a start tag: its name and its value (with its quotes; empty when it has none).
ATTRIBUTE = re.compile(r"([^\s/>=]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]*))?")
#: Elements whose content is text, never tags (``html.parser``'s CDATA elements).
RAW_TEXT = frozenset({"script", "style"})


@functools.cache
def _markup(names: frozenset[str]) -> re.Pattern:
    """A comment, or a start tag of one of ``names`` or :data:`RAW_TEXT`: its name (group ``name``) and the text of
    its attributes (group ``attributes``)."""
    alternatives = "|".join(sorted(map(re.escape, names | RAW_TEXT)))
    return re.compile(rf"<!--.*?-->|<(?P<name>(?i:{alternatives}))(?=[\s/>])"
                      r"(?P<attributes>(?:[^>=]|=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]*))*)>", re.S)


def start_tags(page: str, names: Iterable[str]) -> Iterator[tuple[re.Match, str, dict[str, str]]]:
    """Each start tag of ``page`` named one of ``names`` (lower case): its match in ``page``, its name and
    ``{attribute: value}`` (names in lower case, values with character references resolved, the first of a
    repeated name kept), in order."""
    names = frozenset(names)
    markup, position = _markup(names), 0
    while (match := markup.search(page, position)) is not None:
        position = match.end()
        if match.group("name") is None:  # a comment
            continue
        name = match.group("name").lower()
        if name in names:
            attributes: dict[str, str] = {}
            for key, value in ATTRIBUTE.findall(match.group("attributes")):
                if len(value) > 1 and value[0] in "\"'" and value[-1] == value[0]:
                    value = value[1:-1]
                attributes.setdefault(key.lower(), html.unescape(value))
            yield match, name, attributes
        if name in RAW_TEXT:
            end = re.compile(rf"</{name}\s*>", re.I).search(page, position)
            position = end.end() if end else len(page)
