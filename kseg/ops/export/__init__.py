"""``kseg export``: records planned into splits and read (local and ``--spark``)."""
