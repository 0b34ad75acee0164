"""Fixtures of the REST server tests (defined in rest_helpers.py)."""

from rest_helpers import catalog, client  # noqa: F401
