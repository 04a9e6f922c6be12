"""Writing content files: conforming input to the schema, partitioning, locations, metrics, data
files and delete files (position deletes, deletion vectors, equality deletes)."""
