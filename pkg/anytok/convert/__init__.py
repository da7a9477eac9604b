"""Readers for vocabularies in other formats (one module per format)."""
