"""The one place a command-line program turns user errors into messages and exit codes.

Every console script (skctl, sk-tracer, sk-driver, sk-cloudprov) is a click command run
through ``run_command``: a ``SimkubeError`` prints ``error: ...`` (with its hint) and exits
with the error's code, a click usage error prints click's message, Ctrl-C exits 130, and a
command's integer return value becomes the exit code. Users never see a traceback for
something they can fix.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import click

from simkube.core.errors import SimkubeError
from simkube.core.simtime import SpeedError, TimeScale, parse_speed

EXIT_INTERRUPTED = 130


class SpeedParam(click.ParamType[TimeScale]):
    """A ``--speed`` option: the one speed rule (``core.simtime.parse_speed``) at the prompt.

    A speed sk-driver would refuse is a usage error before the command does anything, with
    the same words skctl, sk-ctrl and sk-driver use; the command gets a ``TimeScale``.
    """

    name = "speed"

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> TimeScale:
        if isinstance(value, TimeScale):  # a default given as the object itself
            return value
        option = param.opts[0] if param is not None and param.opts else "--speed"
        try:
            return parse_speed(value, field=option)
        except SpeedError as exc:
            self.fail(f"{exc.message} ({exc.hint})" if exc.hint else exc.message, param, ctx)


SPEED = SpeedParam()


def run_command(command: click.Command, *, prefix: str = "") -> NoReturn:
    """Run ``command`` with ``sys.argv`` and exit; ``prefix`` names the program in errors."""
    try:
        result = command.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SimkubeError as exc:
        click.echo(f"{prefix}error: {exc}", err=True)
        sys.exit(exc.exit_code)
    # Without standalone mode click hands back ``ctx.exit(code)`` codes instead of exiting.
    sys.exit(result if isinstance(result, int) else 0)
