"""A schema in DDL form, ``'a int, b string not null'`` or ``'struct<a: int>'``, as a StructType
(Spark's ``StructType.fromDDL``): the schemas of ``createDataFrame``, ``read.schema``, UDF
return types and streams."""

from __future__ import annotations

import re

from ember import types as T
from ember.errors import AnalysisError
from ember.sql.parser import parse_data_type

__all__ = ["parse_ddl_schema"]


def _split_top_level(text: str, sep: str = ",") -> list[str]:
    parts, depth, cur = [], 0, []
    for c in text:
        if c in "<(":
            depth += 1
        elif c in ">)":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_FIELD_RE = re.compile(r"^\s*(`(?:[^`]|``)+`|[^\s:`]+)\s*:?\s*(.+?)\s*$", re.S)


def parse_ddl_schema(ddl: str) -> T.StructType:
    """``'a int, b string not null'`` -> StructType (Spark's ``StructType.fromDDL`` subset)."""

    text = ddl.strip()
    if text.lower().startswith("struct<") and text.endswith(">"):
        dt = parse_data_type(text)
        assert isinstance(dt, T.StructType)
        return dt
    fields = []
    for part in _split_top_level(text):
        m = _FIELD_RE.match(part)
        if m is None:
            raise AnalysisError(f"Cannot parse the schema {ddl!r}", error_class="PARSE_SYNTAX_ERROR")
        name, type_text = m.group(1), m.group(2)
        if name.startswith("`"):
            name = name[1:-1].replace("``", "`")
        nullable = True
        comment = re.search(r"\s+comment\s+'.*'$", type_text, re.I | re.S)
        if comment:
            type_text = type_text[: comment.start()]
        if re.search(r"\s+not\s+null$", type_text, re.I):
            nullable = False
            type_text = re.sub(r"\s+not\s+null$", "", type_text, flags=re.I)
        fields.append(T.StructField(name, parse_data_type(type_text), nullable))
    return T.StructType(tuple(fields))
