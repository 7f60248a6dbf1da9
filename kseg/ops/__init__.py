"""Each command's logic, one package per command (``docs/architecture.md``).

A command package reads through :mod:`kseg.storage` and :mod:`kseg.format` and hands
values to :mod:`kseg.render`; it never imports another command's package.  The one
exception: :mod:`kseg.ops.rebuild` asks :mod:`kseg.ops.verify` whether a differing index
is one an older Kafka wrote (``older_writer_rules``)."""
