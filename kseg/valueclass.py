"""Value classes made without generated code, for the nouns every command's start-up makes.

A ``@dataclass`` compiles its ``__init__``, ``__repr__`` and ``__eq__`` (a frozen one also ``__setattr__``,
``__delattr__`` and ``__hash__``) from source text when its module is imported: 2-4 M instructions a class
in CPython 3.10-3.12, and ``dataclasses`` itself about 6 M more -- together about a tenth of a lookup's
whole run.  A class deriving from :class:`Value` writes its ``__init__`` and names its compared fields in
``_fields``; the rest is here, once, as a dataclass (``eq=True``) does it:

- ``==`` compares the ``_fields`` of two instances of the same class as a tuple (``NotImplemented`` for
  any other class), and ``repr`` shows them (``Segment(base_offset=0, log='...', ...)``);
- :meth:`Value.replace` is :func:`dataclasses.replace` without running ``__init__`` again: a copy with
  the fields given changed (any attribute of the instance may be given, an unknown name is a
  ``TypeError``);
- a :class:`Value` is not hashable (a mutable dataclass with ``eq``); a :class:`FrozenValue` refuses
  assignment with :class:`dataclasses.FrozenInstanceError` (an ``AttributeError``, loaded only then) and
  hashes its ``_fields``.  Its ``__init__`` sets attributes with :meth:`FrozenValue._set`.

Instances keep a ``__dict__`` (pickled as a dataclass is: a frozen one's state set directly).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

if TYPE_CHECKING:
    from typing import Protocol as Protocol
else:
    # A structural type, for the type checker only: at run time a plain base class (a typing.Protocol
    # class costs ~0.1 ms to make, a plain one a tenth of that; kseg never asks isinstance of one).
    Protocol = object

V = TypeVar("V", bound="Value")


class Value:
    """A mutable value: ``_fields`` compared by ``==`` and shown by ``repr`` (the module's text)."""

    _fields: ClassVar[tuple[str, ...]] = ()

    def _key(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # (mutable and compared, as a dataclass with eq)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"

    def replace(self: V, **changes: Any) -> V:
        """A copy of this value with ``changes`` (attribute -> new value) made; ``__init__`` is not run."""
        unknown = changes.keys() - vars(self).keys()
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {', '.join(sorted(unknown))}")
        copy = object.__new__(type(self))
        vars(copy).update(vars(self))
        vars(copy).update(changes)
        return copy


class FrozenValue(Value):
    """An immutable value: assignment raises ``dataclasses.FrozenInstanceError``; hashed by its ``_fields``."""

    def _set(self, **values: Any) -> None:
        """Set attributes in ``__init__`` (or in a copy being made)."""
        vars(self).update(values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise _frozen(name)

    def __delattr__(self, name: str) -> None:
        raise _frozen(name)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(self._key())


def _frozen(name: str) -> AttributeError:
    from dataclasses import FrozenInstanceError  # (only when a frozen value is written to: a bug)

    return FrozenInstanceError(f"cannot assign to field {name!r}")
