"""An array on disk.  Reading: ``vfs``, ``directory`` (what is visible at a timestamp window),
``array``, ``tiles``.  Writing: ``writer`` (create/write/delete/metadata), ``fragment_writer``,
``dense_writer``, ``write_buffers``, ``tiling``, ``tile_metadata``, ``delete_writer``.
Maintenance: ``consolidate``, ``fragment_consolidation``, ``vacuum``, ``maintenance``,
``locking``."""
