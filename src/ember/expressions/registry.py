"""Scalar function registry: ``lookup_function(name, args)`` builds the expression for a call.

Names are case-insensitive.  Unknown names raise ``UNRESOLVED_ROUTINE``; a wrong number of
arguments ``WRONG_NUM_ARGS.WITHOUT_SUGGESTION``.  Aggregate functions are not handled here (see
``aggregates.lookup_aggregate``).  The built expression displays itself as Spark does: the
function name as called (``ucase(s)``, ``ceiling(d)``), Spark's upper-case names where it uses
them (``SQRT(a)``, ``FLOOR(d)``, ``POWER(2, 3)``) and Spark's added default arguments
(``round(a, 0)``, ``substr(s, 1, 2147483647)``, ``locate(x, s, 1)``, ``LOG(E(), a)``).

Regex functions (``rlike``/``regexp_like``/``regexp``, ``regexp_extract``, ``regexp_replace``)
live in :mod:`ember.expressions.regex`; ``ilike`` is ``lower(s) LIKE lower(p)``.

Known difference: ``upper``/``initcap`` map each character to one character (Arrow's simple
case mapping: ``upper('ß')`` is ``'ẞ'``; Java's full mapping gives ``'SS'``).

Not covered: interval arithmetic (``date - interval '90' day``: use ``date_sub``), arrays beyond
``array(...)``.
"""

from __future__ import annotations

from collections.abc import Callable

from ember import types as T
from ember.coercion import find_wider_type
from ember.errors import AnalysisError
from ember.expressions import array_functions as AF
from ember.expressions import datetime as DT
from ember.expressions import hashes as HF
from ember.expressions import json_path as JP
from ember.expressions import json_functions as JF
from ember.expressions import csv_functions as CF
from ember.expressions import intervals as IV
from ember.expressions import mathfuncs as MF
from ember.expressions import regex as RX
from ember.expressions import strings as SF
from ember.expressions import text_functions as TXT
from ember.expressions import misc_functions as MISCF
from ember.expressions import timestamp_functions as TSF
from ember.expressions import timestamp_ntz as NTZ
from ember.expressions import calendar_intervals as CI
from ember.expressions.arithmetic import (
    Abs, Add, Divide, Multiply, Pmod, Remainder, Subtract, UnaryMinus, UnaryPositive,
)
from ember.expressions.base import Expression, Literal, NamedExpression
from ember.expressions.time_window import TimeWindow, window_durations
from ember.expressions.cast import Cast
from ember.expressions.collections import (
    CreateMap, ElementAt, GetArrayItem, MapFromArrays, MapKeys, MapValues, Size, extract_value,
)
from ember.expressions.conditional import CaseWhen, Coalesce, Greatest, If, Least
from ember.expressions.generators import Explode, Inline, Stack
from ember.expressions import higher_order as HO
from ember.expressions.higher_order import bind_lambda
from ember.expressions.grouping import Grouping, GroupingID
from ember.expressions.misc import (
    CreateArray,
    CreateNamedStruct,
    FunctionCall,
    ScalarFunction,
    to_pretty_sql,
)
from ember.expressions import nondeterministic as ND
from ember.expressions.try_eval import TryEval
from ember.expressions.predicates import EqualNullSafe, EqualTo, IsNotNull, IsNull, Like

__all__ = ["lookup_function", "function_names", "wrong_num_args", "unresolved_routine"]

_ANY = 1 << 20


def unresolved_routine(name: str) -> AnalysisError:
    return AnalysisError(
        f"Cannot resolve routine `{name}` on search path [`system`.`builtin`, `system`.`session`, "
        "`spark_catalog`.`default`].",
        error_class="UNRESOLVED_ROUTINE",
        parameters={"routineName": f"`{name}`",
                    "searchPath": "[`system`.`builtin`, `system`.`session`, "
                                  "`spark_catalog`.`default`]"},
    )


def wrong_num_args(name: str, expected: str, actual: int) -> AnalysisError:
    return AnalysisError(
        f"The `{name}` requires {expected} parameters but the actual number is {actual}. Please, "
        "refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.",
        error_class="WRONG_NUM_ARGS.WITHOUT_SUGGESTION",
        parameters={"functionName": f"`{name}`", "expectedNum": expected,
                    "actualNum": str(actual),
                    "docroot": "https://spark.apache.org/docs/latest"},
    )


def _expected(lo: int, hi: int) -> str:
    if lo == hi:
        return str(lo)
    if hi >= _ANY:
        return f"> {lo - 1}" if lo > 0 else ">= 0"
    return f"[{', '.join(str(i) for i in range(lo, hi + 1))}]"


def _type_of(e: Expression) -> T.DataType:
    try:
        return e.data_type
    except Exception:
        return T.NULL


Builder = Callable[[str, tuple[Expression, ...]], Expression]
_BUILDERS: dict[str, tuple[int, int, Builder]] = {}


def _reg(names: str, lo: int, hi: int):
    def deco(fn: Builder) -> Builder:
        for n in names.split():
            _BUILDERS[n] = (lo, hi, fn)
        return fn
    return deco


@_reg("abs", 1, 1)
def _abs(name, a):
    return Abs(a[0])


@_reg("negative", 1, 1)
def _neg(name, a):
    return UnaryMinus(a[0], function_name="negative")


@_reg("positive", 1, 1)
def _pos(name, a):
    return UnaryPositive(a[0])


@_reg("coalesce", 1, _ANY)
def _coalesce(name, a):
    return Coalesce(tuple(a))


@_reg("grouping", 1, 1)
def _grouping(name, a):
    return Grouping(a[0])


@_reg("grouping_id", 0, _ANY)
def _grouping_id(name, a):
    return GroupingID(tuple(a))


@_reg("if iff", 3, 3)
def _if(name, a):
    return If(a[0], a[1], a[2])


@_reg("ifnull nvl", 2, 2)
def _nvl(name, a):
    return FunctionCall.of(name, a, Coalesce((a[0], a[1])))


@_reg("nvl2", 3, 3)
def _nvl2(name, a):
    return FunctionCall.of(name, a, If(IsNotNull(a[0]), a[1], a[2]))


@_reg("nullif", 2, 2)
def _nullif(name, a):
    return FunctionCall.of(name, a, If(EqualTo(a[0], a[1]), Literal(None, _type_of(a[0])), a[0]))


@_reg("isnull", 1, 1)
def _isnull(name, a):
    return IsNull(a[0])


@_reg("isnotnull", 1, 1)
def _isnotnull(name, a):
    return IsNotNull(a[0])


@_reg("greatest", 2, _ANY)
def _greatest(name, a):
    return Greatest(tuple(a))


@_reg("least", 2, _ANY)
def _least(name, a):
    return Least(tuple(a))


@_reg("mod", 2, 2)
def _mod(name, a):
    return FunctionCall.of(name, a, Remainder(a[0], a[1]))


@_reg("pmod", 2, 2)
def _pmod(name, a):
    return Pmod(a[0], a[1])


@_reg("struct", 0, _ANY)
def _struct(name, a):
    names = tuple(x.name if isinstance(x, NamedExpression) else f"col{i + 1}"
                  for i, x in enumerate(a))
    return CreateNamedStruct(names, tuple(a), fn_name="struct")


@_reg("(tuple)", 1, _ANY)
def _tuple(name, a):
    """``(a, b)`` row constructor: Spark shows it as ``named_struct(a, a, b, b)`` (the parser
    should call this internal name, which SQL text cannot reach)."""
    names = tuple(x.name if isinstance(x, NamedExpression) else f"col{i + 1}"
                  for i, x in enumerate(a))
    return CreateNamedStruct(names, tuple(a))


@_reg("named_struct", 0, _ANY)
def _named_struct(name, a):
    if len(a) % 2:
        raise wrong_num_args(name, "2n (n > 0)", len(a))
    names = []
    for k in a[0::2]:
        if not isinstance(k, Literal) or not isinstance(k.value, str):
            raise AnalysisError(
                "Only foldable STRING expressions are allowed to appear at odd position.",
                error_class="DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING")
        names.append(k.value)
    return CreateNamedStruct(tuple(names), tuple(a[1::2]))


@_reg("array", 0, _ANY)
def _array(name, a):
    return CreateArray(tuple(a))


# -- nested types: maps, element and field access, size --------------------------------------


@_reg("map", 0, _ANY)
def _map(name, a):
    if len(a) % 2:
        raise wrong_num_args(name, "2n (n > 0)", len(a))
    return CreateMap(tuple(a[0::2]), tuple(a[1::2]))


@_reg("map_from_arrays", 2, 2)
def _map_from_arrays(name, a):
    return MapFromArrays(a[0], a[1])


@_reg("element_at try_element_at", 2, 2)
def _element_at(name, a):
    return ElementAt(a[0], a[1], ansi=name == "element_at", fn_name=name)


@_reg("get", 2, 2)
def _get(name, a):
    """``get(array, index)``: ``array[index]`` returning NULL out of bounds (Spark's ``Get``)."""
    return FunctionCall.of(name, a, GetArrayItem(a[0], a[1], ansi=False))


@_reg("(extract_value)", 2, 2)
def _extract_value(name, a):
    """``child[key]`` / ``child.field`` on an expression (the parser's internal name)."""
    return extract_value(a[0], a[1])


@_reg("size cardinality", 1, 1)
def _size(name, a):
    return Size(a[0], fn_name=name)


@_reg("explode explode_outer", 1, 1)
def _explode(name, a):
    return Explode(a[0], display=name)


@_reg("posexplode posexplode_outer", 1, 1)
def _posexplode(name, a):
    return Explode(a[0], position=True, display=name)


@_reg("inline inline_outer", 1, 1)
def _inline(name, a):
    return Inline(a[0], display=name)


@_reg("stack", 2, _ANY)
def _stack(name, a):
    return Stack(tuple(a))


@_reg("transform filter exists forall", 2, 2)
def _array_hof(name, a):
    arr, f = a
    # Spark binds the index only for a two-parameter lambda (so ``(x, y, z) -> ...`` fails as
    # "expects 3 arguments, but got 1")
    with_index = name in ("transform", "filter") and len(getattr(f, "arguments", ())) == 2
    f = bind_lambda(name, f, HO._element_params(arr.data_type, with_index))
    cls = {"transform": HO.ArrayTransform, "filter": HO.ArrayFilter,
           "exists": HO.ArrayExists, "forall": HO.ArrayForAll}[name]
    return cls(arr, f)


@_reg("aggregate reduce", 3, 4)
def _aggregate(name, a):
    arr, zero, merge = a[0], a[1], a[2]
    et = HO._element_params(arr.data_type, False)
    merge = bind_lambda(name, merge, [(zero.data_type, True)] + et)
    if len(a) > 3:
        finish = bind_lambda(name, a[3], [(zero.data_type, True)])
    else:  # Spark's default finish: the identity
        v = HO.NamedLambdaVariable("id", zero.data_type, True)
        finish = HO.LambdaFunction(v, (v,))
    return HO.ArrayAggregate(arr, zero, merge, finish, fn_name=name)


@_reg("zip_with", 3, 3)
def _zip_with(name, a):
    left, right, f = a
    params = HO._element_params(left.data_type, False) + HO._element_params(right.data_type,
                                                                            False)
    params = [(t, True) for t, _ in params]  # the shorter side is padded with NULLs
    return HO.ZipWith(left, right, bind_lambda(name, f, params))


@_reg("map_keys", 1, 1)
def _map_keys(name, a):
    return MapKeys(a[0])


@_reg("map_values", 1, 1)
def _map_values(name, a):
    return MapValues(a[0])


_CAST_FUNCTIONS = {
    "boolean": T.BOOLEAN, "tinyint": T.BYTE, "smallint": T.SHORT, "int": T.INT,
    "bigint": T.LONG, "float": T.FLOAT, "double": T.DOUBLE, "string": T.STRING,
    "binary": T.BINARY, "date": T.DATE, "timestamp": T.TIMESTAMP,
    "decimal": T.DecimalType(10, 0),
}


def _cast_fn(name, a):
    return Cast(a[0], _CAST_FUNCTIONS[name])


for _n in _CAST_FUNCTIONS:
    _BUILDERS[_n] = (1, 1, _cast_fn)


# -- table-driven functions -------------------------------------------------------------------


def _scalar(key: str, display: str):
    def build(name, a):
        return ScalarFunction(display or name, tuple(a), key)
    return build


for _name, (_key, _lo, _hi) in SF.STRING_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, _scalar(_key, ""))
for _name, (_key, _lo, _hi) in AF.ARRAY_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, _scalar(_key, ""))


@_reg("array_sort", 1, 1)
def _array_sort(name, a):
    """``array_sort(a)``, named as Spark names it: with its default comparator lambda."""
    c = AF.ARRAY_SORT_COMPARATOR
    return FunctionCall(name, ScalarFunction(name, tuple(a), "array_sort"),
                        (a[0].sql(), c), (a[0].simple_string(), c), (to_pretty_sql(a[0]), c))


@_reg("split", 2, 3)
def _split(name, a):
    """``split(s, regex)`` shows Spark's default limit: ``split(s, ,, -1)``."""
    return ScalarFunction(name, tuple(a) if len(a) == 3 else (*a, Literal(-1, T.INT)), "split")


@_reg("arrays_zip", 1, _ANY)
def _arrays_zip(name, a):
    return ScalarFunction(name, tuple(a), "arrays_zip", (AF.zip_field_names(a),))


for _name, (_key, _disp, _lo, _hi) in {**MF.MATH_FUNCTIONS, **DT.DATETIME_FUNCTIONS,
                                       **HF.HASH_FUNCTIONS, **JP.JSON_FUNCTIONS}.items():
    _BUILDERS[_name] = (_lo, _hi, _scalar(_key, _disp))


def _with_defaults(name: str, extra: tuple[Expression, ...], display: str, key: str):
    def build(n, a):
        return ScalarFunction(display or n, tuple(a) + extra[len(a) - _BUILDERS[name][0]:], key)
    return build


_BUILDERS["substr"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(2147483647, T.INT),) if len(a) == 2 else ()), "substring"))
_BUILDERS["substring"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(2147483647, T.INT),) if len(a) == 2 else ()), "substring"))
_BUILDERS["locate"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(1, T.INT),) if len(a) == 2 else ()), "locate"))
_BUILDERS["position"] = _BUILDERS["locate"]
_BUILDERS["lpad"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(" ", T.STRING),) if len(a) == 2 else ()), "lpad"))
_BUILDERS["rpad"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(" ", T.STRING),) if len(a) == 2 else ()), "rpad"))
_BUILDERS["round"] = (1, 2, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(0, T.INT),) if len(a) == 1 else ()), "round"))
_BUILDERS["bround"] = (1, 2, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(0, T.INT),) if len(a) == 1 else ()), "bround"))
_BUILDERS["~"] = (1, 1, lambda n, a: MF.BitwiseNot("~", tuple(a), "~"))
for _name in ("unix_timestamp", "to_unix_timestamp", "from_unixtime"):
    _BUILDERS[_name] = (1 if _name == "from_unixtime" else 0, 2, lambda n, a: ScalarFunction(
        n, (tuple(a) or (ScalarFunction("current_timestamp", (), "current_timestamp"),)) + (
            (Literal(DT.DEFAULT_TIMESTAMP_PATTERN, T.STRING),) if len(a) < 2 else ()), n))
_BUILDERS["log"] = (1, 2, lambda n, a: ScalarFunction(
    "LOG", ((ScalarFunction("E", (), "e"),) if len(a) == 1 else ()) + tuple(a), "log"))
for _name, (_key, _disp, _lo, _hi) in RX.REGEX_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, _scalar(_key, _disp))
_BUILDERS["regexp_extract"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(1, T.INT),) if len(a) == 2 else ()), "regexp_extract"))
_BUILDERS["regexp_replace"] = (3, 4, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(1, T.INT),) if len(a) == 3 else ()), "regexp_replace"))
for _name, (_lo, _hi) in IV.INTERVAL_FUNCTIONS.items():  # make_dt_interval, make_ym_interval
    _BUILDERS[_name] = (_lo, _hi, IV.build_interval_function)
for _name, (_key, _disp, _lo, _hi) in NTZ.NTZ_FUNCTIONS.items():  # to_timestamp_ntz, ...
    _BUILDERS[_name] = (_lo, _hi, _scalar(_key, _disp))
_BUILDERS["convert_timezone"] = (2, 3, lambda n, a: ScalarFunction(n, (
    (ScalarFunction("current_timezone", (), "current_timezone"),) if len(a) == 2 else ())
    + tuple(a), "convert_timezone"))  # two arguments: from the session time zone
for _name, (_lo, _hi) in CI.CALENDAR_FUNCTIONS.items():  # make_interval, try_make_interval
    _BUILDERS[_name] = (_lo, _hi, CI.build_make_interval)
_BUILDERS["e"] = (0, 0, lambda n, a: ScalarFunction("E", (), "e"))
_BUILDERS["pi"] = (0, 0, lambda n, a: ScalarFunction("PI", (), "pi"))


def _escape_char(a) -> str:
    """The escape character of ``like``/``ilike(s, p[, escape])`` (a one-character literal)."""
    if len(a) < 3:
        return "\\"
    e = a[2]
    if not isinstance(e, Literal) or not isinstance(e.value, str) or len(e.value) != 1:
        raise AnalysisError(
            "The escape character must be a single character string literal.",
            error_class="INVALID_ESCAPE_CHAR",
            parameters={"sqlExpr": f'"{to_pretty_sql(e)}"'})
    return e.value


@_reg("ilike", 2, 3)
def _ilike(name, a):
    """``ilike(s, p[, escape])`` is ``lower(s) LIKE lower(p)``, shown as ``ilike(s, p)``."""
    escape = _escape_char(a)
    lower = (ScalarFunction("lower", (a[0],), "lower"), ScalarFunction("lower", (a[1],), "lower"))
    return FunctionCall.of(name, a[:2], Like(lower[0], lower[1], escape))


@_reg("extract date_part datepart", 2, 2)
def _extract(name, a):
    fld, src = a
    field_name = fld.value if isinstance(fld, Literal) and isinstance(fld.value, str) else None
    key = DT.EXTRACT_FIELDS.get((field_name or "").lower())
    if key is None:
        raise AnalysisError(
            f"The value of parameter(s) `field` in `{name}` is invalid: {field_name}.",
            error_class="INVALID_EXTRACT_FIELD",
            parameters={"field": f"`{field_name}`", "expr": f'"{to_pretty_sql(src)}"'})
    impl = ScalarFunction(key, (src,), key)
    if name in ("extract", "datepart"):
        return FunctionCall(name, impl, (f"{field_name} FROM {src.sql()}",),
                            (f"{field_name}, {src.simple_string()}",),
                            (f"{field_name} FROM {to_pretty_sql(src)}",))
    return FunctionCall.of(name, a, impl)


@_reg("decode", 2, _ANY)
def _decode(name, a):
    """``decode(bin, charset)`` (Spark's StringDecode) or ``decode(expr, search1, result1, ...
    [, default])`` (Spark's Decode: a CASE over null-safe equalities, shown as called)."""
    if len(a) == 2:
        return ScalarFunction(name, tuple(a), "decode")
    x, rest = a[0], a[1:]
    pairs = rest[: len(rest) // 2 * 2]
    default = rest[-1] if len(rest) % 2 else None
    case = CaseWhen(tuple(EqualNullSafe(x, s) for s in pairs[0::2]), tuple(pairs[1::2]), default)
    return FunctionCall.of(name, a, case)


@_reg("overlay", 3, 4)
def _overlay(name, a):
    return ScalarFunction(name, tuple(a) + ((Literal(-1, T.INT),) if len(a) == 3 else ()),
                          "overlay")


_TRY_ARITHMETIC = {"try_add": Add, "try_subtract": Subtract, "try_multiply": Multiply,
                   "try_divide": Divide, "try_mod": Remainder}


@_reg(" ".join(_TRY_ARITHMETIC), 2, 2)
def _try_arithmetic(name, a):
    return FunctionCall.of(name, a, TryEval(_TRY_ARITHMETIC[name](a[0], a[1])))


@_reg("try_to_timestamp", 1, 2)
def _try_to_timestamp(name, a):
    return ScalarFunction(name, tuple(a), "to_timestamp", ansi=False)


@_reg("try_to_date", 1, 2)
def _try_to_date(name, a):
    return ScalarFunction(name, tuple(a), "to_date", ansi=False)


@_reg("typeof", 1, 1)
def _typeof(name, a):
    return ScalarFunction(name, tuple(a), "typeof")


@_reg("rand random randn", 0, 1)
def _rand(name, a):
    """``rand([seed])`` / ``randn([seed])``: the seed must be an INT or BIGINT literal (a random
    one when left out, as Spark's ResolveRandomSeed draws)."""
    if not a:
        seed = ND.random_seed()
    else:
        lit = a[0]
        if not isinstance(lit, Literal) or not isinstance(
                lit.dtype, (T.IntegerType, T.LongType, T.NullType)):
            raise AnalysisError(
                f'The input seed of `{name}` must be a constant INT or BIGINT, not '
                f'"{to_pretty_sql(lit)}".', error_class="DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
                parameters={"sqlExpr": f'"{name}({to_pretty_sql(lit)})"', "paramIndex": "first",
                            "requiredType": '("INT" or "BIGINT")',
                            "inputSql": f'"{to_pretty_sql(lit)}"',
                            "inputType": f'"{_type_of(lit).simple_string().upper()}"'})
        seed = int(lit.value or 0)
    return ND.Randn(seed) if name == "randn" else ND.Rand(seed)


_BUILDERS["uuid"] = (0, 1, lambda n, a: ND.Uuid())  # a seed is accepted, not reproduced
_BUILDERS["monotonically_increasing_id"] = (0, 0, lambda n, a: ND.MonotonicallyIncreasingID())
_BUILDERS["spark_partition_id"] = (0, 0, lambda n, a: ND.SparkPartitionID())


_BUILDERS["months_between"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(True, T.BOOLEAN),) if len(a) == 2 else ()), "months_between"))


@_reg("equal_null", 2, 2)
def _equal_null(name, a):
    return FunctionCall.of(name, a, EqualNullSafe(a[0], a[1]))


@_reg("zeroifnull", 1, 1)
def _zeroifnull(name, a):
    return FunctionCall.of(name, a, Coalesce((a[0], Literal(0, T.INT))))


@_reg("nullifzero", 1, 1)
def _nullifzero(name, a):
    return FunctionCall.of(name, a, If(EqualTo(a[0], Literal(0, T.INT)),
                                       Literal(None, _type_of(a[0])), a[0]))


_BUILDERS["regexp_instr"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(0, T.INT),) if len(a) == 2 else ()), "regexp_instr"))


@_reg("like", 2, 3)
def _like_fn(name, a):
    """``like(s, p[, escape])``: the ``s LIKE p`` predicate."""
    return Like(a[0], a[1], _escape_char(a))


# -- issue 22: format_string, conv, to_binary, base32, hmac, mask, parse_url,
# jaro_winkler_similarity, UTF-8 validation (ember.expressions.text_functions)
for _name, (_lo, _hi, _) in TXT.TEXT_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, TXT.build_text_function)
# -- JSON functions over nested values (from_json, to_json, schema_of_json, json_tuple ...) ------

_BUILDERS["from_json"] = (2, 3, JF.build_from_json)
_BUILDERS["to_json"] = (1, 2, JF.build_to_json)
_BUILDERS["schema_of_json"] = (1, 2, JF.build_schema_of_json)
_BUILDERS["json_object_keys"] = (1, 1, _scalar("json_object_keys", ""))
_BUILDERS["json_tuple"] = (2, _ANY, lambda n, a: JF.JsonTuple(tuple(a)))
_BUILDERS["from_csv"] = (2, 3, CF.build_from_csv)
_BUILDERS["to_csv"] = (1, 2, CF.build_to_csv)
_BUILDERS["schema_of_csv"] = (1, 2, CF.build_schema_of_csv)
# raise_error, assert_true, current_user, session_user, user, version
for _name, (_lo, _hi, _) in MISCF.MISC_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, MISCF.build_misc_function)
# make_timestamp, try_make_timestamp, (timestampadd), (timestampdiff)
for _name, (_lo, _hi, _) in TSF.TIMESTAMP_FUNCTIONS.items():
    _BUILDERS[_name] = (_lo, _hi, TSF.build_timestamp_function)


# -- collection functions over nested values (array_append ... str_to_map, map HOFs) -----------

_BUILDERS["regexp_extract_all"] = (2, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + ((Literal(1, T.INT),) if len(a) == 2 else ()), "regexp_extract_all"))
_BUILDERS["sort_array"] = (1, 2, lambda n, a: ScalarFunction(  # shown with its default order
    n, tuple(a) + ((Literal(True, T.BOOLEAN),) if len(a) == 1 else ()), "sort_array"))
_BUILDERS["str_to_map"] = (1, 3, lambda n, a: ScalarFunction(
    n, tuple(a) + (Literal(",", T.STRING), Literal(":", T.STRING))[len(a) - 1:], "str_to_map"))


@_reg("shuffle", 1, 2)
def _shuffle(name, a):
    """``shuffle(array[, seed])``, shown as ``shuffle(array)`` (a random seed when left out)."""
    seed = a[1] if len(a) > 1 else Literal(ND.random_seed(), T.LONG)
    return FunctionCall.of(name, a[:1], ScalarFunction(name, (a[0], seed), "shuffle"))


@_reg("map_contains_key", 2, 2)
def _map_contains_key(name, a):
    """``map_contains_key(m, k)``: Spark's replacement ``array_contains(map_keys(m), k)``, the
    keys and the value compared in their wider type."""
    mt, vt = _type_of(a[0]), _type_of(a[1])
    wider = find_wider_type([mt.key_type, vt], string_promotion=False) \
        if isinstance(mt, T.MapType) else None
    if wider is None:
        raise AnalysisError(
            f'Input to `map_contains_key` should have been "MAP" followed by a value with same '
            f'key type, but it\'s ["{mt.sql()}", "{vt.sql()}"].',
            error_class="DATATYPE_MISMATCH.MAP_FUNCTION_DIFF_TYPES",
            parameters={"functionName": "`map_contains_key`", "dataType": '"MAP"',
                        "leftType": f'"{mt.sql()}"', "rightType": f'"{vt.sql()}"'})
    keys = MapKeys(a[0]) if wider == mt.key_type else Cast(MapKeys(a[0]), T.ArrayType(wider,
                                                                                       False))
    return FunctionCall.of(name, a, ScalarFunction("array_contains", (keys, a[1]),
                                                   "array_contains"))


@_reg("map_filter transform_keys transform_values", 2, 2)
def _map_hof(name, a):
    m, f = a
    mt = m.data_type
    params = [(getattr(mt, "key_type", T.NULL), False),
              (getattr(mt, "value_type", T.NULL), getattr(mt, "value_contains_null", True))]
    cls = {"map_filter": HO.MapFilter, "transform_keys": HO.TransformKeys,
           "transform_values": HO.TransformValues}[name]
    return cls(m, bind_lambda(name, f, params))


@_reg("map_zip_with", 3, 3)
def _map_zip_with(name, a):
    left, right, f = a
    kt = getattr(left.data_type, "key_type", T.NULL)
    params = [(kt, False), (getattr(left.data_type, "value_type", T.NULL), True),
              (getattr(right.data_type, "value_type", T.NULL), True)]
    return HO.MapZipWith(left, right, bind_lambda(name, f, params))
# -- event-time windows (streaming) ------------------------------------------------------------


@_reg("window", 2, 4)
def _time_window(name, a):
    """SQL ``window(t, '10 seconds'[, slide[, start]])`` (Spark's ``TimeWindow``): the
    durations are string literals; the analyzer's TimeWindowing computes the column."""
    texts = []
    for e in a[1:]:
        if not isinstance(e, Literal) or not isinstance(e.value, str):
            raise AnalysisError(
                f"The window durations of {name}() must be string literals, got {e.sql()}.",
                error_class="DATATYPE_MISMATCH.NON_FOLDABLE_INPUT")
        texts.append(e.value)
    texts += [None] * (3 - len(texts))
    return TimeWindow(a[0], *window_durations(*texts))


def lookup_function(name: str, args: tuple[Expression, ...]) -> Expression:
    """The expression for a scalar function call ``name(args)``.

    >>> lookup_function("UPPER", (Literal("a", T.STRING),)).sql()
    "upper('a')"
    """
    key = name.lower()
    entry = _BUILDERS.get(key)
    if entry is None:
        raise unresolved_routine(name)
    lo, hi, build = entry
    if not (lo <= len(args) <= hi):
        raise wrong_num_args(key, _expected(lo, hi), len(args))
    return build(key, tuple(args))


def function_names() -> list[str]:
    """All scalar function names the registry knows (sorted)."""
    return sorted(_BUILDERS)
