"""An ``Outcome`` as people and machines read it: a rich table, Markdown, JSON.

The terminal table is for whoever runs the gate by hand; the Markdown is what a pull request
shows (GitHub renders ``$GITHUB_STEP_SUMMARY`` on the run's page), so it opens with a
one-line verdict a reviewer can stop at; the JSON is for scripts. All three say the same
cells, built once here. JUnit XML is in ``check.junit``.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from simkube.check.judging import Judgement, Outcome, Verdict

HEADERS = ("figure", "baseline", "candidate", "change", "limit", "verdict")
_MARKS = {Verdict.OK: "✅ ok", Verdict.BETTER: "🟢 better", Verdict.REGRESSION: "❌ regression",
          Verdict.MISSING: "⚪ missing", Verdict.IGNORED: "⚪ ignored"}
_STYLES = {Verdict.OK: "green", Verdict.BETTER: "green", Verdict.REGRESSION: "bold red",
           Verdict.MISSING: "dim", Verdict.IGNORED: "dim"}


def show_change(judgement: Judgement) -> str:
    """``+1.500 h (+15.0 %)``: the candidate mean minus the baseline mean."""
    change = judgement.change
    if change is None:
        return "-"
    if change == 0:
        return "±0"
    shown = judgement.figure.show(abs(change))
    sign = "+" if change > 0 else "-"
    relative = judgement.relative_change
    return f"{sign}{shown}" + ("" if relative is None else f" ({relative:+.1%})")


def show_spread(judgement: Judgement, *, baseline: bool) -> str:
    spread = judgement.baseline if baseline else judgement.candidate
    if spread is None:
        return "-"
    text = judgement.figure.show(spread.mean)
    if spread.count > 1:
        text += (f" ({judgement.figure.show(spread.low)} … "
                 f"{judgement.figure.show(spread.high)}, {spread.count} runs)")
    return text


def show_limit(judgement: Judgement) -> str:
    """The band the candidate must stay in, on its bad side(s)."""
    show = judgement.figure.show
    if judgement.lower is not None and judgement.upper is not None:
        return f"{show(judgement.lower)} … {show(judgement.upper)}"
    if judgement.upper is not None:
        return f"≤ {show(judgement.upper)}"
    if judgement.lower is not None:
        return f"≥ {show(judgement.lower)}"
    return "-"


def cells(judgement: Judgement) -> tuple[str, str, str, str, str]:
    """Every column but the verdict."""
    return (judgement.figure.label, show_spread(judgement, baseline=True),
            show_spread(judgement, baseline=False), show_change(judgement),
            show_limit(judgement))


def failure_text(judgement: Judgement) -> str:
    """One regression in a sentence: ``node hours rose 8.000 h → 9.500 h, +1.500 h
    (+18.8%), past the limit ≤ 8.400 h``."""
    _, before, after, change, limit = cells(judgement)
    moved = "rose" if (judgement.change or 0) > 0 else "fell"
    return f"{judgement.figure.label} {moved} {before} → {after}, {change}, past the limit {limit}"


def headline(outcome: Outcome) -> str:
    """The verdict in one line."""
    judged = sum(j.verdict not in (Verdict.MISSING, Verdict.IGNORED) for j in outcome.judgements)
    if outcome.passed:
        return (f"PASS: {outcome.candidate.label} is within the limits on all {judged} "
                f"figures against {outcome.baseline.label}")
    moved = ", ".join(f"{j.figure.label} {show_change(j)}" for j in outcome.regressions)
    return (f"REGRESSION: {outcome.candidate.label} against {outcome.baseline.label}: "
            f"{moved} ({len(outcome.regressions)} of {judged} figures)")


def rich_table(outcome: Outcome) -> Table:
    """The table; the headline goes on a line of its own (a title would wrap in a log)."""
    table = Table()
    for header in HEADERS:
        table.add_column(header, justify="left" if header in ("figure", "verdict") else "right")
    for judgement in outcome.judgements:
        style = _STYLES[judgement.verdict]
        table.add_row(*cells(judgement), f"[{style}]{judgement.verdict.value}[/]")
    return table


def _escape(text: str) -> str:
    """A cell's text safe in a table: pipes escaped, and dollars as entities, which GitHub
    would otherwise read as the delimiters of inline math (``$3.94 ($3.84`` is a formula)."""
    return text.replace("|", "\\|").replace("$", "&#36;")


def _plain(value: Any) -> str:
    """A provenance value as a reader writes it: ``1, 2, 3`` and ``10``, not ``[1, 2, 3]``
    and ``10.0``."""
    if isinstance(value, list):
        return ", ".join(_plain(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def markdown(outcome: Outcome) -> str:
    """GitHub-flavoured Markdown: a heading with the verdict, the table, the provenance."""
    icon = "✅" if outcome.passed else "❌"
    lines = [f"### {icon} skctl check: {_escape(headline(outcome))}", "",
             "| " + " | ".join(HEADERS) + " |",
             "|" + "|".join([":---", *["---:"] * 4, ":---"]) + "|"]
    for judgement in outcome.judgements:
        row = [*cells(judgement), _MARKS[judgement.verdict]]
        lines.append("| " + " | ".join(_escape(cell) for cell in row) + " |")
    lines.append("")
    for name, sample in (("baseline", outcome.baseline), ("candidate", outcome.candidate)):
        where = "; ".join(f"{k.replace('_', ' ')} {_plain(v)}"
                          for k, v in sample.provenance.items() if v not in (None, ""))
        lines.append(f"- {name}: `{sample.label}`" + (f" ({_escape(where)})" if where else ""))
    return "\n".join(lines) + "\n"


def json_data(outcome: Outcome) -> dict[str, Any]:
    def spread(value: Any) -> dict[str, float] | None:
        return None if value is None else {"mean": value.mean, "min": value.low,
                                           "max": value.high, "repetitions": value.count}

    return {"passed": outcome.passed, "headline": headline(outcome),
            "baseline": {"label": outcome.baseline.label,
                         "provenance": dict(outcome.baseline.provenance)},
            "candidate": {"label": outcome.candidate.label,
                          "provenance": dict(outcome.candidate.provenance)},
            "figures": [{"figure": j.figure.value, "verdict": j.verdict.value,
                         "baseline": spread(j.baseline), "candidate": spread(j.candidate),
                         "change": j.change, "relative_change": j.relative_change,
                         "lower": j.lower, "upper": j.upper,
                         "direction": j.threshold.direction.value,
                         "relative": j.threshold.relative, "absolute": j.threshold.absolute}
                        for j in outcome.judgements]}
