"""auditor.records.frozen_record: a frozen dataclass in all but how its fields are set."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from auditor.records import computed_once, frozen_record


@frozen_record
class Point:
    """A value with a required field, a default and a tuple default."""

    x: float
    y: float = 0.5
    tags: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Reference:
    x: float
    y: float = 0.5
    tags: tuple[str, ...] = ()


def test_it_behaves_as_the_frozen_dataclass_it_replaces() -> None:
    for args, kwargs in [((1.0,), {}), ((1.0, 2.0), {}), ((), {"x": 3.0, "tags": ("a",)}), ((1.0,), {"y": -1.0})]:
        ours, theirs = Point(*args, **kwargs), Reference(*args, **kwargs)
        assert dataclasses.astuple(ours) == dataclasses.astuple(theirs)
        assert repr(ours).replace("Point", "Reference") == repr(theirs)
    assert Point(1.0) == Point(1.0, 0.5) and Point(1.0) != Point(2.0)
    assert hash(Point(1.0, tags=("a",))) == hash(Point(1.0, tags=("a",)))
    assert [p.name for p in inspect.signature(Point).parameters.values()] == ["x", "y", "tags"]
    assert inspect.signature(Point).parameters["y"].default == 0.5


def test_it_stays_frozen_replaceable_and_picklable() -> None:
    point = Point(1.0, tags=("a",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y  # type: ignore[misc]
    assert dataclasses.replace(point, y=3.0) == Point(1.0, 3.0, ("a",))
    assert pickle.loads(pickle.dumps(point)) == point
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]  # a required field stays required
    with pytest.raises(TypeError):
        Point(1.0, z=2.0)  # type: ignore[call-arg]


def test_what_a_one_line_init_cannot_do_is_refused() -> None:
    with pytest.raises(TypeError, match="default_factory|plain positional"):

        @frozen_record
        class WithFactory:
            items: list = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="__post_init__"):

        @frozen_record
        class WithPostInit:
            x: int

            def __post_init__(self) -> None:
                pass

    with pytest.raises(TypeError, match="plain positional"):

        @frozen_record
        class KeywordOnly:
            x: int = dataclasses.field(kw_only=True)


@frozen_record
class Counted:
    x: float

    @computed_once
    def doubled(self) -> list[float]:
        """Twice x, in a fresh list each time it is computed."""
        calls.append(self.x)
        return [2 * self.x]


calls: list[float] = []


def test_computed_once_computes_on_first_access_only_and_per_instance() -> None:
    calls.clear()
    first, second = Counted(1.0), Counted(3.0)
    value = first.doubled
    assert value == [2.0] and first.doubled is value  # the stored value, not a recomputation
    assert second.doubled == [6.0]
    assert calls == [1.0, 3.0]
    assert Counted.doubled.__doc__ == "Twice x, in a fresh list each time it is computed."
    assert isinstance(Counted.doubled, computed_once)  # on the class: the descriptor itself
    # The record stays what it was: frozen, equal by its fields, picklable without the cache mattering.
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.x = 2.0  # type: ignore[misc]
    assert first == Counted(1.0) and hash(first) == hash(Counted(1.0))
    assert pickle.loads(pickle.dumps(first)).doubled == [2.0]
