"""Logging setup for the CLI only: one line per event, event name first, details as key=value."""

from __future__ import annotations

import logging
import sys

_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        extras = " ".join(f"{k}={v}" for k, v in record.__dict__.items() if k not in _STANDARD)
        when = self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        base = f"{when} {record.levelname:<7} {record.name} {record.getMessage()}"
        text = f"{base} {extras}" if extras else base
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def configure(level: str = "INFO") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # nats-py logs every reconnect attempt with a traceback at ERROR; our callbacks say it once.
    logging.getLogger("nats").setLevel(logging.CRITICAL)
