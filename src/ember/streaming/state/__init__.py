"""Versioned state stores (in-memory with delta/snapshot files, RocksDB) and the
stream-stream join state manager."""
