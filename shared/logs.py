"""Logging setup for the CLI only: one line per record, event name first, details as key=value —
or, with ``CORTEX_LOG_FORMAT=json``, one JSON object per line for a log collector (Loki,
Elasticsearch, Cloud Logging): ``time`` (RFC 3339 with the local offset, milliseconds),
``level``, ``logger``, ``event`` (the message), every detail as its own field, and a
traceback inside the record (``exc``), never on lines of its own."""

from __future__ import annotations

import logging
import sys
from datetime import datetime
from typing import Any

import msgspec

_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}


def _details(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD}


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        extras = " ".join(f"{k}={v}" for k, v in _details(record).items())
        when = self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        base = f"{when} {record.levelname:<7} {record.name} {record.getMessage()}"
        text = f"{base} {extras}" if extras else base
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def rfc3339(created: float) -> str:
    """``2026-03-02T09:15:04.123+01:00``: the record's time with the local offset (``Z`` at UTC)."""
    text = datetime.fromtimestamp(created).astimezone().isoformat(timespec="milliseconds")
    return text.removesuffix("+00:00") + "Z" if text.endswith("+00:00") else text


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (a newline inside a value is escaped)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {"time": rfc3339(record.created), "level": record.levelname,
                                 "logger": record.name, "event": record.getMessage()}
        entry.update({k: v for k, v in _details(record).items() if k not in entry})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return msgspec.json.encode(entry, enc_hook=str).decode()


def configure(level: str = "INFO", fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # nats-py logs every reconnect attempt with a traceback at ERROR; our callbacks say it once.
    logging.getLogger("nats").setLevel(logging.CRITICAL)
