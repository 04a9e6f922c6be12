"""Row-level changes (spec: "Row-level Deletes"): copy-on-write rewrites and merge-on-read deletes,
updates and upserts."""
