"""A failing test's report shows what its workers wrote and its jobs' timelines."""
import os
import subprocess
import sys
import textwrap

import pytest

# The worker runs its handler under the service's runtime, and the inner test calls its client.
pytest.importorskip("runpod", reason="the service's library runpod is not installed: pip install runpod")


def test_a_failing_test_reports_its_workers_output_and_its_jobs(tmp_path):
    (tmp_path / "noisy.py").write_text(
        textwrap.dedent(
            """
            def handler(job):
                print("handler saw", job["input"]["word"], flush=True)
                return {"heard": job["input"]["word"]}
            """
        )
    )
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.fixture(scope="session")
            def minipod_config():
                return {"endpoints": [{"id": "py", "handler": "external"}], "externalWorkers": {"pingIntervalMs": 1000}}
            """
        )
    )
    (tmp_path / "test_it.py").write_text(
        textwrap.dedent(
            """
            import runpod
            import noisy

            def test_fails(minipod):
                minipod.worker(noisy.handler)
                assert runpod.Endpoint("py").run_sync({"word": "pelican"}, timeout=60) == {"heard": "heron"}

            def test_passes(minipod):
                pass
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    # The handler's own print, and minipod's line starting the worker, under a section of the worker.
    assert "- minipod worker py-" in out, out
    assert "handler saw pelican" in out, out
    # The job's timeline.
    assert "- minipod jobs of the test" in out, out
    assert "IN_QUEUE -> IN_PROGRESS" in out and "IN_PROGRESS -> COMPLETED" in out, out
