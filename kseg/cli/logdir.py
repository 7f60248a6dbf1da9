"""``kseg logdir``: a broker's log directories read offline -- checkpoints, topic IDs, leader epochs, leftovers."""

from __future__ import annotations

import sys

import click

from kseg.cli.options import HELP, Run, format_option, paths_argument, rsm_key_option, run_options


@click.command(context_settings=HELP)
@paths_argument
@click.option(
    "--report",
    "report_path",
    type=click.Path(),
    help="Also write the JSON Lines rows (logdir and partition) to this local file, atomically.  "
    "Checked before any work; never inside an input.",
)
@click.option("--force", is_flag=True, help="Replace an existing --report file (atomically).")
@format_option
@run_options
@rsm_key_option
def logdir(paths: tuple[str, ...], report_path: str | None, force: bool, output_format: str, run: Run) -> None:
    """What a broker left in its log directories (each PATH a log directory, or one
    partition directory of it): meta.properties, .kafka_cleanshutdown, the high
    watermark, recovery point, log start and cleaner checkpoints, each partition's
    topic ID (partition.metadata), leader-epoch-checkpoint and segments -- checked
    against each other as Kafka will on start (docs/logdir.md).

    \b
    Exit codes:
      0  every file read, no problem found
      1  problems (offsets past the log end, malformed checkpoints, leftovers, ...)
         or a segment that could not be read past a corrupt or partial batch
      2  usage error, or a file or directory could not be read (the OS's reason)
    """
    from kseg.jsonlines import dumps
    from kseg.ops.logdir.run import check_report, inspect_all, write_report
    from kseg.render import logdir as render
    from kseg.storage.outcome import exit_code

    if force and not report_path:
        run.fail("--force replaces an existing --report file; give it with --report")
    if report_path:
        check_report(report_path, list(paths), force)
    reports = inspect_all(list(paths))  # a path that cannot be read: its one line, exit 2 (main.fatal)
    rows = [dumps(row) for report in reports for row in render.rows(report)]
    if report_path:
        write_report(report_path, rows, force)
    if output_format == "json":
        lines = rows
    else:
        lines = [line for report in reports for line in render.text_lines(report)]
        lines.append(render.summary_line(reports))
    run.out.write(("\n".join(lines) + "\n").encode("utf-8", "replace"))
    run.out.flush()
    run.notes([text for report in reports for text in report.notes])  # after the results: what was not checked
    failed = False
    reads = []
    for report in reports:
        for text in report.errors:
            failed = bool(run.error(text))
        for part in report.partitions:
            for text in part.errors:
                failed = bool(run.error(text))
            for read in part.log.reads:
                reads.append(read)
                if not read.complete:
                    run.error(read.describe())
    problems = any(r.problems or any(p.problems for p in r.partitions) for r in reports)
    sys.exit(exit_code(reads, problems=problems, failed=failed))
