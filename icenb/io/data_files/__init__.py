"""Data and delete files by format, read into Arrow with Iceberg field ids (spec: Appendix A):
``parquet`` (read and written), ``orc`` and ``avro`` (read). Each reader takes an input file,
the field ids to read and an optional name mapping."""
