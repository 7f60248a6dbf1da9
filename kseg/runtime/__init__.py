"""Running a command, here or on Spark: :mod:`kseg.runtime.run` (what every command's run is given, the one
writer of its error and note lines) and :mod:`kseg.runtime.verify` (``verify-index``'s run: ``--resume``,
``--report`` and the exit code, once for both engines).  Above ops and render, which it runs; below
:mod:`kseg.spark` and :mod:`kseg.cli`, which both use it."""
