"""auditor.parse.strings: the canonical spelling of config values."""

from __future__ import annotations

import json

import pytest

from auditor.parse.strings import canonical_json


def test_canonical_json_spells_equal_configs_alike_and_stringifies_the_rest() -> None:
    assert canonical_json({"lr": 0.001, "epochs": 12}) == canonical_json({"epochs": 12, "lr": 0.001})
    assert canonical_json({"lr": 0.001, "epochs": 12}) == '{"epochs": 12, "lr": 0.001}'
    assert canonical_json({"when": pytest}) == json.dumps({"when": pytest}, sort_keys=True, default=str)
    assert canonical_json("é") == '"\\u00e9"'
