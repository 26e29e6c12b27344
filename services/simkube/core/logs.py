"""structlog configuration shared by every process.

Humans on a terminal get coloured console lines; everything else (a pod, a CI log, a pipe)
gets one JSON object per line so log pipelines can parse it without guessing.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing.

    Binding the logger to the stream object present at configuration time breaks when that
    object is temporarily replaced and then closed (a test runner capturing output, a CLI
    harness): later log calls would write to a closed file. Looking it up per write avoids
    that, and costs one attribute access.
    """

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def configure_logging(*, level: str = "info", json_output: bool | None = None,
                      stream: TextIO | None = None) -> None:
    """Configure structlog and the stdlib root logger once per process."""
    out: Any = stream if stream is not None else _CurrentStderr()
    as_json = (not out.isatty()) if json_output is None else json_output
    numeric_level = logging.getLevelNamesMapping().get(level.upper())
    if numeric_level is None:
        raise ValueError(f"unknown log level {level!r}; use debug, info, warning or error")
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    renderer: Any = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer()
    )
    structlog.configure(
        processors=[*shared, structlog.processors.format_exc_info, renderer]
        if as_json else [*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(numeric_level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(level=numeric_level, stream=out, format="%(name)s: %(message)s")


def get_logger(name: str) -> Any:
    """A bound structlog logger named for the module that logs."""
    return structlog.get_logger(name)
