"""Helpers for the decoder tests: corpus records and golden lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.decoders.segment import Rec, records

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def corpus_records(partition: str, name: str = "00000000000000000000.log") -> list[Rec]:
    return records(CORPUS / "data" / partition / name)


def golden_record_lines(partition: str, golden_set: str, name: str = "00000000000000000000.log") -> dict[int, str]:
    """``| offset: N ...`` lines of a golden stdout, by offset."""
    text = (CORPUS / "golden" / partition / f"{name}.{golden_set}.stdout").read_text(encoding="utf-8")
    out = {}
    for line in text.split("\n"):
        if line.startswith("| offset: "):
            out[int(line.split()[2])] = line
    return out


@pytest.fixture(scope="session")
def offsets_corpus() -> tuple[list[Rec], dict[int, str]]:
    return corpus_records("__consumer_offsets-0"), golden_record_lines("__consumer_offsets-0", "offsets")


@pytest.fixture(scope="session")
def metadata_corpus() -> tuple[list[Rec], dict[int, str]]:
    return corpus_records("__cluster_metadata-0"), golden_record_lines("__cluster_metadata-0", "metadata")
