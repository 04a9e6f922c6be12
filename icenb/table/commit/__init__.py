"""Commits: snapshot producers (appends, overwrites, row deltas, v4 roots), their validation (spec:
"Commit Conflict Resolution and Retry"), metadata-only changes, snapshot management, expiry,
upgrades and partition statistics."""
