"""A misspelt ini key or marker argument of minipod's is an error naming it, not a silent default."""
import subprocess
import sys


def run_pytest(tmp_path, ini, test):
    (tmp_path / "pytest.ini").write_text(ini)
    (tmp_path / "test_it.py").write_text(test)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=120)


def test_a_misspelt_ini_key_stops_the_run_naming_the_valid_ones(tmp_path):
    run = run_pytest(tmp_path, "[pytest]\nminipod_clok = manual\n", "def test_nothing():\n    pass\n")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "unknown ini key 'minipod_clok' of minipod: did you mean \"minipod_clock\"? the valid ones are minipod_config, minipod_clock" in run.stderr


def test_a_clock_minipod_has_not_stops_the_run(tmp_path):
    run = run_pytest(tmp_path, "[pytest]\nminipod_clock = manaul\n", "def test_nothing():\n    pass\n")
    assert run.returncode == 4, run.stdout + run.stderr
    assert "ini key minipod_clock: 'manaul' is not a clock of minipod; use one of" in run.stderr


def test_a_misspelt_marker_argument_fails_the_test_naming_it(tmp_path):
    test = "import pytest\n\n@pytest.mark.minipod(confg={})\ndef test_marked(minipod):\n    pass\n"
    run = run_pytest(tmp_path, "[pytest]\n", test)
    assert run.returncode != 0
    assert "unknown marker argument 'confg' of minipod: did you mean \"config\"?" in run.stdout + run.stderr
