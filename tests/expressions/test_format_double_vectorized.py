"""The vectorized Java double/float formatting agrees with the scalar reference."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ember.expressions.cast import format_double, java_double_str


def test_doubles_match_scalar_reference() -> None:
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**63, 5000, dtype=np.int64).view(np.float64)
    scaled = rng.random(5000) * 10.0 ** rng.integers(-10, 25, 5000)
    edge = [1e7, np.nextafter(1e7, 0), 1e-3, np.nextafter(1e-3, 0), 1.0, 0.0, -0.0, np.nan,
            np.inf, -np.inf, 1e21, 123.0, 5e-324, 1.7976931348623157e308, 1e16, -12345678.9]
    vals = np.concatenate([bits, -scaled, scaled, edge])
    got = format_double(pa.array(vals)).to_pylist()
    assert got == [java_double_str(float(v)) for v in vals]
    assert format_double(pa.array([1.5, None])).to_pylist() == ["1.5", None]


def test_floats_use_shortest_float32_digits() -> None:
    vals = np.array([0.1, 1e7, 123456789.0, 1e-3, 3.4028235e38, -0.0, 0.0, np.nan],
                    dtype=np.float32)
    got = format_double(pa.array(vals), is_float=True).to_pylist()
    assert got == ["0.1", "1.0E7", "1.2345679E8", "0.001", "3.4028235E38", "-0.0",
                   "0.0", "NaN"]
