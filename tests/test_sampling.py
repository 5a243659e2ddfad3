"""The default run's sample of the combinatorial tests (tests/sampling.py):
every parameter value covered, the same choice for the same seed, a new one
for another seed, every cell reached as the seed rotates, the cells a sample
leaves out for a second run, and clear errors for malformed settings."""

import datetime
import itertools
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import sampling


@dataclass
class _Marker:
    kwargs: dict


@dataclass
class _CallSpec:
    params: dict


@dataclass
class _Item:
    """What select() reads of a pytest item."""

    nodeid: str
    originalname: str
    callspec: _CallSpec
    marker: _Marker | None
    path: Path = field(default=Path("tests/test_matrix.py"))

    def get_closest_marker(self, name):
        return self.marker if name == sampling.MARKER else None


AXES = {"entry": ["silu", "route", "silu_grad"], "transform": [f"t{i}" for i in range(7)], "dtype": ["f32", "bf16"]}


def _matrix(cases=5, name="test_cell", cover=None):
    kwargs = {"cases": cases} if cover is None else {"cases": cases, "cover": cover}
    cells = []
    for values in itertools.product(*AXES.values()):
        params = dict(zip(AXES, values))
        cells.append(_Item(f"tests/test_matrix.py::{name}[{'-'.join(values)}]", name, _CallSpec(params),
                           _Marker(kwargs)))
    return cells


def _plain(n):
    return [_Item(f"tests/test_other.py::test_{i}", f"test_{i}", _CallSpec({}), None) for i in range(n)]


def _ids(items):
    return [item.nodeid for item in items]


def test_the_sample_covers_every_parameter_value_and_keeps_the_rest():
    cells, plain = _matrix(cases=10), _plain(3)
    kept, dropped = sampling.select(plain + cells, sampling.Plan(seed=1, cases=None, every=False))
    assert _ids(kept[:3]) == _ids(plain)
    sampled = kept[3:]
    for axis, values in AXES.items():
        assert {item.callspec.params[axis] for item in sampled} == set(values), axis
    assert len(sampled) == 10  # the cover needs at most 7 (the longest axis); filled up to cases
    assert sorted(_ids(sampled + dropped)) == sorted(_ids(cells))
    assert _ids(sampled) == [i for i in _ids(cells) if i in set(_ids(sampled))]  # collection order kept


def test_the_cover_wins_over_a_smaller_size():
    kept, _ = sampling.select(_matrix(cases=1), sampling.Plan(seed=3, cases=None, every=False))
    assert {item.callspec.params["transform"] for item in kept} == set(AXES["transform"])


def test_the_same_seed_chooses_the_same_cells_and_another_seed_others():
    def chosen(seed):
        return _ids(sampling.select(_matrix(), sampling.Plan(seed=seed, cases=None, every=False))[0])

    assert chosen(20261203) == chosen(20261203)
    assert len({tuple(chosen(seed)) for seed in range(5)}) > 1


def test_every_cell_runs_as_the_seed_rotates():
    reached = set()
    for seed in range(200):
        reached.update(_ids(sampling.select(_matrix(), sampling.Plan(seed=seed, cases=None, every=False))[0]))
    assert reached == set(_ids(_matrix()))


def test_all_and_a_number_of_cases():
    cells = _matrix(cases=5)
    assert _ids(sampling.select(cells, sampling.Plan(1, None, every=True))[0]) == _ids(cells)
    assert len(sampling.select(cells, sampling.Plan(1, 20, every=False))[0]) == 20


def test_the_rest_runs_what_the_sample_of_the_same_seed_leaves_out():
    cells, plain = _matrix(cases=10), _plain(3)
    sampled, _ = sampling.select(plain + cells, sampling.Plan(seed=4, cases=None, every=False))
    rest, dropped = sampling.select(plain + cells, sampling.Plan(seed=4, cases=None, every=False, rest=True))
    assert _ids(rest[:3]) == _ids(plain)  # what is not combinatorial runs in both
    assert _ids(dropped) == _ids(sampled[3:])
    assert sorted(_ids(sampled[3:] + rest[3:])) == sorted(_ids(cells))  # every cell once between the two
    other_seed, _ = sampling.select(plain + cells, sampling.Plan(seed=5, cases=None, every=False, rest=True))
    assert _ids(other_seed) != _ids(rest)


def test_plan_from_the_environment():
    today = datetime.date(2026, 12, 3)
    assert sampling.plan_from({}, today) == sampling.Plan(20261203, None, every=False)
    assert sampling.plan_from({sampling.SEED_VARIABLE: "7", sampling.CASES_VARIABLE: "ALL"}, today) == sampling.Plan(
        7, None, every=True)
    assert sampling.plan_from({sampling.CASES_VARIABLE: "12"}, today).cases == 12
    assert sampling.plan_from({sampling.CASES_VARIABLE: "rest"}, today) == sampling.Plan(
        20261203, None, every=False, rest=True)
    with pytest.raises(pytest.UsageError, match=sampling.SEED_VARIABLE):
        sampling.plan_from({sampling.SEED_VARIABLE: "tuesday"}, today)
    for bad in ("0", "-3", "most"):
        with pytest.raises(pytest.UsageError, match=sampling.CASES_VARIABLE):
            sampling.plan_from({sampling.CASES_VARIABLE: bad}, today)


def test_a_marker_without_cases_is_a_usage_error():
    cells = _matrix()
    for cell in cells:
        cell.marker = _Marker({})
    with pytest.raises(pytest.UsageError, match="cases=K"):
        sampling.select(cells, sampling.Plan(1, None, every=False))


def test_objects_printed_with_their_address_do_not_steer_the_cover():
    assert sampling._stable(lambda: 0) is None
    assert sampling._stable("float32") == "'float32'"
    assert sampling._stable(3) == "3"


def test_cover_names_the_parameters_to_cover():
    def chosen(cover):
        kept, _ = sampling.select(_matrix(cases=2, cover=cover), sampling.Plan(seed=5, cases=None, every=False))
        return kept

    assert len(chosen(())) == 2  # nothing to cover: the seeded sample alone
    by_entry = chosen(("entry",))
    assert len(by_entry) == 3 and {item.callspec.params["entry"] for item in by_entry} == set(AXES["entry"])
