"""The click parameter types and the decoder names every command shares: one module, so no command module
imports another (``tests/test_layers.py``).

Values as users type them: offsets (64-bit, Java's ``long``), timestamps (:func:`kseg.timestamps.parse_timestamp`),
durations (Kafka's ``*.ms`` settings are ``long`` milliseconds), ``--max-rate`` MB/s, ``--at`` times, and the
key/value decoders of Kafka's ``DumpLogSegments`` (``--key-decoder-class``/``--value-decoder-class``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import click

from kseg.cli.decoder_names import REGISTRY, Decoder, kraft_text, resolve_decoder  # noqa: F401 - re-exported
from kseg.limits import INT32_MAX, INT64_MAX, INT64_MIN
from kseg.timestamps import parse_timestamp


def not_an_option(value: Any, param: click.Parameter | None, ctx: click.Context | None) -> None:
    """With unknown options passed through as arguments (the lookups, for ``-1``), a misspelt ``--option``
    says so."""
    if isinstance(value, str) and value.startswith("--"):
        raise click.NoSuchOption(value, ctx=ctx)


#: Bounds shown by name in help (a 19-digit number wraps at 80 columns and says less than ``2^63-1``).
_BOUND_NAMES = {INT64_MAX: "2^63-1", INT64_MIN: "-2^63", INT32_MAX: "2^31-1", 1 << 62: "2^62", 1 << 20: "2^20"}
_BOUNDS = "|".join(str(v) for v in sorted(_BOUND_NAMES, key=abs, reverse=True))


@functools.cache  # (compiled for a help text only)
def _bound() -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.])(?:{_BOUNDS})(?![\w.])")


def named_bounds(text: str) -> str:
    """``text`` (a line of help) with Java's integer bounds written by name: ``[1<=x<=2^31-1]``, not a
    19-digit number that wraps at 80 columns and says less."""
    return _bound().sub(lambda m: _BOUND_NAMES[int(m.group())], text)


class Int(click.IntRange):
    """An integer option within bounds: its errors say "not a valid integer" (click's IntRange says
    "integer range") and its metavar is INTEGER."""

    name = "integer"


class OffsetType(Int):
    """OFFSET: a 64-bit integer, negative ones too."""

    name = "offset"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        not_an_option(value, param, ctx)
        return super().convert(value, param, ctx)


class TimestampType(click.ParamType):
    """TIMESTAMP as :func:`kseg.timestamps.parse_timestamp` reads it: epoch ms, ISO-8601 with a zone, and
    (``names``) Kafka's ``earliest``/``latest``/``max-timestamp`` and their codes -2/-1/-3."""

    name = "timestamp"

    def __init__(self, names: bool = True) -> None:
        self.names = names  # earliest/latest/max-timestamp accepted (a lookup), or a time only (a range bound)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        not_an_option(value, param, ctx)
        try:
            return parse_timestamp(value, names=self.names)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


@functools.cache  # (compiled for a duration given only)
def _duration() -> re.Pattern[str]:
    return re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d)?\s*\Z")


_UNIT_MS = {None: 1, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def record_ranges(from_offset: int | None, to_offset: int | None, from_time: int | None, to_time: int | None) -> Any:
    """``--from-offset/--to-offset/--from-time/--to-time`` as one :class:`kseg.storage.ranges.Ranges` (a bound
    not given is open; none given: ``EVERYTHING`` itself); a bound after its other end is a usage error."""
    from kseg.storage.ranges import EVERYTHING, Ranges

    ranges = Ranges(
        INT64_MIN if from_offset is None else from_offset,
        INT64_MAX if to_offset is None else to_offset,
        INT64_MIN if from_time is None else from_time,
        INT64_MAX if to_time is None else to_time,
    )
    for lo, hi, what in ((ranges.from_offset, ranges.to_offset, "offset"), (ranges.from_time, ranges.to_time, "time")):
        if lo > hi:
            raise click.UsageError(f"--from-{what} is after --to-{what}")
    return EVERYTHING if ranges == EVERYTHING else ranges


def parse_duration(text: str) -> int:
    """``900000``, ``900s``, ``15m``, ``1h``, ``2d`` to milliseconds (a bare number is milliseconds)."""
    m = _duration().match(text)
    if not m:
        raise click.BadParameter(f"{text!r} is not a duration (examples: 900000, 900s, 15m, 1h, 2d)")
    ms = float(m.group(1)) * _UNIT_MS[m.group(2)]
    if not ms <= INT64_MAX:  # Kafka's durations are longs (and inf/nan are none)
        raise click.BadParameter(f"{text!r} is beyond a 64-bit count of milliseconds")
    return int(ms)


class Duration(click.ParamType):
    """A duration (``--hanging-after``, ``--delete-retention``) in milliseconds: :func:`parse_duration`."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if isinstance(value, int) else parse_duration(value)


MIN_RATE, MAX_RATE = 0.01, 1e6  # 10 kB/s (an 8 MiB read window then takes 14 min) .. 1 TB/s


class RateType(click.FloatRange):
    """``--max-rate``: a finite number of MB/s within [MIN_RATE, MAX_RATE] (FloatRange lets nan through)."""

    name = "number"

    def __init__(self) -> None:
        super().__init__(min=MIN_RATE, max=MAX_RATE)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if rv != rv:
            self.fail(f"{value!r} is not a number", param, ctx)
        return rv


def reference_time(text: str | None) -> int | None:
    """``--at``: None (the latest batch timestamp), ``now``, epoch ms or ISO-8601."""
    if text is None:
        return None
    if text.strip().lower() == "now":
        import time

        return int(time.time() * 1000)
    try:
        return parse_timestamp(text, names=False)
    except ValueError as exc:
        message = str(exc)
        if "give" in message:  # what is accepted: now too
            message = f"{text!r}: give epoch milliseconds, ISO-8601 with a zone (2024-10-27T03:33:20.100Z) or now"
        raise click.BadParameter(message, param_hint="--at") from None


def registry_decoders(
    names: tuple[str | None, str | None],
    schemas: str | None,
    context: str,
    data_paths: list[str],
    run: Any,
    validate: bool = False,
    framing: str = "confluent",
) -> tuple[Any, Any, Any]:
    """``(key decoder, value decoder, registry)`` for ``--key-decoder registry`` / ``--value-decoder
    registry`` (None where the name is another decoder; registry None when neither is): the ``_schemas``
    log of ``--schemas``, else the one beside the data (said in a note), replayed once for both.  No
    source, an unreadable one or one that is not a ``_schemas`` log: exit 2 with the reason."""
    if REGISTRY not in names:
        if schemas is not None or validate or framing != "confluent":
            what = "--schemas" if schemas is not None else "--validate" if validate else "--framing"
            raise click.UsageError(f"{what} is for --key-decoder registry / --value-decoder registry")
        return None, None, None
    from kseg.decoders.registry import INSTALL_HINT, RegistryDecoder, open_registry
    from kseg.decoders.registry.source import beside
    from kseg.errors import InputError, KsegError

    found = schemas is None
    source = schemas if schemas is not None else beside(data_paths)
    if source is None:
        raise click.UsageError("the registry decoder needs --schemas: no _schemas-0 beside the data")
    try:
        registry, directory = open_registry(source, context, validate, framing)
    except InputError as exc:
        run.fail(exc)
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None
    missing = registry.missing_modules()
    if missing:
        raise click.UsageError(f"the registry decoder needs {', '.join(missing)}: {INSTALL_HINT}")
    if found:
        run.note(f"schemas from {directory} (beside the data; --schemas names another)")
    key = RegistryDecoder(registry, "key") if names[0] == REGISTRY else None
    value = RegistryDecoder(registry, "value") if names[1] == REGISTRY else None
    return key, value, registry


def decoders(key: str | None, value: str | None) -> tuple[Any, Any]:
    """The key and value decoders named by ``--key-decoder``/``--value-decoder`` (None for None: no decoder);
    a name that resolves to nothing is a usage error (exit 2)."""
    from kseg.errors import KsegError

    try:
        return (None if key is None else resolve_decoder(key), None if value is None else resolve_decoder(value))
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None
