"""Data and delete files by format, read into Arrow with Iceberg field ids (spec: Appendix A):
``avro`` and ``orc`` here; Parquet is read by ``icenb.table.scan.read`` and written by
``icenb.table.write.data_files`` (to join them here).
"""
