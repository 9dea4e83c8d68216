"""Channels: per-agent channel activity, layers (foreground/background/archived) and summaries."""
