"""Self-tests of the region proposal for whole-test entries whose test also
held on some examples (issue 28: an entry covers only where torch deviates)."""

from __future__ import annotations

import pytest

from conformance.expectations import _matches, propose_region
from reports.proposals import _region_toml, region_proposals


def _inside(region: dict, features: dict) -> bool:
    return all(_matches(features[k], spec) for k, spec in region.items())


def test_a_scalar_feature_that_separates_the_sides_is_proposed():
    dev = [{"form": "data", "everywhere": True}, {"form": "data", "everywhere": True}]
    held = [{"form": "detach", "everywhere": True}]
    assert propose_region(dev, held) == [{"form": "data"}]


def test_a_set_valued_feature_gives_any_of_and_all_of_regions():
    dev = [{"layout": frozenset({"transposed", "view"})}, {"layout": frozenset({"view"})}]
    held = [{"layout": frozenset({"contiguous"})}]
    got = propose_region(dev, held)
    assert {"layout": {"all": ["view"]}} in got
    for region in got:
        assert all(_inside(region, f) for f in dev)
        assert not any(_inside(region, f) for f in held)


def test_every_proposal_separates_exactly():
    dev = [{"dtype": "float16", "ndim": 0}, {"dtype": "bfloat16", "ndim": 1}]
    held = [{"dtype": "float32", "ndim": 0}, {"dtype": "float64", "ndim": 1}]
    got = propose_region(dev, held)
    assert got[0] == {"dtype": ["bfloat16", "float16"]}
    for region in got:
        assert all(_inside(region, f) for f in dev)
        assert not any(_inside(region, f) for f in held)


@pytest.mark.parametrize(
    "dev, held",
    [
        ([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}], [{"a": 1, "b": "y"}, {"a": 2, "b": "x"}]),
        ([{"a": 1}], [{"a": 1}]),
        ([{"a": 1}], []),
        ([], [{"a": 1}]),
    ],
)
def test_no_proposal_when_nothing_separates_or_a_side_is_empty(dev, held):
    assert propose_region(dev, held) == []


def test_features_not_every_example_reported_or_unnameable_are_not_used():
    dev = [{"a": 1, "t": (1, 2)}, {"a": 1}]
    held = [{"a": 2, "t": (3,)}, {"a": 2, "extra": "x"}]
    assert propose_region(dev, held) == [{"a": 1}]
    assert propose_region([{"t": (1,)}], [{"t": (2,)}]) == []


def test_the_proposal_lists_entries_whose_test_also_held():
    doc = {
        "tests": [
            {
                "verdict": "expected-deviation",
                "nodeid": "conformance/test_x.py::test_y[cpu]",
                "expectation": {"key": "x.y[test_y]@torch<2.9"},
                "whole_test_split": {"deviated": 3, "held": 5, "regions": [{"stream": [0, 1]}]},
            },
            {
                "verdict": "expected-deviation",
                "nodeid": "conformance/test_x.py::test_z[cpu]",
                "expectation": {"key": "x.z[test_z]@torch<2.9"},
                "whole_test_split": {"deviated": 4, "held": 0},
            },
        ]
    }
    lines = region_proposals(doc)
    assert lines == [
        "# narrow: x.y[test_y]@torch<2.9 on conformance/test_x.py::test_y[cpu]: 3 examples "
        "deviated, 5 held: region = { stream = [0, 1] }"
    ]
    assert _region_toml({"layout": {"all": ["view"]}}) == '{ layout = { all = ["view"] } }'
