"""A table's and a view's history (:mod:`icenb.table.explore.history`) drawn two ways: the
snapshot tree with branches and tags (``tree``) and version logs as timelines (``timeline``)."""
