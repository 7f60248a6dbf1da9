"""The names of tiered storage's objects, told by their shape first: the tiered modules load only for one.

A remote segment's objects are named ``<start offset>-<segment id>.<suffix>`` in both layouts
(:mod:`kseg.storage.remote_keys` parses them: Aiven's ``ObjectKeyFactory``, Kafka's
``LocalTieredStorage``), and their directories end ``-<topic id>``.  A broker's own segment files
(``00000000000000000000.log``) never have that shape, so a reader of a local partition asks here and
never loads the key parser, the manifests or the decryption of :mod:`kseg.storage.tiered`.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from kseg.format.kafka_names import TOPIC, UUID
from kseg.storage.names import SEGMENT_STEM

if TYPE_CHECKING:
    from kseg.storage.remote_keys import RemoteObjectKey


@functools.cache  # (compiled for a directory name only)
def _tiered_dir() -> re.Pattern[str]:
    return re.compile(rf"{TOPIC}-{UUID}\Z", re.DOTALL)


def is_tiered_dir(name: str) -> bool:
    """True for a directory name ending ``-<Uuid>``: Aiven's topic directory ``<topic>-<topicId>`` or
    ``LocalTieredStorage``'s partition directory ``<topic>-<partition>-<topicId>``."""
    return _tiered_dir().match(name) is not None


def may_be_segment_object(path: str) -> bool:
    """Whether the file name of ``path`` has the shape of a remote segment's object; False means it is none
    (:func:`kseg.storage.remote_keys.parse_key` would say ``None``), True that the key is worth parsing."""
    return SEGMENT_STEM.match(os.path.basename(path).split(".")[0]) is not None


def aiven_key(path: str) -> RemoteObjectKey | None:
    """The key of ``path`` when it names a segment object of Aiven's layout (parsed only for a name of the
    shape of one: the key parser loads for such a name only)."""
    if not may_be_segment_object(path):
        return None
    from kseg.storage.remote_keys import parse_key

    key = parse_key(path)
    return key if key is not None and key.layout == "aiven" else None


def is_indexes_object(path: str) -> bool:
    """True for the ``.indexes`` object of a segment of Aiven's layout."""
    key = aiven_key(path)
    return key is not None and key.suffix == "indexes"
