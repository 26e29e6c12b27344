"""Opening a store: its lock, and what it held when its previous owner stopped or died.

The sealed segments are found from their index files; a segment without one was being
written when the tracer died, so it is scanned (up to its last flush) and indexed now, or set
aside when not even its header reached the disk. The newest readable segment gives back the
live state (its restated state plus its events), owner chains and running pods.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from simkube.core.errors import ConfigError
from simkube.core.logs import get_logger
from simkube.trace import ObjectRef, StateRecord, TraceEvent, TraceFormatError
from simkube.tracer import segment_reading, segments
from simkube.tracer.segments import Ancestors, RunFact, SegmentInfo

log = get_logger(__name__)


@dataclass(slots=True)
class Live:
    """An existing object as last recorded: its encoded body and its owner chain."""

    body: bytes
    ancestors: Ancestors


@dataclass(slots=True, kw_only=True)
class Recovered:
    sealed: list[SegmentInfo] = field(default_factory=list)
    live: dict[ObjectRef, Live] = field(default_factory=dict)
    running: dict[str, RunFact] = field(default_factory=dict)
    last_ts: int = 0


def recover(directory: Path) -> Recovered:
    found = Recovered()
    numbers = sorted(int(path.name[:8]) for path in directory.glob(
        f"[0-9]*{segments.TRACE_SUFFIX}") if path.name[:8].isdigit())
    for number in numbers:
        info = _load_info(directory, number)
        if info is not None:
            found.sealed.append(info)
    for info in reversed(found.sealed):
        try:
            found.live, found.running = _load_live(directory, info)
        except (TraceFormatError, OSError) as exc:
            log.warning("segment unreadable; trying the one before", segment=info.number,
                        error=str(exc))
            continue
        break
    for info in found.sealed:
        found.last_ts = max(found.last_ts, info.last_ts or 0, info.start_ts)
    return found


def _load_info(directory: Path, number: int) -> SegmentInfo | None:
    index = segments.segment_path(directory, number, segments.INDEX_SUFFIX)
    try:
        return SegmentInfo.from_json(json.loads(index.read_text()))
    except (OSError, ValueError, TypeError):
        pass
    try:
        info = segment_reading.scan(directory, number)
    except (TraceFormatError, OSError) as exc:
        # Nothing readable was flushed (the tracer died as the segment opened): set aside.
        for suffix in (segments.TRACE_SUFFIX, segments.META_SUFFIX):
            path = segments.segment_path(directory, number, suffix)
            if path.exists():
                path.replace(path.with_name(path.name + ".unreadable"))
        log.warning("unreadable segment set aside", segment=number, error=str(exc))
        return None
    segments.write_index(directory, info)
    log.info("segment recovered after an unclean stop", segment=number, events=info.events)
    return info


def _load_live(directory: Path, info: SegmentInfo,
               ) -> tuple[dict[ObjectRef, Live], dict[str, RunFact]]:
    bodies: dict[ObjectRef, bytes] = {}
    for item in segment_reading.read_trace(directory, info.number, complete=info.complete):
        if isinstance(item, StateRecord):
            for env in item.objects.envelopes:
                bodies[segments.ref_of(env)] = env[4]
        elif isinstance(item, TraceEvent):
            applied, deleted = segments.event_envelopes(item)
            for env in applied:
                bodies[segments.ref_of(env)] = env[4]
            for env in deleted:
                bodies.pop(segments.ref_of(env), None)
    owners: dict[ObjectRef, Ancestors] = {}
    running: dict[str, RunFact] = {}
    for fact in segment_reading.read_meta(directory, info.number):
        if isinstance(fact, RunFact):
            if fact.end_ms is None:
                running[fact.uid] = fact
            else:
                running.pop(fact.uid, None)
        else:
            owners[fact[0]] = fact[1]
    live = {ref: Live(body, owners.get(ref, ())) for ref, body in bodies.items()}
    log.info("store recovered", segment=info.number, live_objects=len(live),
             running_pods=len(running))
    return live, running


def lock(directory: Path) -> int:
    """Hold the store for this process; the kernel releases it if the process dies."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / "LOCK", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ConfigError(f"--store {directory} cannot be used: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise ConfigError(f"--store {directory} is in use by another sk-tracer",
                          hint="each tracer needs its own store directory") from None
    return fd
