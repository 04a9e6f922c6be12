"""Read models for the pictures and the analyst: inspect tables, metadata tree and graph, snapshot
diff, schema and spec history, history logs, view diff."""
