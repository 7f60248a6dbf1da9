"""``kseg coordinator``: the ``__consumer_offsets`` or ``__transaction_state`` partition holding a
group's or a transactional id's state (reads no files)."""
