"""Writing content files: ``conform`` (input to the table schema), ``partitioning`` (split by
partition, sort), ``locations`` (where files go, their names), ``metrics`` (column metrics),
``data_files`` (the batch and streaming data file writers) and ``delete_files`` (position
deletes, deletion vectors, equality deletes). Parquet itself is :mod:`icenb.io.data_files`."""
