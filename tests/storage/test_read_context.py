"""Two reads in one process with different read contexts (``kseg.storage.context``) see nothing of each
other's settings: the RSM keys of one never decrypt for the other, the pacing of one never paces the
other, and a context travels whole through a pickle (to a Spark task) without its terminal observers."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from kseg.limits import DEFAULT_MAX_MESSAGE_SIZE
from kseg.ops.verify.run import verify_all
from kseg.storage.context import ReadContext, RsmKeys, reading, running
from kseg.storage.private_keys import read_keys
from kseg.storage.read_policy import policy_of, split
from kseg.storage.records import FileRecords
from kseg.storage.remote_keys import object_key
from kseg.storage.stores.discover import store_for
from kseg.storage.stores.find import discover
from kseg.testing.aiven import new_key_pair, write_aiven_segment
from tests.conftest import CORPUS_DATA

TOPIC_ID, SEGMENT_ID = "MWJ6FHTfRYy67jzwZdeqSQ", "tqimKeZwStOEOwRzT3L5oQ"
LOG = CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log"


@pytest.fixture(scope="module")
def encrypted(tmp_path_factory) -> tuple[str, str]:
    """(the ``.log`` of an encrypted segment of Aiven's layout, the private key file of its key pair)."""
    root = tmp_path_factory.mktemp("aiven")
    pair = new_key_pair("kp", bits=2048)
    key_file = root / "kp.pem"
    key_file.write_bytes(pair.private_pem)

    def key_of(suffix: str) -> str:
        return str(root / "tree" / object_key("aiven", "", "t", TOPIC_ID, 0, 0, SEGMENT_ID, suffix))

    write_aiven_segment(
        Path("/"), LOG, key_of, topic="t", topic_id=TOPIC_ID, partition=0, segment_id=SEGMENT_ID,
        end_offset=250, chunk_size=1000, compression=True, key_pair=pair,
    )  # fmt: skip
    return key_of("log"), str(key_file)


def _verified(context: ReadContext, path: str):
    notes: list[str] = []
    return verify_all(discover([path], notes, context), max_message_size=DEFAULT_MAX_MESSAGE_SIZE)


def test_two_verify_all_calls_with_different_keys_do_not_share_them(encrypted) -> None:
    log, key_file = encrypted
    keyed = ReadContext(keys=read_keys({"kp": key_file}))
    plain = ReadContext()
    first = _verified(keyed, log)
    second = _verified(plain, log)  # after a keyed read in this process: still no key here
    third = _verified(keyed, log)  # and the keyed one still reads, after the plain one
    assert first.exit_code == third.exit_code == 0 and first.clean == third.clean == 1
    assert second.exit_code == 2 and second.failed == 1 and not second.clean
    assert "give its private key with --rsm-key kp=FILE" in repr(second.results)


def test_two_readers_open_at_once_each_read_with_their_own_keys(encrypted) -> None:
    log, key_file = encrypted
    keyed = store_for(log, ReadContext(keys=read_keys({"kp": key_file})))
    with FileRecords(log, store=keyed) as records:
        first = [b.base_offset for b in records.batches()]
        with pytest.raises(Exception, match="--rsm-key kp=FILE"):
            FileRecords(log, store=store_for(log, ReadContext()))
        assert [b.base_offset for b in records.batches()] == first and first


def test_read_policies_do_not_reach_another_context(tmp_path: Path) -> None:
    log = str(CORPUS_DATA / "plain-v2-0" / "00000000000000000000.log")
    paced = ReadContext(max_rate=1e12, drop_cache=False)
    with FileRecords(log, store=store_for(log, paced)) as a, FileRecords(log, store=store_for(log, ReadContext())) as b:
        assert policy_of(a.context) is not None and policy_of(a.context).throttle is not None
        assert policy_of(b.context) is None
        assert a.last_offsets([0]) is None  # paced: the bulk read steps aside
        assert b.last_offsets([0]) is not None  # not paced: nothing of the other's policy
    split(paced, 4)  # --jobs 4 of one command: its own bucket only
    assert policy_of(paced).throttle.rate == 1e12 / 4 and policy_of(ReadContext(max_rate=1e12)).throttle.rate == 1e12


def test_the_running_context_is_set_only_inside_its_with() -> None:
    keyed = ReadContext(keys=RsmKeys((("kp", "kp.pem", b"pem"),)))
    assert running().keys == RsmKeys()
    with reading(keyed):
        assert running() is keyed
        with reading(ReadContext()):
            assert running().keys == RsmKeys()
        assert running() is keyed
    assert running().keys == RsmKeys()


def test_a_context_pickles_with_its_keys_and_without_its_observers() -> None:
    context = ReadContext(max_rate=5e6, keys=RsmKeys((("kp", "kp.pem", b"pem"),)))
    context.observers.meter = lambda *a: None  # a terminal's bar: not for a task on another process
    again = pickle.loads(pickle.dumps(context))
    assert again == context and again.keys.get("kp") == ("kp.pem", b"pem")
    assert again.observers.meter is None and again.observers is not context.observers
