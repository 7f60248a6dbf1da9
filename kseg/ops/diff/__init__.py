"""``kseg diff``: replicas of one partition compared batch by batch."""
