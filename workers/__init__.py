"""Cortex workers: one package per concern, each a pure core plus a thin worker shell."""

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "cortex-intel"

try:
    __version__ = version(DISTRIBUTION)  # one definition: pyproject.toml's, through the installed metadata
except PackageNotFoundError:  # a source tree on the path, never installed
    __version__ = "0+unknown"
