"""The only code that knows TileDB's byte layouts: one module per format spec page, each
reading and writing its structure (``filters/`` holds one module per filter family)."""
