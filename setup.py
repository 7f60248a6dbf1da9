"""Build of kseg's optional C engine (issue 12) and Avro reader (issue 35); everything else is in
pyproject.toml.

The extensions are optional, as PyYAML's, msgpack's and markupsafe's: where a C compiler and
Python's headers exist, ``pip install .`` and ``pip install -e .`` build it; where they do
not, setuptools reports the failed build and installs kseg without it (the pure-Python path).
``KSEG_BUILD_ENGINE=0`` skips both builds on purpose.
"""

import os

from setuptools import Extension, setup

ext_modules = []
if os.environ.get("KSEG_BUILD_ENGINE", "1") != "0":
    ext_modules.append(
        Extension(
            "kseg._engine",
            sources=["kseg/_engine.c"],
            optional=True,  # a failed compile is a warning, never a failed install
            extra_compile_args=["-O2"] if os.name != "nt" else [],
        )
    )
    ext_modules.append(
        Extension(
            "kseg._avro",  # Avro payloads read against a compiled schema (the registry decoder)
            sources=["kseg/_avro.c"],
            optional=True,
            extra_compile_args=["-O2"] if os.name != "nt" else [],
        )
    )

setup(ext_modules=ext_modules)
