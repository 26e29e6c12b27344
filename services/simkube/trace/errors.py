"""The one error every trace reader and writer raises for input it cannot use.

A trace may come from anywhere (a colleague, a bug report, another tool), so readers treat it
as untrusted: whatever is wrong (truncation, a bit flip, a wrong type, a newer version) ends as
a ``TraceFormatError`` that says what is wrong and where (file, record number, byte offset or
field), never as a traceback from the decoder that happened to notice.
"""

from __future__ import annotations

from simkube.core.errors import InvalidArgumentError


# Exit code 5, distinct from validation outcomes (0 clean, 1 warnings, 2 errors), so scripts
# can tell an unreadable trace from one that reads fine but would replay badly.
class TraceFormatError(InvalidArgumentError, exit_code=5):
    """A trace cannot be read or written as asked; ``where`` locates the problem."""

    def __init__(self, message: str, *, where: str | None = None, source: str | None = None,
                 hint: str | None = None) -> None:
        self.what = message
        self.where = where
        self.source = source
        located = ": ".join(part for part in (source, where, message) if part)
        super().__init__(located, hint=hint)

    def with_source(self, source: str) -> TraceFormatError:
        """The same error naming the file (or stream) it came from."""
        if self.source is not None:
            return self
        error = TraceFormatError(self.what, where=self.where, source=source, hint=self.hint)
        error.__cause__ = self.__cause__
        return error
