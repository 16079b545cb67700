"""Values as CSV / JSON text, as Spark's writers and ``to_json`` / ``to_csv`` print them:
dates and timestamps in Spark datetime patterns (``format_datetime``), scalars through CAST
(``text_values``), JSON string literals with Jackson's escapes (``json_string``) and whole JSON
values (:class:`JsonGenerator`, Spark's ``JacksonGenerator``), vectorized over Arrow arrays.
"""

from __future__ import annotations

import base64

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ember import types as T
from ember.expressions.cast import _local_naive, cast_array
from ember.expressions.datetime import _STRFTIME_TOKENS, _format_token, _pattern_tokens

__all__ = ["DEFAULT_TIMESTAMP_FORMAT", "DEFAULT_DATE_FORMAT", "format_datetime", "text_values",
           "json_string", "JsonGenerator", "CsvGenerator"]

DEFAULT_TIMESTAMP_FORMAT = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
DEFAULT_DATE_FORMAT = "yyyy-MM-dd"


def _str(value: str) -> pa.Scalar:
    return pa.scalar(value, pa.large_string())


def _join(parts: list[pa.Array], sep: str) -> pa.Array:
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, _str(sep))


#: what univocity trims from unquoted values (characters up to the space)
_WHITESPACE = "".join(chr(c) for c in range(33))


def _wrap(arr: pa.Array, left: str, right: str) -> pa.Array:
    return pc.binary_join_element_wise(_str(left), arr, _str(right), _str(""))


def format_datetime(arr: pa.Array, dt: T.DataType, pattern: str, time_zone: str) -> pa.Array:
    """Dates / timestamps as strings in a Spark datetime ``pattern`` (timestamps in
    ``time_zone``; ``X`` / ``XXX`` / ``Z`` print the zone offset, ``XXX`` as ``Z`` for UTC)."""
    if isinstance(dt, T.DateType):
        utc = arr.cast(pa.timestamp("us"))
        local = utc
    else:
        local = _local_naive(arr, time_zone)
        utc = arr.cast(pa.timestamp("us"))
    us = pc.fill_null(local.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    secs, frac = np.divmod(us, 1_000_000)
    valid = pc.is_valid(arr).to_numpy(zero_copy_only=False)
    local_s = pa.array(secs, mask=~valid).cast(pa.timestamp("s"))
    frac_us = pa.array(frac, mask=~valid)
    offset = (us - pc.fill_null(utc.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
              ) // 1_000_000
    parts = []
    run = ""  # consecutive fields strftime prints as Spark does, formatted in one call
    for tok in _pattern_tokens(pattern):
        if tok.startswith("'"):
            run += tok[1:].replace("%", "%%")
            continue
        if tok in _STRFTIME_TOKENS:
            run += _STRFTIME_TOKENS[tok]
            continue
        if run:
            parts.append(_strftime(local_s, run))
            run = ""
        if tok[0] in "XZx":
            parts.append(_offsets(offset, tok))
        else:
            parts.append(_format_token(tok, local_s, frac_us).cast(pa.large_string()))
    if run:
        parts.append(_strftime(local_s, run))
    out = parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, _str(""))
    return pc.if_else(pc.is_valid(arr), out, pa.scalar(None, pa.large_string()))


#: strftime formats Arrow's (much faster) cast to string prints, up to a character: the ISO
#: layouts "YYYY-MM-DD HH:MM:SS" / "YYYY-MM-DD" (the 'T' put in place)
_ISO_PREFIXES = {"%Y-%m-%d %H:%M:%S": None, "%Y-%m-%dT%H:%M:%S": "T", "%Y-%m-%d": None}


def _strftime(local_s: pa.Array, fmt: str) -> pa.Array:
    """``local_s`` (timestamp[s]) formatted with ``fmt``."""
    for prefix, sep in _ISO_PREFIXES.items():
        rest = fmt[len(prefix):]
        if fmt.startswith(prefix) and "%" not in rest.replace("%%", ""):
            text = local_s.cast(pa.string()).cast(pa.large_string())
            if prefix == "%Y-%m-%d":
                text = pc.utf8_slice_codeunits(text, 0, 10)
            elif sep:
                text = pc.utf8_replace_slice(text, 10, 11, sep)
            if rest:
                text = pc.binary_join_element_wise(text, _str(rest.replace("%%", "%")), _str(""))
            return text
    return pc.strftime(local_s, format=fmt).cast(pa.large_string())


def _offsets(offset_s: np.ndarray, tok: str) -> pa.Array:
    """Zone offsets (seconds) as pattern letter ``tok`` prints them; formatted once per
    distinct offset (a zone has few)."""
    if not len(offset_s) or offset_s.min() == offset_s.max():  # one offset (UTC): no search
        distinct, index = offset_s[:1], np.zeros(len(offset_s), dtype=np.int64)
    else:
        distinct, index = np.unique(offset_s, return_inverse=True)
    texts = []
    for off in distinct.tolist():
        sign = "-" if off < 0 else "+"
        hh, mm = divmod(abs(off) // 60, 60)
        if tok[0] == "X" and off == 0:
            texts.append("Z")
        elif tok in ("X", "x"):
            texts.append(f"{sign}{hh:02d}" + (f"{mm:02d}" if mm else ""))
        elif tok in ("XX", "xx", "Z", "ZZ", "ZZZ"):
            texts.append(f"{sign}{hh:02d}{mm:02d}")
        else:
            texts.append(f"{sign}{hh:02d}:{mm:02d}")
    return pc.take(pa.array(texts, pa.large_string()), pa.array(index.reshape(-1)))


def text_values(arr: pa.Array, dt: T.DataType, opts: dict[str, str], time_zone: str
                ) -> pa.Array:
    """Scalar values as CSV / JSON text (before quoting; ``timestampFormat`` / ``dateFormat``
    from the lower-cased ``opts``), NULL stays NULL."""
    if isinstance(dt, T.TimestampType):
        return format_datetime(arr, dt, opts.get("timestampformat", DEFAULT_TIMESTAMP_FORMAT),
                               time_zone)
    if isinstance(dt, T.DateType):
        return format_datetime(arr, dt, opts.get("dateformat", DEFAULT_DATE_FORMAT), time_zone)
    if isinstance(dt, T.StringType):
        return arr.cast(pa.large_string())
    return cast_array(arr, dt, T.STRING, ansi=False, time_zone=time_zone).cast(pa.large_string())


# JSON (Jackson's escapes: the named ones, other control characters as \u00XX)
_JSON_NAMED = (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"),
               ("\b", "\\b"), ("\f", "\\f"))
_JSON_OTHER = tuple(chr(c) for c in range(32) if chr(c) not in "\n\r\t\b\f")


def json_string(arr: pa.Array) -> pa.Array:
    """Strings as JSON string literals (quoted, escaped as Jackson escapes them)."""
    text = arr.cast(pa.large_string())
    for raw, esc in _JSON_NAMED:
        text = pc.replace_substring(text, raw, esc)
    if pc.any(pc.match_substring_regex(text, "[\\x00-\\x1f]")).as_py():
        for c in _JSON_OTHER:
            text = pc.replace_substring(text, c, f"\\u{ord(c):04x}")
    return _wrap(text, '"', '"')


class JsonGenerator:
    """JSON text of Arrow values (Spark's ``JacksonGenerator``): objects for structs and rows,
    arrays, maps as objects named by their keys' text; ``ignore_nulls`` leaves NULL fields out
    (``ignoreNullFields``)."""

    def __init__(self, opts: dict[str, str], time_zone: str, ignore_nulls: bool) -> None:
        self.opts = opts
        self.time_zone = time_zone
        self.ignore_nulls = ignore_nulls

    def object(self, columns: list[pa.Array], fields: list[tuple[str, T.DataType]], n: int,
                valid: pa.Array | None) -> pa.Array:
        frags = []
        for arr, (name, dt) in zip(columns, fields):
            value = self.value(arr, dt)
            if not self.ignore_nulls:
                value = pc.fill_null(value, _str("null"))
            key = json_string(pa.array([name], pa.large_string()))[0].as_py() + ":"
            frags.append(pc.binary_join_element_wise(_str(key), value, _str("")))
        if not frags:
            body = pa.repeat(_str(""), n)
        else:
            # each present field as ",<field>", then the first comma cut (Arrow's skip-nulls
            # join drops the rows whose fields are all NULL)
            parts = [pc.fill_null(_wrap(f, ",", ""), _str("")) for f in frags]
            body = pc.utf8_slice_codeunits(_join(parts, ""), 1)
        out = _wrap(body, "{", "}")
        if valid is not None:
            out = pc.if_else(valid, out, pa.scalar(None, pa.large_string()))
        return out

    def value(self, arr: pa.Array, dt: T.DataType) -> pa.Array:
        """Each value's JSON text; NULL stays NULL."""
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if arr.offset and isinstance(dt, (T.ArrayType, T.MapType)):
            arr = pa.concat_arrays([arr])  # a slice: offsets from 0 (Arrow's list builder)
        if isinstance(dt, T.StringType):
            return json_string(arr)
        if isinstance(dt, (T.TimestampType, T.DateType)):
            return json_string(text_values(arr, dt, self.opts, self.time_zone))
        if isinstance(dt, T.BinaryType):  # base64 per value (Arrow has no base64 kernel)
            return json_string(pa.array(
                [None if v is None else base64.b64encode(v).decode() for v in arr.to_pylist()],
                pa.large_string()))
        if isinstance(dt, (T.FloatType, T.DoubleType)):
            text = text_values(arr, dt, self.opts, self.time_zone)
            special = pc.is_in(text, pa.array(["NaN", "Infinity", "-Infinity"],
                                               pa.large_string()))
            return pc.if_else(special, _wrap(text, '"', '"'), text)
        if isinstance(dt, T.ArrayType):
            values = self.value(arr.values, dt.element_type)
            values = pc.fill_null(values, _str("null"))
            lists = pa.LargeListArray.from_arrays(
                pc.cast(arr.offsets, pa.int64()), values, mask=pc.invert(pc.is_valid(arr)))
            joined = pc.binary_join(lists, _str(","))
            return _wrap(joined, "[", "]")
        if isinstance(dt, T.MapType):
            # a JSON object: the keys' text as names (Spark's JacksonGenerator)
            keys = json_string(cast_array(arr.keys, dt.key_type, T.STRING))
            items = pc.fill_null(self.value(arr.items, dt.value_type), _str("null"))
            entries = pc.binary_join_element_wise(keys, items, _str(":"))
            lists = pa.LargeListArray.from_arrays(
                pc.cast(arr.offsets, pa.int64()), entries, mask=pc.invert(pc.is_valid(arr)))
            return _wrap(pc.binary_join(lists, _str(",")), "{", "}")
        if isinstance(dt, T.StructType):
            # struct_field honours the struct's slice offset (``.field(i)`` does not)
            columns = [pc.struct_field(arr, [i]) for i in range(len(dt.fields))]
            return self.object(columns, [(f.name, f.data_type) for f in dt.fields], len(arr),
                                pc.is_valid(arr))
        text = text_values(arr, dt, self.opts, self.time_zone)
        if isinstance(dt, (T.NumericType, T.BooleanType, T.NullType)):
            return text
        return json_string(text)  # intervals: their SQL text, as a string


class CsvGenerator:
    """CSV records of Arrow values as Spark's univocity-based writer prints them (the CSV
    writer and ``to_csv``): ``sep``, ``quote``, ``escape``, ``nullValue`` (''), ``emptyValue``
    (``""``), ``quoteAll``, ``escapeQuotes``, leading and trailing whitespace trimmed from
    unquoted values (``ignoreLeadingWhiteSpace`` / ``ignoreTrailingWhiteSpace``, true when
    writing); ``opts`` are lower-cased."""

    def __init__(self, opts: dict[str, str], time_zone: str, line_sep: str = "\n") -> None:
        o = opts
        self.opts = opts
        self.time_zone = time_zone
        self.line_sep = line_sep
        self.sep = o.get("sep", o.get("delimiter", ","))
        if self.sep == "\\t":
            self.sep = "\t"
        self.quote = o.get("quote", '"')
        self.escape = o.get("escape", "\\")
        self.escape_escape = o.get("chartoescapequoteescaping", self.escape)
        self.null_value = o.get("nullvalue", "")
        self.empty_value = o.get("emptyvalue", '""')
        self.quote_all = o.get("quoteall", "false").lower() == "true"
        self.escape_quotes = o.get("escapequotes", "true").lower() == "true"
        self.trim_leading = o.get("ignoreleadingwhitespace", "true").lower() == "true"
        self.trim_trailing = o.get("ignoretrailingwhitespace", "true").lower() == "true"

    def quoted(self, text: pa.Array) -> pa.Array:
        """String cells: trimmed, '' as ``emptyValue``; quoted (the quote and escape characters
        inside escaped) when they hold the separator, a line break or (``escapeQuotes``) the
        quote, or always with ``quoteAll``."""
        if self.trim_leading:
            text = pc.utf8_ltrim(text, characters=_WHITESPACE)
        if self.trim_trailing:
            text = pc.utf8_rtrim(text, characters=_WHITESPACE)
        empty = pc.equal(text, "")
        if self.line_sep != "\n":  # univocity writes a value's line breaks as the separator
            text = pc.replace_substring(text, "\n", self.line_sep)
        q = self.quote
        if not q:
            return pc.if_else(empty, _str(self.empty_value), text)
        escaped = text
        if self.escape and self.escape != q:
            escaped = pc.replace_substring(escaped, self.escape, self.escape_escape + self.escape)
        if self.escape_quotes:
            escaped = pc.replace_substring(escaped, q, self.escape + q)
        if self.quote_all:
            return _wrap(pc.if_else(empty, _str(self.empty_value), escaped), q, q)
        needs = pc.or_(pc.match_substring(text, self.sep),
                       pc.or_(pc.match_substring(text, "\n"), pc.match_substring(text, "\r")))
        if self.escape_quotes:
            needs = pc.or_(needs, pc.match_substring(text, q))
        out = pc.if_else(needs, _wrap(escaped, q, q), text)
        return pc.if_else(empty, _str(self.empty_value), out)

    def record(self, columns: list[pa.Array], types: list[T.DataType], n: int) -> pa.Array:
        """One CSV record (without line separator) per row of ``columns``."""
        cells = []
        for arr, dt in zip(columns, types):
            text = text_values(arr, dt, self.opts, self.time_zone)
            if isinstance(dt, T.StringType):
                text = self.quoted(text)
            elif self.quote_all:
                text = _wrap(text, self.quote, self.quote)
            null = _wrap(pa.array([self.null_value], pa.large_string()), self.quote,
                         self.quote)[0] if self.quote_all else _str(self.null_value)
            cells.append(pc.fill_null(text, null))
        if not cells:
            return pa.repeat(_str(""), n)
        return _join(cells, self.sep)
