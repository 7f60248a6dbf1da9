"""``kseg verify-index --spark``: the same verification as a PySpark job.

A leaf: it only calls :mod:`kseg.storage`.  pyspark is imported inside the
functions that need it, never at package import.
"""

INSTALL_HINT = "pyspark is not installed; install it with: pip install 'kseg[spark]'"
