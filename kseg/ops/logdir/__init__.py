"""``kseg logdir``: a broker's log directories read offline -- checkpoints, topic IDs, leader epochs, leftovers."""
