"""The pure model of Iceberg's formats: no I/O, no Spark, no Jupyter."""
