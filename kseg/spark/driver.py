"""Driver side of ``kseg verify-index --spark``: the job on a session of :mod:`kseg.spark.session`, and the
local command's output, report and exit code through the run of :mod:`kseg.runtime.verify`.

Spark's own output (the JVM's log4j lines, Python worker tracebacks) goes to a log file, not to stderr,
unless ``--verbose``; a failed job becomes one ``kseg: error:`` line naming the cause and the fix (exit 2),
never a Java/Python traceback or exit 1.  Before the work, one tiny task checks that the executors' Python
can import kseg and sees the inputs (:meth:`kseg.spark.session.Session.probe`).
"""

from __future__ import annotations

from kseg.errors import KsegError
from kseg.runtime.verify import VerifyRun


def run_spark_cli(
    verify: VerifyRun,
    partitions,
    *,
    strict: bool,
    master: str | None,
    spark_conf,
    max_message_size: int,
    output_format: str,
    spark=None,
    verbose: bool = False,
) -> int:
    """Run the job and print what the local command prints, report what it reports (``verify``: the run's
    streams, ``--report`` and ``--resume``); return its exit code.  ``spark``: a session the caller owns."""
    from kseg.ops.verify.run import several_log_dirs
    from kseg.spark import job
    from kseg.spark.session import require, started, task_failure

    run = verify.run
    try:
        require()
        verify.ready_report()  # before Spark starts: a bad path fails before any work
        with started("verify-index", master, spark_conf, verbose=verbose, given=spark) as session:
            session.probe(_visible(partitions))
            with session.job():
                outcome = job.run(
                    session.spark,
                    partitions,
                    strict=strict,
                    max_message_size=max_message_size,
                    report=verify.report_to,
                    keep_all=verbose,
                    describe=task_failure,
                    before=verify.before,
                )
            verify.tally(outcome.report)
            _render(run.out, outcome, output_format, several_log_dirs(partitions), verbose, run.quiet)
            run.out.flush()
            problem = _complete_report(verify, outcome.parts)
    except KsegError as exc:
        return run.error(exc)
    return run.error(problem) if problem else outcome.report.exit_code


def _render(out, outcome, output_format: str, full_names: bool, verbose: bool, quiet: bool = False) -> None:
    """What the local run prints (:class:`kseg.render.verify_live.VerifyOutput`), from what the job gave:
    every segment's lines in discovery order (the clean ones read back from the driver's disk), the notes
    grouped by kind as the local run groups them (folded by the job as results came; inline with
    --verbose), the per-partition table on a terminal, and the summary."""
    from kseg.render import table
    from kseg.render.notes import Repeats
    from kseg.render.verify import PartitionSummary, render_result, render_summary

    text = output_format == "text"
    grouped = text and not verbose
    repeats = Repeats() if text and verbose else None  # a long note explained once, as locally
    per_partition = PartitionSummary(full_names) if text and table.wanted(out) else None
    try:
        for res in outcome.in_order():
            render_result(out, res, output_format, full_names, quiet=quiet, folded=grouped, repeats=repeats)
            if per_partition is not None:
                per_partition.add(res)
    finally:
        outcome.close()
    if grouped and outcome.notes is not None and not quiet:
        outcome.notes.write(out)
    if per_partition is not None:
        per_partition.write(out)
    render_summary(out, outcome.report, output_format)


def _complete_report(verify: VerifyRun, parts: list[str]) -> str | None:
    """Mark the report complete (``_SUCCESS``) once its part files (the job's ``parts`` and the carried
    rows') are seen where it says; else why not.  None without a report."""
    from kseg.ops.verify.report import SUCCESS
    from kseg.spark.paths import missing_line, not_here
    from kseg.storage import files, location

    report = verify.report_to
    if report is None:
        return None
    if verify.resumed_part is not None:
        parts = parts + [verify.resumed_part]
    missing = not_here(parts, report.store)
    if missing:  # never a report called complete that is not where it says
        return missing_line(missing, len(parts), report.path, "report part files")
    try:
        files.write_stream(location.join(report.path, SUCCESS), lambda f: None, replace=True, store=report.store)
    except KsegError as exc:
        return exc.describe()
    return None


def _visible(partitions) -> list[str]:
    """The local paths the executors must see: the log directories read (the driver writes the report)."""
    from kseg.spark.paths import local_roots

    return local_roots(sorted({p.log_dir for p in partitions if p.log_dir}))
