"""``kseg dump``: a drop-in ``kafka-dump-log.sh`` (``kafka.tools.DumpLogSegments``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from kseg.cli import parts
from kseg.cli.options import (
    HELP,
    Run,
    decoder_options,
    format_option,
    int32_option,
    max_message_size_option,
    rsm_key_option,
    run_options,
    schemas_options,
    validate_option,
)
from kseg.cli.params import kraft_text, registry_decoders, resolve_decoder
from kseg.limits import EXIT_OK, EXIT_PROBLEMS

TOPIC_DECODERS = {
    "offsets_decoder": "offsets",
    "transaction_log_decoder": "transaction-log",
    "cluster_metadata_decoder": "cluster-metadata",
    "remote_log_metadata_decoder": "remote-log-metadata",
    "share_group_state_decoder": "share-group-state",
}


def kraft_text_41(type_id: int, key: bytes, value: bytes | None) -> str | None:
    """:func:`kraft_text` of Kafka 4.1+, which also prints LEADER_CHANGE's JSON."""
    from kseg.decoders.control import control_record_text

    return control_record_text(type_id, key, value, leader_change=True)


def _kraft_text_of(release):
    if release.leader_change_json:
        return kraft_text_41
    if release.record_line_28:
        return kraft_text_28
    if not release.snapshot_files:
        return kraft_text_32
    return kraft_text if release.kraft_control_records else kraft_text_37


def kraft_text_28(type_id: int, key: bytes, value: bytes | None) -> str | None:
    """Kafka 2.8's control types (``ControlRecordType.java@3893458``): 2 QUORUM_REASSIGNMENT, 3 LEADER_CHANGE,
    every other one but ABORT/COMMIT ``UNKNOWN`` (3.0 made LEADER_CHANGE 2 and added 3/4)."""
    name = {2: "QUORUM_REASSIGNMENT", 3: "LEADER_CHANGE"}.get(type_id, "UNKNOWN")
    return f" controlType: {name}({type_id})"


def kraft_text_32(type_id: int, key: bytes, value: bytes | None) -> str | None:
    """Kafka 3.0-3.2's control records: its ``dumpLog`` matches ABORT/COMMIT only, so SNAPSHOT_HEADER (3)
    and SNAPSHOT_FOOTER (4) print as ``controlType: NAME(N)`` (the JSON lines came in 3.3)."""
    if type_id == 3:
        return " controlType: SNAPSHOT_HEADER(3)"
    if type_id == 4:
        return " controlType: SNAPSHOT_FOOTER(4)"
    return kraft_text_37(type_id, key, value)


def kraft_text_37(type_id: int, key: bytes, value: bytes | None) -> str | None:
    """:func:`kraft_text` of Kafka 3.7 and before: control types 5 and 6 came in 3.8 (KRAFT_VERSION,
    KRAFT_VOTERS); ``ControlRecordType.fromTypeId`` calls them ``UNKNOWN``."""
    if type_id in (5, 6):
        return f" controlType: UNKNOWN({type_id})"
    return kraft_text(type_id, key, value)


def deprecation_notice(name: str | None) -> str:
    """Kafka 3.8's and 3.9's line for a ``kafka.serializer`` decoder class (``convertDeprecatedDecoderClass``)."""
    if (
        name
        and name.startswith("kafka.serializer.")
        and name.rpartition(".")[2] in ("StringDecoder", "LongDecoder", "IntegerDecoder", "DefaultDecoder")
    ):
        cls = name.rpartition(".")[2]
        return f"{name} is deprecated. Please use org.apache.kafka.tools.api.{cls} instead\n"
    return ""


def topic_parser(kind: str, release=None):
    """The topic decoder for ``--offsets-decoder`` and friends, as Kafka ``release`` prints it."""
    from kseg.decoders import parser_for

    return parser_for(kind, release)


def kafka_release(value: str | None):
    """``--kafka-version``/``KSEG_KAFKA_VERSION`` -> ``(Release, explicitly chosen)``."""
    from kseg.format import releases

    try:
        chosen = value if value is not None else os.environ.get(releases.ENV) or None
        return releases.release(chosen), chosen is not None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--kafka-version") from None


@parts.command(context_settings=HELP)
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=True, readable=False))
@parts.option(
    "--files",
    "files_opt",
    metavar="FILE1,FILE2,...",
    help="Comma-separated data, index and snapshot files to dump (as Kafka's --files).",
)
@parts.option("--print-data-log", is_flag=True, help="Print record keys and payloads (implies --deep-iteration).")
@parts.option("--deep-iteration", is_flag=True, help="Iterate the records inside every batch.")
@parts.option("--skip-record-metadata", is_flag=True, help="With --print-data-log, print only keys and payloads.")
@parts.option("--verify-index-only", is_flag=True, help="Check index entries against the log; print only mismatches.")
@parts.option("--index-sanity-check", is_flag=True, help="Run the broker's start-up sanity check on index files.")
@max_message_size_option
@int32_option("--max-bytes", 0x7FFFFFFF, "Read at most this many bytes of each .log file.")
@decoder_options
@schemas_options
@validate_option
@parts.option("--offsets-decoder", is_flag=True, help="Decode __consumer_offsets records.")
@parts.option("--transaction-log-decoder", is_flag=True, help="Decode __transaction_state records.")
@parts.option("--cluster-metadata-decoder", is_flag=True, help="Decode __cluster_metadata (KRaft) records.")
@parts.option("--remote-log-metadata-decoder", is_flag=True, help="Decode __remote_log_metadata records.")
@parts.option("--share-group-state-decoder", is_flag=True, help="Decode __share_group_state records.")
@parts.option(
    "--kafka-version",
    "kafka_version",
    metavar="X.Y",
    default=None,
    help="Print the text output of this Kafka release's kafka-dump-log.sh (2.8 to 4.4; default: "
    "$KSEG_KAFKA_VERSION, else the newest).  --format json does not change with it.",
)
@format_option
@run_options
@rsm_key_option
def dump(
    paths: tuple[str, ...],
    files_opt: str | None,
    print_data_log: bool,
    deep_iteration: bool,
    skip_record_metadata: bool,
    verify_index_only: bool,
    index_sanity_check: bool,
    max_message_size: int,
    max_bytes: int,
    key_decoder: str | None,
    value_decoder: str | None,
    schemas: str | None,
    schemas_context: str,
    framing: str,
    validate: bool,
    output_format: str,
    kafka_version: str | None,
    run: Run,
    **topic_flags: bool,
) -> None:
    """Dump Kafka log segments (.log), indexes (.index, .timeindex, .txnindex),
    producer snapshots (.snapshot) and KRaft snapshots (.checkpoint).

    The text output is byte-identical to Kafka's kafka-dump-log.sh, on
    stdout and stderr, of the release --kafka-version names (default the
    newest; see docs/dump.md for what differs between releases).  Files come from --files (comma-separated) and/or
    positional arguments, and are dumped in that order.  A key or value
    decoder (or a topic decoder) implies --print-data-log, as in Kafka.

    \b
    Exit codes:
      0  every file was read to its end (an isvalid: false batch or
         trailing invalid bytes are reported, not fatal, as in Kafka)
      1  a file could not be read past corruption
      2  usage error, or a file could not be opened or read
    """
    from kseg.errors import KsegError
    from kseg.ops.dump.dump import Dumper, DumpOptions
    from kseg.render import progress

    files = (files_opt.split(",") if files_opt else []) + list(paths)
    if not files:
        raise click.UsageError("no files to dump: give --files FILE1,FILE2 or file arguments")
    chosen = [kind for flag, kind in TOPIC_DECODERS.items() if topic_flags.get(flag)]
    if len(chosen) > 1:
        raise click.UsageError("choose at most one topic decoder")
    release, explicit = kafka_release(kafka_version)
    if output_format == "json":
        from kseg.format.releases import LATEST

        release, explicit = LATEST, False  # kseg's own schema: the same whatever the version
    given = click.get_current_context().get_parameter_source("max_bytes") is not click.core.ParameterSource.DEFAULT
    _check_release(release, chosen, (key_decoder, value_decoder), max_bytes_given=given)
    key_registry, value_registry, registry = registry_decoders(
        (key_decoder, value_decoder), schemas, schemas_context, files, run, validate, framing
    )
    try:
        parser = topic_parser(chosen[0], release) if chosen else None
        opts = DumpOptions(
            print_data_log=bool(print_data_log or chosen or key_decoder or value_decoder),
            deep_iteration=deep_iteration,
            skip_record_metadata=skip_record_metadata,
            verify_index_only=verify_index_only,
            index_sanity_check=index_sanity_check,
            max_message_size=max_message_size,
            max_bytes=max_bytes,
            key_decoder=key_registry or resolve_decoder(key_decoder or "string"),
            value_decoder=value_registry or resolve_decoder(value_decoder or "string"),
            parser=parser,
            # Kafka 4.3/4.4's false "-1 is followed by N": only when that version is asked for
            gap_from_minus_one=release.java_tool and explicit,
            # and its .timeindex dump that dies on a corrupt batch after the indexed one
            time_index_reads_to_end=release.java_tool and explicit,
            checkpoint_files=release.snapshot_files,
        )
    except KsegError as exc:
        raise click.UsageError(exc.describe()) from None
    if output_format == "json":
        sink: Any = _json_sink(run, opts)
    else:
        sink = _text_sink(run, release, skip_record_metadata)
        if release.deprecated_serializer_notice and not chosen:
            sink.preamble = "".join(deprecation_notice(name) for name in (value_decoder, key_decoder))
    sink.quiet = run.quiet
    dumper = Dumper(opts, sink)
    dumper.progress = progress.make(run.quiet)
    code = dumper.run(files)  # a closed stdout (`| head`) is handled once for every command (cli.main)
    if registry is not None:
        for note in registry.notes():
            run.note(note)
        if registry.problems() and code == EXIT_OK:
            code = EXIT_PROBLEMS  # --validate: a key or payload that does not match its schema
    sys.exit(code)


def _check_release(
    release: Any, chosen: list[str], names: tuple[str | None, str | None], max_bytes_given: bool
) -> None:
    """What the chosen Kafka release's tool does not have is a usage error (exit 2), as its option parser or
    its first read would fail."""
    if "share-group-state" in chosen and not release.share_decoder:
        raise click.UsageError(f"Kafka {release.name}'s tool has no --share-group-state-decoder (4.0+)")
    if not release.tools_api_decoders and not chosen:  # a topic decoder makes no decoder class
        for name in names:
            if name and name.startswith("org.apache.kafka.tools.api."):
                # Kafka 3.7's tool dies with ClassNotFoundException at its first .log file
                raise click.UsageError(
                    f"Kafka {release.name}'s tool has no {name} (3.8+); its decoders are "
                    f"kafka.serializer.{name.rpartition('.')[2]}"
                )
    if not release.max_bytes_option and max_bytes_given:
        # Kafka 3.0-3.2's option parser does not know --max-bytes (KAFKA-13687, 3.3): joptsimple dies
        raise click.UsageError(f"Kafka {release.name}'s tool has no --max-bytes (3.3+)")
    if "cluster-metadata" in chosen and not release.cluster_metadata_decoder:
        raise click.UsageError(
            f"Kafka {release.name}'s --cluster-metadata-decoder is not reproduced: its metadata "
            "classes read other record layouts (kseg reproduces this decoder from 3.0)"
        )
    if "remote-log-metadata" in chosen and not release.remote_decoder:
        # Kafka 3.8's option parser dies on it (joptsimple's UnrecognizedOptionException): a usage error here
        raise click.UsageError(f"Kafka {release.name}'s tool has no --remote-log-metadata-decoder (3.9+)")


def _json_sink(run: Run, opts: Any) -> Any:
    """kseg's JSON Lines sink (``kseg.render.jsonl``): structured values with a topic decoder."""
    from kseg.render.jsonl import JsonSink

    sink = JsonSink(run.out, run.err, kraft_text=kraft_text)
    sink.structured = opts.parser is not None
    sink.header_decoder = (
        None if opts.parser is not None else getattr(opts.value_decoder, "header_decoder", opts.value_decoder)
    )
    return sink


def _text_sink(run: Run, release: Any, skip_record_metadata: bool) -> Any:
    """Kafka's text as ``release``'s tool prints it (``kseg.render.text``)."""
    from kseg.render.text import TextSink

    return TextSink(
        run.out, run.err, skip_record_metadata=skip_record_metadata, kraft_text=_kraft_text_of(release), release=release
    )
