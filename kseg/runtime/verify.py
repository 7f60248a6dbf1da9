"""``verify-index``'s run, the same here and on Spark: what ``--resume`` skips and carries, the ``--report``
written and completed (or discarded), and the exit code -- each written once for both engines.

The CLI makes a :class:`VerifyRun` before any work (:meth:`VerifyRun.verified`, then :meth:`VerifyRun.skip`
on the listing) and runs it here (:meth:`VerifyRun.here`: results printed and reported as they come) or hands
it to Spark's driver (``kseg.spark.driver.run_spark_cli``: :meth:`VerifyRun.ready_report` before Spark starts,
:meth:`VerifyRun.tally` after the job).  The rules of which segments an
earlier report verified are :mod:`kseg.ops.verify.resume`'s; the report's forms are
:mod:`kseg.ops.verify.report`'s.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kseg.errors import KsegError
from kseg.ops.verify.resume import Resumption, carried_rows
from kseg.ops.verify.run import Report
from kseg.runtime.run import Run

if TYPE_CHECKING:
    from kseg.storage.outputs import Destination


class VerifyRun:
    """One ``verify-index`` run: its :class:`~kseg.runtime.run.Run`, the ``--report`` path (``report``: the
    local run's JSON Lines report, opened before any work; None on Spark, whose executors write part files)
    and ``--resume``'s :class:`~kseg.ops.verify.resume.Resumption` (None without it, or until :meth:`skip`).
    ``prior`` counts the rows carried from the earlier report."""

    def __init__(
        self, run: Run, report_path: str | None = None, report: Any = None, resumption: Resumption | None = None
    ) -> None:
        self.run = run
        self.report_path = report_path
        self.report = report
        #: the report as a destination: its store chosen once, from the option (the local report's own)
        self.report_to: Destination | None = None
        if report is not None:
            self.report_to = report.output
        elif report_path:
            from kseg.storage.outputs import destination

            self.report_to = destination(report_path)
        self.resumption = resumption
        self.prior = Report()
        self.resumed_part: str | None = None

    @staticmethod
    def verified(run: Run, resume_path: str | None) -> dict:
        """The segments ``--resume``'s report verified (:func:`kseg.ops.verify.resume.verified`), read before
        any work; a report that cannot be read is the one error line, exit 2."""
        if not resume_path:
            return {}
        from kseg.ops.verify.resume import verified

        try:
            return verified(resume_path)
        except KsegError as exc:
            run.fail(exc)

    def skip(self, partitions: list, keys: dict, resume_path: str | None) -> list:
        """The partitions left to verify once the segments ``keys`` names are skipped (the resumption kept);
        ``partitions`` as they are without ``--resume``."""
        if not resume_path:
            return partitions
        from kseg.ops.verify.resume import skip_verified

        notes: list[str] = []  # why segments the report gave a verdict for are verified again
        partitions, skipped, before = skip_verified(partitions, keys, notes)
        self.resumption = Resumption(resume_path, skipped, before, tuple(notes))
        return partitions

    @property
    def before(self) -> dict | None:
        """For each segment verified right after a skipped one, that one as the report gives it."""
        return self.resumption.before if self.resumption is not None else None

    def tally(self, result: Report) -> Report:
        """``result`` with the carried rows counted in (``resumed``: how many segments came from the earlier
        report), before its summary is printed."""
        result.merge(self.prior.counts())
        result.resumed = self.prior.resumed
        return result

    def here(
        self, partitions: list, *, strict: bool, jobs: int, max_message_size: int, output_format: str, verbose: bool
    ) -> int:
        """Verify ``partitions`` in this process (or ``--jobs`` processes): each result printed and reported as
        it comes, the carried rows first in the report; the exit code.  The report is committed only when
        the run ends; a run that raises discards it (its one line, exit 2: ``kseg.cli.ending.fatal``)."""
        from kseg.ops.verify.run import verify_all
        from kseg.render.verify_live import VerifyOutput

        self.run.read_in(jobs)
        report = self.report
        output = VerifyOutput(
            self.run.out, partitions, output_format=output_format, quiet=self.run.quiet, verbose=verbose, jobs=jobs
        )
        output.follow(self.run.context.observers)

        def on_result(res: Any) -> None:
            output.add(res)
            if report is not None:
                report.add(res)

        try:
            if self.resumption is not None and report is not None:
                report.add_rows(carried_rows(self.resumption.path, self.resumption.skipped, self.prior))
            result = verify_all(
                partitions,
                strict=strict,
                jobs=jobs,
                max_message_size=max_message_size,
                on_result=on_result,
                before=self.before,
            )
            output.finish(self.tally(result))
            if report is not None:
                report.commit()
        finally:
            output.close()
            if report is not None:
                report.discard()
        return result.exit_code

    def ready_report(self) -> None:
        """On Spark, before Spark starts: the report directory made ready for this run (a bad path fails
        before any work: :class:`KsegError`) with ``--resume``'s carried rows as its ``part-resumed`` file
        -- read out of the earlier report before its part files go (it may be this directory)."""
        from kseg.ops.verify.report import prepare_directory

        with self._carried() as carried:
            if self.report_to is not None:
                prepare_directory(self.report_to)
                if carried is not None:
                    self.resumed_part = _write_carried(self.report_to, carried)

    @contextmanager
    def _carried(self) -> Iterator[str | None]:
        """``--resume``'s carried rows (counted in ``prior``) copied to a temporary JSON Lines file, removed
        after; None without ``--resume`` or with nothing skipped."""
        resume = self.resumption
        if resume is None or not resume.skipped:
            yield None
            return
        from kseg.jsonlines import dumps

        with tempfile.NamedTemporaryFile("w", prefix="kseg-resumed-", suffix=".jsonl", encoding="utf-8") as tmp:
            for row in carried_rows(resume.path, resume.skipped, self.prior):
                tmp.write(dumps(row) + "\n")
            tmp.flush()
            yield tmp.name


def _write_carried(report: Destination, carried: str) -> str:
    """The carried rows as the report's ``part-resumed`` file (its format); the part file's path."""
    from kseg.ops.verify.report import report_format, write_rows_part

    with open(carried, encoding="utf-8") as f:
        return write_rows_part(report, "resumed", (json.loads(line) for line in f), report_format(report.path))
