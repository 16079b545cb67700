"""Vectorized kernels of the local runtime: key encoding, sorting, set operations, batching.

Everything here works on whole Arrow arrays / NumPy arrays; nothing loops per row.
"""
