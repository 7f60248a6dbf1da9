"""The shared click types and decoder names (kseg/cli/params.py), directly: what each accepts and refuses."""

from __future__ import annotations

import click
import pytest

from kseg.cli import params
from kseg.limits import INT64_MAX, INT64_MIN


@pytest.mark.parametrize(
    "text, ms",
    [
        ("900000", 900000),
        ("900s", 900_000),
        ("15m", 900_000),
        ("15min", 900_000),
        ("1h", 3_600_000),
        ("2d", 172_800_000),
        (" 1.5 s ", 1500),
    ],
)
def test_durations(text: str, ms: int) -> None:
    assert params.parse_duration(text) == ms
    assert params.Duration().convert(text, None, None) == ms


@pytest.mark.parametrize(
    "text, why", [("15 weeks", "not a duration"), ("-1s", "not a duration"), ("99999999999999999999d", "64-bit")]
)
def test_durations_refused(text: str, why: str) -> None:
    with pytest.raises(click.BadParameter, match=why):
        params.parse_duration(text)


def test_rate_refuses_nan_and_bounds() -> None:
    rate = params.RateType()
    assert rate.convert("50", None, None) == 50.0
    for bad in ("nan", "0", "1e7"):
        with pytest.raises(click.BadParameter):
            rate.convert(bad, None, None)


def test_offsets_and_timestamps() -> None:
    offset = params.OffsetType(INT64_MIN, INT64_MAX)
    assert offset.convert("-1", None, None) == -1
    with pytest.raises(click.NoSuchOption):
        offset.convert("--formt", None, click.Context(click.Command("x")))
    with pytest.raises(click.BadParameter):
        offset.convert(str(INT64_MAX + 1), None, None)
    assert params.TimestampType().convert("latest", None, None) == -1
    assert params.TimestampType().convert("2024-10-27T03:33:20.100Z", None, None) == 1730000000100
    with pytest.raises(click.BadParameter):
        params.TimestampType(names=False).convert("latest", None, None)


def test_reference_time() -> None:
    assert params.reference_time(None) is None
    assert params.reference_time("1730000000100") == 1730000000100
    assert params.reference_time("now") > 1730000000100
    with pytest.raises(click.BadParameter, match="or now"):
        params.reference_time("yesterday")


def test_decoders() -> None:
    key, value = params.decoders(None, "hex")
    assert key is None and value(b"\x01\xff") == "01ff"
    assert params.decoders("string", None)[0](b"abc") == "abc"
    with pytest.raises(click.UsageError, match="unknown decoder"):
        params.decoders("no-such", None)
