"""``kseg coordinator``: the ``__consumer_offsets`` / ``__transaction_state`` partition of a group or a
transactional id.  Reads no files."""

from __future__ import annotations

import sys

from kseg.cli import parts
from kseg.cli.options import HELP, format_option, quiet_option, start
from kseg.limits import INT32_MAX


@parts.command(context_settings=HELP)
@parts.option("--group", "groups", multiple=True, metavar="ID", help="A consumer group id (repeatable).")
@parts.option(
    "--transactional-id", "transactional_ids", multiple=True, metavar="ID", help="A transactional id (repeatable)."
)
@parts.option(
    "--partitions",
    default="50",
    show_default=True,
    metavar="N",
    help="Partitions of the topic: offsets.topic.num.partitions (for --group) or "
    "transaction.state.log.num.partitions (for --transactional-id); Kafka's default is 50.",
)
@format_option
@quiet_option
def coordinator(
    groups: tuple[str, ...], transactional_ids: tuple[str, ...], partitions: str, output_format: str, quiet: bool
) -> None:
    """The partition of __consumer_offsets holding a consumer group (--group) or of
    __transaction_state holding a transactional id (--transactional-id), by Kafka's rule
    Utils.abs(id.hashCode()) % partitions with Java's String.hashCode: the broker leading it is
    the coordinator, and its directory is the one to dump.  Ids may be repeated and mixed.

    \b
    Exit codes:
      0  every id placed
      2  usage error (no id, or --partitions not 1..2147483647)
    """
    from kseg.jsonlines import dumps
    from kseg.ops.coordinator.coordinator import GROUP, TRANSACTIONAL_ID, partition_for
    from kseg.render import coordinator as render

    run = start(quiet)  # (no read policy: nothing is read)
    if not groups and not transactional_ids:
        run.fail("give at least one --group ID or --transactional-id ID")
    try:
        count = int(partitions.strip())
    except ValueError:
        count = 0
    if not 1 <= count <= INT32_MAX:
        run.fail(f"--partitions: {partitions!r} is not a partition count (1..{INT32_MAX})")
    asked = [(GROUP, g) for g in groups] + [(TRANSACTIONAL_ID, t) for t in transactional_ids]
    placed = [partition_for(kind, ident, count) for kind, ident in asked]
    lines = [dumps(render.row(c)) if output_format == "json" else render.text_line(c) for c in placed]
    run.out.write(("\n".join(lines) + "\n").encode("utf-8", "backslashreplace"))
    run.out.flush()
    sys.exit(0)
