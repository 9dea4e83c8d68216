"""Cortex workers: one package per concern, each a pure core plus a thin worker shell."""

__version__ = "0.1.0"
