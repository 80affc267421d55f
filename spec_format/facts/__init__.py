"""Facts and data: the format versions and their schemas, the catalog, the reader table, writers
and their known defects, disputes between readers, pairing facts, tensor contracts, exports."""
