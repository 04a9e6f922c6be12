"""Tests of icenb.table."""
