"""Command lines of the components we start: one way to put ``--name=value`` flags on them.

Two callers change a component's flags: skctl's environment (the tuning, then the user's
``--autoscaler-flag`` on top) and sk-ctrl's timer targets (a run's scaled timers on the
command line the component already has). Both mean the same thing — a flag given again
replaces its namesake where it stands, a new one goes at the end — so it is one function here,
in the bottom layer both may import, rather than one in ``env`` and one in ``ctrl``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def flag_name(arg: str) -> str | None:
    """``--name`` of a ``--name=value`` argument; None for anything else (the program, …)."""
    name, equals, _ = arg.partition("=")
    return name if name.startswith("--") and equals else None


def with_flags(argv: Iterable[str], *, flags: Mapping[str, str]) -> list[str]:
    """``argv`` with each ``--name=value`` of ``flags`` in place of its namesake, or appended.

    Replacing in place keeps a command line readable next to the one it came from; only the
    last of several namesakes in ``argv`` survives, as the components' own flag parsers
    (Go's ``flag``, pflag) would read it.
    """
    merged: dict[str, str] = {}
    for position, arg in enumerate(argv):
        # Arguments that are not flags are kept as they are, each under its own key.
        merged[flag_name(arg) or f"\0{position}"] = arg
    for name, value in flags.items():
        merged[f"--{name}"] = f"--{name}={value}"
    return list(merged.values())
