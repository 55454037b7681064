"""Frozen dataclasses that are built as fast as plain objects.

A frozen dataclass's generated ``__init__`` sets each field through
``object.__setattr__``, a slot wrapper that costs about as much as a small
function call.  An audit builds dozens of small frozen values (arm views,
statistics, noise bounds, printed numbers), so their field-by-field
construction was a few percent of a warm audit.  :func:`frozen_record` keeps
everything a frozen dataclass is (fields, defaults, repr, equality, hashing,
``dataclasses.replace``, pickling, and ``FrozenInstanceError`` on assignment)
and only fills the instance dict in one call.  :class:`~auditor.findings.Finding`
does the same by hand.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def frozen_record(cls: type[T]) -> type[T]:
    """``@dataclass(frozen=True)`` with an ``__init__`` that sets every field in one dict update.

    Refused (TypeError) for what the one-line ``__init__`` cannot do: default
    factories, ``__post_init__``, fields outside ``__init__`` or keyword-only.
    """
    cls = dataclasses.dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: frozen_record does not run __post_init__")
    namespace: dict[str, Any] = {}
    parameters = []
    for field in fields:
        if field.default_factory is not dataclasses.MISSING or not field.init or field.kw_only:
            raise TypeError(f"{cls.__name__}.{field.name}: frozen_record takes plain positional fields only")
        if field.default is dataclasses.MISSING:
            parameters.append(field.name)
        else:
            namespace[f"_default_{field.name}"] = field.default
            parameters.append(f"{field.name}=_default_{field.name}")
    values = ", ".join(f"{field.name}={field.name}" for field in fields)
    source = f"def __init__(self, {', '.join(parameters)}):\n    self.__dict__.update({values})\n"
    exec(source, namespace)  # noqa: S102 -- our own field names, checked identifiers by dataclass
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls


class computed_once:
    """A read-only attribute computed on first access and kept in the instance dict.

    :func:`functools.cached_property` without its per-instance lock: Python 3.11
    takes an ``RLock`` on every first access, and an audit context computes a few
    such attributes per answer.  A value is a pure function of the instance, so
    two threads racing on one instance at worst compute it twice and agree.
    Being a non-data descriptor, the stored value shadows it from then on, also
    on frozen records (whose ``__setattr__`` this bypasses, as cached_property does).
    """

    def __init__(self, compute: Any) -> None:
        self.compute = compute
        self.name = compute.__name__
        self.__doc__ = compute.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value
