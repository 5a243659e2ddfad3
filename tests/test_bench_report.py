"""The bench report's goal arithmetic on made-up timings: ratios of medians,
their quartile spread, the worst size against PyTorch, and the verdicts."""

import pytest

from jax_ascend_silu.bench import report
from jax_ascend_silu.bench.timing import Stats


def stats(median, q1=None, q3=None):
    return Stats(median=median, minimum=median * 0.9, q1=q1 or median, q3=q3 or median, count=15)


def goal(goals, prefix):
    (found,) = [g for g in goals if g.text.startswith(prefix)]
    return found


def test_ratio_spread_and_verdict_of_one_goal():
    sweep = {"bfloat16": {2**20: {"xla": stats(6.0, 5.0, 7.0), "ours": stats(2.0, 1.8, 2.5)}}}
    g = goal(report.goals(sweep, None, {}), "bfloat16 2^20")
    assert g.measured == pytest.approx(3.0)
    assert g.spread == pytest.approx((5.0 / 2.5, 7.0 / 1.8))
    assert g.verdict == "met"
    assert "2.00-3.89x" in report.goals_table([g])


def test_verdicts_at_and_around_the_targets():
    assert report.Goal("g", 2.99, 3.0, 5.0).verdict == "not met"
    assert report.Goal("g", 3.0, 3.0, 5.0).verdict == "met"
    assert report.Goal("g", 5.1, 3.0, 5.0).verdict == "met (moonshot too)"
    assert report.Goal("g", None, 3.0).verdict == "not measured"


def test_pytorch_goal_reports_the_worst_size_from_2_16():
    rows = {
        2**14: {"torch": stats(1.0), "ours": stats(10.0)},  # below 2^16: ignored
        2**16: {"torch": stats(3.0), "ours": stats(2.0)},
        2**20: {"torch": stats(4.0, 3.0, 5.0), "ours": stats(5.0, 4.0, 6.0)},
    }
    g = goal(report.goals({"float32": rows}, None, {}), "float32 every n >= 2^16")
    assert g.measured == pytest.approx(0.8)
    assert g.spread == pytest.approx((3.0 / 6.0, 5.0 / 4.0))
    assert g.verdict == "not met"


def test_goals_without_measurements_say_so():
    goals = report.goals({}, None, {})
    assert goals and all(g.verdict == "not measured" and g.spread is None for g in goals)


def test_subnormal_goal_is_normal_over_subnormal_time():
    sweep = {"float32": {2**20: {"ours": stats(2.0), "ours_subnormal": stats(3.0)}}}
    g = goal(report.goals(sweep, None, {}), "subnormal grad_output, float32 2^20")
    assert g.measured == pytest.approx(2.0 / 3.0)
    assert g.verdict == "not met"  # 1.5x slower than normal inputs; the goal allows 1.3x
    sweep["float32"][2**20]["ours_subnormal"] = stats(2.5)
    assert goal(report.goals(sweep, None, {}), "subnormal grad_output, float32 2^20").verdict == "met"


def test_markdown_table_replaces_its_marked_section_only(tmp_path):
    path = tmp_path / "README.md"
    report.write_markdown(path, "first table")  # a new file gets the marked section
    assert path.read_text() == f"{report.MARKDOWN_BEGIN}\nfirst table\n{report.MARKDOWN_END}\n"
    path.write_text("# Benchmarks\n\nprose before\n\n" + path.read_text() + "\nprose after\n")
    report.write_markdown(path, "second table")
    text = path.read_text()
    assert "first table" not in text and text.count("second table") == 1
    assert text.startswith("# Benchmarks\n\nprose before\n\n") and text.endswith("\nprose after\n")
