"""``kseg rebuild-index``: the indexes rebuilt as ``LogSegment.recover`` does, compared or written atomically."""
