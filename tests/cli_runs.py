"""Many ``kseg`` command lines run in turn in ONE child process, each through click as
``tests.conftest.run_cli`` runs it in the test process (``tests.conftest.run_cli_many`` starts it): for what
needs an environment the test process cannot take on for a run, such as ``KSEG_ENGINE=python`` (the engine is
chosen once, at import), at one interpreter start-up for all the runs instead of one a run.

    python tests/cli_runs.py JOB   # JOB: a pickle of [(args, cwd), ...], overwritten with their results
"""

from __future__ import annotations

import os
import pickle
import sys
import traceback

from click.testing import CliRunner


def main(job: str) -> None:
    with open(job, "rb") as f:
        runs = pickle.load(f)
    from kseg.cli.main import cli

    results = []
    for args, cwd in runs:
        old = os.getcwd()
        if cwd is not None:
            os.chdir(cwd)
        try:
            r = CliRunner().invoke(cli, args, catch_exceptions=True)
        finally:
            os.chdir(old)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            assert r.exc_info is not None
            results.append(("raised", args, "".join(traceback.format_exception(*r.exc_info))))
        else:
            results.append((r.exit_code, r.stdout_bytes, r.stderr_bytes))
    with open(job, "wb") as f:
        pickle.dump(results, f)


if __name__ == "__main__":
    main(sys.argv[1])
