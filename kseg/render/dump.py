"""Moved (issue 11): the dump's flow is :mod:`kseg.storage.dump`; Kafka's string decoder is
:func:`kseg.format.strings.string_decoder`; the control-record text is
:func:`kseg.render.values.control_text`.

These names stay importable from here for branches written before the move;
new code imports them from their modules.  To be removed once nothing imports it.
"""

from __future__ import annotations

from kseg.format.strings import string_decoder  # noqa: F401
from kseg.render.values import control_text  # noqa: F401
from kseg.storage.dump import DumpOptions, Dumper, Problems  # noqa: F401
