"""``kseg txn``: a partition's transactions rebuilt offline from its log, and its ``.txnindex`` audit."""
