"""Write ``tests/durations.tsv`` from a whole run's JUnit XML: each test file's seconds (the sum of its tests'
setup, call and teardown, as pytest's ``--junitxml`` records them), longest first.

    python3 -m pytest --junitxml=run.xml && python3 tests/durations.py run.xml > tests/durations.tsv

``tests/conftest.py`` hands the files out in this order (``-n 2 --dist loadfile``; the Spark files one
unit): the longest first, so the short ones fill in at the end and neither process is left alone with a
long file.  Only the order matters,
so a run on a loaded machine does, as long as the machine's load is spread over the run.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def file_of(classname: str) -> str:
    """``tests.cli.test_x`` or ``tests.cli.test_x.TestY`` -> ``tests/cli/test_x.py``."""
    parts = classname.split(".")
    for end in range(len(parts), 0, -1):
        path = "/".join(parts[:end]) + ".py"
        if (ROOT / path).is_file():
            return path
    raise SystemExit(f"no test file for the JUnit class name {classname!r}")


def main(xml: str) -> None:
    took: dict[str, float] = defaultdict(float)
    for case in ET.parse(xml).getroot().iter("testcase"):
        took[file_of(case.get("classname", ""))] += float(case.get("time", "0"))
    print("# seconds\tfile  (tests/durations.py: a whole run's time per file, longest first)")
    for path, seconds in sorted(took.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"{max(seconds, 0.1):.1f}\t{path}")  # a file under 0.05 s still took time (0.0 would read as none)


if __name__ == "__main__":
    main(sys.argv[1])
