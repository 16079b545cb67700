"""Reading file relations (Parquet, CSV) into record batches typed like the relation's attributes.

CSV options follow Spark's DataFrameReader names (case-insensitive): ``header`` (default false),
``inferSchema`` (default false: every column is a string), ``sep``/``delimiter`` (default ``,``).
As in Spark, an empty CSV field reads as NULL.  Without a header, columns are named ``_c0``,
``_c1`` ... The relation's attributes come from ``ember.readers`` (schema inference); this module only reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from ember.errors import ExecutionError, UnsupportedError
from ember.execution.kernels.batches import conform, make_batch, schema_of


def _options(options: Sequence[tuple[str, str]] | dict) -> dict[str, str]:
    items = options.items() if isinstance(options, dict) else options
    return {str(k).lower(): str(v) for k, v in items}


def _flag(opts: dict[str, str], key: str, default: bool = False) -> bool:
    v = opts.get(key.lower())
    return default if v is None else v.strip().lower() == "true"


def _read_csv(paths: Sequence[str], opts: dict[str, str]) -> pa.Table:
    header = _flag(opts, "header")
    infer = _flag(opts, "inferSchema")
    sep = opts.get("sep", opts.get("delimiter", ","))
    tables = []
    for p in paths:
        read = pacsv.ReadOptions(autogenerate_column_names=not header)
        parse = pacsv.ParseOptions(delimiter=sep)
        convert = pacsv.ConvertOptions(strings_can_be_null=True, null_values=[""],
                                       quoted_strings_can_be_null=False)
        if not infer:
            # Every column is a string: learn the column names from the first block only.
            with pacsv.open_csv(p, read_options=read, parse_options=parse) as reader:
                names = reader.schema.names
            convert.column_types = {n: pa.large_string() for n in names}
        t = pacsv.read_csv(p, read_options=read, parse_options=parse, convert_options=convert)
        if not header:
            t = t.rename_columns([f"_c{i}" for i in range(t.num_columns)])
        tables.append(t)
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def scan_file_relation(rel, batch_size: int) -> Iterator[pa.RecordBatch]:
    """Batches of a ``FileRelation`` with columns cast to its attributes' Arrow types."""
    opts = _options(rel.options)
    schema = schema_of(rel.attrs)
    fmt = rel.format.lower()
    try:
        if fmt == "parquet":
            table = pq.read_table(list(rel.paths)) if len(rel.paths) > 1 else pq.read_table(
                rel.paths[0])
        elif fmt == "csv":
            table = _read_csv(rel.paths, opts)
        else:
            raise UnsupportedError(f"Data source {rel.format} is not supported")
    except FileNotFoundError as e:
        raise ExecutionError(f"Path does not exist: {e}", error_class="PATH_NOT_FOUND") from e
    by_lower = {n.lower(): i for i, n in enumerate(table.column_names)}
    cols = []
    for pos, a in enumerate(rel.attrs):
        i = by_lower.get(a.name.lower(), pos if fmt == "csv" else None)
        if i is None or i >= table.num_columns:
            raise ExecutionError(f"Column {a.name} not found in {rel.format} source {rel.paths}",
                                 error_class="INTERNAL_ERROR")
        col = table.column(i)
        target = a.data_type.to_arrow()
        if col.type != target:
            col = col.cast(target)
        cols.append(col)
    out = pa.Table.from_arrays(cols, schema=schema) if cols else pa.table({})
    if not cols:
        n = table.num_rows
        for s in range(0, n, max(1, batch_size)):
            yield make_batch([], schema, min(batch_size, n - s))
        return
    for b in out.to_batches(max_chunksize=max(1, batch_size)):
        if b.num_rows:
            yield make_batch([conform(c, f.type) for c, f in zip(b.columns, schema)], schema,
                             b.num_rows)
