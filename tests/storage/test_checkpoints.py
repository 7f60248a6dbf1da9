"""The checkpoint and metadata readers against the formats Kafka's writers produce (``CheckpointFile``,
``PartitionMetadataFile``, ``MetaProperties``, ``CleanShutdownFileHandler``, ``FileQuorumStateStore``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kseg.errors import InputError
from kseg.storage import checkpoints as cp
from kseg.storage.stores.discover import store_of

F = "replication-offset-checkpoint"


def test_offsets_as_kafka_writes_them() -> None:
    got = cp.parse_offsets("0\n3\norders 0 269\n__consumer_offsets 49 -1\nmy.topic-x 7 9223372036854775807\n", F)
    assert {tp: e.offset for tp, e in got.items()} == {
        ("orders", 0): 269,
        ("__consumer_offsets", 49): -1,
        ("my.topic-x", 7): 9223372036854775807,
    }
    assert got[("orders", 0)].line == 3


@pytest.mark.parametrize("text", ["", "0\n", "0\r\n0\r\n"])
def test_empty_checkpoints(text: str) -> None:
    """No first line, or no second line, is an empty checkpoint (``CheckpointReadBuffer.read``)."""
    assert cp.parse_offsets(text, F) == {}


def test_line_ends_as_readline_and_later_entry_wins() -> None:
    got = cp.parse_offsets("0\r\n2\rorders 0 5\norders 0 7", F)
    assert got[("orders", 0)] == cp.OffsetEntry("orders", 0, 7, 4)


@pytest.mark.parametrize(
    "text,message",
    [
        ("1\n0\n", "line 1: Unrecognised version: 1, expecting: 0"),
        (" 0\n0\n", "line 1: Malformed line in checkpoint file: ' 0'"),
        ("0\ntwo\n", "line 2: Malformed line in checkpoint file: 'two'"),
        ("0\n1\norders 0\n", "line 3: Malformed line in checkpoint file: 'orders 0'"),
        ("0\n2\na 0 1\nb 2147483648 1\n", "line 4: Malformed line in checkpoint file: 'b 2147483648 1'"),
        ("0\n1\na 0 9223372036854775808\n", "line 3: Malformed line"),
        ("0\n1\na 0 0x10\n", "line 3: Malformed line"),
        ("0\n1\na 0 1\nb 0 2\n", "Expected [1] entries in checkpoint file, but found only [2] (lines 3 to 4)"),
        ("0\n3\na 0 1\n", "Expected [3] entries in checkpoint file, but found only [1]"),
    ],
)
def test_malformed_offsets_name_the_line(text: str, message: str) -> None:
    with pytest.raises(cp.CheckpointError) as err:
        cp.parse_offsets(text, F)
    assert message in err.value.message and err.value.path == F


def test_java_int_rules() -> None:
    assert cp.java_int("+5") == 5 and cp.java_int("-2147483648") == -(2**31)
    for text in ("", " 1", "1 ", "2147483648", "1_000", "+", "1.0", "Ⅻ"):  # no blanks, underscores, numerals
        assert cp.java_int(text) is None, text
    # Character.digit takes every Unicode decimal digit: java prints 34 for Integer.parseInt("\u0663\u0664")
    assert cp.java_int("٣٤") == 34 and cp.java_int("-１２") == -12


TID = "ZtkM3jXGTZeXkwZ3aAJvPA"


@pytest.mark.parametrize(
    "text",
    [
        f"version: 0\ntopic_id: {TID}",  # PartitionMetadata.encode: no line end after the ID
        f"version: 0\ntopic_id: {TID}\n",
        f"version: 0\r\ntopic_id: {TID}",
        f"version:\t0\ntopic_id:  {TID}",  # ":\\s+": any run of ASCII blanks
        f"version:\x0b0\ntopic_id: {TID}",  # \x0b is Java's \s too
        f"version: 1\ntopic_id: {TID}",  # a later version is read ("version >= CURRENT_VERSION": downgrades)
        f"version: +0\ntopic_id: {TID}",  # Integer.parseInt takes a sign
        f"version: \u0660\ntopic_id: {TID}",  # ... and any Unicode decimal digit
        f": 0\nx: {TID}",  # the keys are never compared: only the part after the separator counts
        f"version: 0\ntopic_id: {TID}==",  # Uuid.fromString: Base64's URL decoder takes the padding
        f"version: 0\ntopic_id: {TID}\nanything",  # lines after the second are not read
    ],
)
def test_partition_metadata_kafka_reads(text: str) -> None:
    """Each was checked against PartitionMetadataReadBuffer's pattern, Integer.parseInt and Base64's URL
    decoder with Java 17: Kafka reads them all, as the topic ID TID."""
    assert cp.parse_partition_metadata(text, "pm") == TID


@pytest.mark.parametrize(
    "text, message",
    [
        (f"version:\u00a00\ntopic_id: {TID}", "line 1: Malformed line in checkpoint file: 'version:\\xa00'"),
        (f"version: 0\ntopic_id:\u2003{TID}", "line 2: Malformed line in checkpoint file"),  # an em space
        (f"version:\x1c0\ntopic_id: {TID}", "line 1: Malformed line"),  # Python's \s, not Java's
        (f"version:0\ntopic_id: {TID}", "line 1: Malformed line"),  # no blank after the colon
        (f"version: 0 \ntopic_id: {TID}", "line 1: Malformed line"),  # Integer.parseInt("0 ") fails
        (f"version: 0: 1\ntopic_id: {TID}", "line 1: Malformed line"),  # three parts
        (f"version: -1\ntopic_id: {TID}", "line 1: Unrecognized version of partition metadata file: -1"),
        ("version: 0\n", "line 2: no line"),
        ("", "line 1: no line"),
        (f"version: 0\ntopic_id: {TID[:-1]}", "line 2: not a topic ID"),
        ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", "Invalid topic ID in partition metadata file"),
    ],
)
def test_partition_metadata_kafka_refuses(text: str, message: str) -> None:
    with pytest.raises(cp.CheckpointError) as err:
        cp.parse_partition_metadata(text, "pm")
    assert message in err.value.message, (text, err.value.message)


@pytest.mark.parametrize(
    "name, expected",
    [
        ("orders-0", ("orders", 0)),
        ("orders-00", ("orders", 0)),
        ("orders-+0", ("orders", 0)),
        ("orders-\u0660", ("orders", 0)),  # Integer.parseInt: Character.digit's digits (checked with Java 17)
        ("my-topic-12", ("my-topic", 12)),
        ("orders-\u00b2", None),  # a superscript is no decimal digit to Java
        ("orders-2147483648", None),  # past an int
        ("orders-", None),
        ("-0", None),
        ("orders", None),
    ],
)
def test_topic_partition_is_parse_topic_partition_name(name: str, expected: tuple[str, int] | None) -> None:
    assert cp.topic_partition(name) == expected


def test_meta_properties() -> None:
    kraft = "#\n#Tue Nov 24 08:00:00 UTC 2026\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\ndirectory.id=b3Vt-Vo1RJOfeX2iJvGlHQ\n"
    got = cp.parse_meta_properties(kraft + "node.id=3\nversion=1\n", "mp")
    assert got == cp.MetaProperties(1, "MkU3OEVBNTcwNTJENDM2Qg", 3, "b3Vt-Vo1RJOfeX2iJvGlHQ")
    assert cp.parse_meta_properties("version=0\nbroker.id=7\n", "mp") == cp.MetaProperties(0, None, 7, None)
    assert cp.parse_properties("a\\:b = c\\u0041\n! comment\n")["a:b"] == ("cA", 1)
    for text, message in (
        ("node.id=1\n", "Failed to find the 'version' property"),
        ("version=1\ncluster.id=x\n", "Failed to find the 'node.id' property"),
        ("version=2\n", "line 1: unknown version '2'"),
        ("version=1\nnode.id=one\n", "line 2: node.id is not an int"),
    ):
        with pytest.raises(cp.CheckpointError) as err:
            cp.parse_meta_properties(text, "mp")
        assert message in err.value.message


def test_clean_shutdown_and_quorum_state() -> None:
    assert cp.parse_clean_shutdown('{"version":0,"brokerEpoch":42}', "cs") == 42
    assert cp.parse_clean_shutdown("", "cs") is None  # Kafka before 3.7: an empty file
    for bad in ("{", '{"version":0}', "[]", '{"brokerEpoch":true}'):
        with pytest.raises(cp.CheckpointError):
            cp.parse_clean_shutdown(bad, "cs")
    state = '{"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,"data_version":0}'
    assert cp.parse_quorum_state(state, "qs")["leaderEpoch"] == 3
    with pytest.raises(cp.CheckpointError, match="leaderEpoch"):
        cp.parse_quorum_state('{"leaderId":1,"data_version":0}', "qs")
    with pytest.raises(cp.CheckpointError, match="line 1: not JSON"):
        cp.parse_quorum_state("{", "qs")
    with pytest.raises(cp.CheckpointError, match="nested deeper"):
        cp.parse_quorum_state("[" * 200_000, "qs")
    with pytest.raises(cp.CheckpointError):
        cp.parse_clean_shutdown("[" * 200_000, "cs")


def test_read_text(tmp_path: Path) -> None:
    assert cp.read_text(str(tmp_path), F, store=store_of(str(tmp_path))) is None
    (tmp_path / F).write_bytes(b"0\n1\n\xff 0 1\n")
    with pytest.raises(cp.CheckpointError) as err:
        cp.read_text(str(tmp_path), F, store=store_of(str(tmp_path)))
    assert err.value.position == 4 and "not UTF-8" in err.value.message
    (tmp_path / "dir").mkdir()
    with pytest.raises(InputError):
        cp.read_text(str(tmp_path), "dir", store=store_of(str(tmp_path)))


@pytest.mark.parametrize(
    "parse",
    [
        cp.parse_offsets,
        cp.parse_partition_metadata,
        cp.parse_meta_properties,
        cp.parse_clean_shutdown,
        cp.parse_quorum_state,
    ],
)
def test_any_text_is_a_value_or_one_checkpoint_error(parse) -> None:
    """Whatever a damaged disk holds: the file's values or a :class:`CheckpointError`, never another
    exception (hypothesis, texts near each format)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    near = st.sampled_from(
        ["0\n2\norders 0 269\nplain 0 420\n", "version: 0\ntopic_id: ZtkM3jXGTZeXkwZ3aAJvPA", "version=1\nnode.id=1\n"]
        + ['{"version":0,"brokerEpoch":42}', '{"leaderId":1,"leaderEpoch":3,"data_version":0}']
    )

    @settings(max_examples=300, deadline=None)
    @given(near, st.text(max_size=40), st.integers(0, 60), st.integers(0, 60))
    def check(base: str, noise: str, at: int, cut: int) -> None:
        text = base[:at] + noise + base[at + cut :]
        try:
            parse(text, "f")
        except cp.CheckpointError as exc:
            assert exc.path == "f" and exc.message

    check()


def test_entries_split_at_javas_whitespace_only() -> None:
    """Java's ``\\s`` is ``[ \\t\\n\\x0B\\f\\r]``: a no-break space joins two words into one token (a
    malformed line to Kafka), a vertical tab separates them."""
    assert cp.parse_offsets("0\n1\norders\x0b0\t7\n", "f") == {("orders", 0): cp.OffsetEntry("orders", 0, 7, 3)}
    for blank in ("\u00a0", "\u2003", "\x1c"):
        with pytest.raises(cp.CheckpointError, match="line 3: Malformed line"):
            cp.parse_offsets(f"0\n1\norders{blank}0 7\n", "f")


def test_a_trailing_blank_leaves_an_entry_a_leading_one_does_not() -> None:
    """``Pattern.split`` drops trailing empty strings (``"orders 0 7 "`` is three tokens: an entry to
    Kafka) and keeps a leading one (``" orders 0 7"`` is four: malformed)."""
    assert cp.parse_offsets("0\n1\norders 0 7 \n", "f") == {("orders", 0): cp.OffsetEntry("orders", 0, 7, 3)}
    with pytest.raises(cp.CheckpointError, match="line 3: Malformed line"):
        cp.parse_offsets("0\n1\n orders 0 7\n", "f")
