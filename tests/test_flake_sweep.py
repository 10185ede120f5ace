"""The flake sweep plans the seeds it says, reports failures, and refuses bad counts."""

from __future__ import annotations

import pytest

from reports import flake_sweep


@pytest.fixture
def fake_runs(monkeypatch):
    """Replace the pytest subprocess with a recorder; seed 2 of every profile fails."""
    calls = []

    def run_seed(profile, seed, *, workers, tests, out):
        calls.append((profile, seed))
        ok = seed != 2
        return {"profile": profile, "seed": seed, "ok": ok, "rc": 0 if ok else 1,
                "wall_s": 1.0, "failed": [] if ok else ["t.py::x"], "log": ""}  # fmt: skip

    monkeypatch.setattr(flake_sweep, "run_seed", run_seed)
    return calls


def test_sweep_plans_dev_then_thorough_from_seed_1(fake_runs, tmp_path):
    runs = flake_sweep.sweep(3, 2, out=tmp_path)
    assert fake_runs == [("dev", 1), ("dev", 2), ("dev", 3), ("thorough", 1), ("thorough", 2)]
    line = flake_sweep.summary(runs)
    assert "dev 2/3 passed" in line and "thorough 1/2 passed" in line
    assert "FAILED seeds: dev:2, thorough:2" in line


def test_first_shifts_every_profiles_seeds(fake_runs, tmp_path):
    flake_sweep.sweep(0, 2, out=tmp_path, first=3)
    assert fake_runs == [("thorough", 3), ("thorough", 4)]


def test_main_exit_status_follows_the_runs(fake_runs, tmp_path, capsys):
    assert flake_sweep.main(["1", "--out", str(tmp_path)]) == 0
    assert flake_sweep.main(["0", "--thorough", "1", "--first", "2", "--out", str(tmp_path)]) == 1
    assert "FAILED seeds: thorough:2" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["-1"], ["1", "--thorough", "-1"], ["1", "--first", "0"]])
def test_bad_counts_exit_2(fake_runs, argv, tmp_path):
    with pytest.raises(SystemExit) as exc:
        flake_sweep.main([*argv, "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert fake_runs == []


def test_sweep_refuses_bad_first(tmp_path):
    with pytest.raises(ValueError, match="first seed"):
        flake_sweep.sweep(1, first=0, out=tmp_path)
