"""The maintainer's GPU check of lesson 4: its skip path without CUDA, and its logic on the CPU."""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

from autograder import device_check, solutions
from autograder.device_check import check_correctness, load_reference, main

NO_CUDA = not torch.cuda.is_available()


@pytest.mark.skipif(not NO_CUDA, reason="a CUDA device is present: the skip path does not apply")
def test_without_cuda_the_command_skips_cleanly():
    result = subprocess.run([sys.executable, "-m", "autograder.device_check"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("skipped: no CUDA device")


def test_the_whole_check_runs_on_cpu_with_a_small_input(capsys):
    assert main(["--device", "cpu", "--small", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "over 20 cases: OK" in out
    assert "float32 [2, 4, 12, 12], 2 interleaved rounds, median of ratios" in out
    assert "k=3 s=2 p=1" in out and "k=2 s=2 p=0" in out and "all checks passed" in out


def test_bad_arguments_are_rejected(capsys):
    assert main(["--device", "tpu"]) == 2
    assert "--device must be cuda or cpu" in capsys.readouterr().err
    assert main(["--device", "cpu", "--threads", "0"]) == 2


def test_the_reference_comes_from_the_source_notebook():
    reference = load_reference()
    assert set(reference.names) == {"AvgPool2dFunction", "avg_pool2d_torch", "AvgPool2d"}
    assert reference["AvgPool2dFunction"].forward.__code__.co_filename == "<lesson4_torch:avg_pool2d_function>"


def test_a_course_without_the_function_stage_is_one_sentence_not_a_traceback(monkeypatch, capsys, tmp_path):
    (tmp_path / "source").mkdir()
    monkeypatch.setattr(device_check, "load_stage", lambda stage: solutions.load_stage(stage, tmp_path))
    assert main(["--device", "cpu", "--small", "--rounds", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: no reference Function to check: no lesson in") and "\n" not in err


def test_a_wrong_function_is_reported_and_fails_the_command(monkeypatch, capsys):
    def inverted(x, k, s, p, cip):
        return F.avg_pool2d(x, k, s or k, p, count_include_pad=not cip)

    failures = check_correctness(inverted, "cpu", log=lambda *_: None)
    assert failures and all("max error forward" in f or "gradcheck failed" in f for f in failures)
    reference = load_reference()

    class Wrong:
        apply = staticmethod(inverted)

    monkeypatch.setattr(device_check, "load_reference",
                        lambda: solutions.Solutions(reference.lesson, {**reference.names, "AvgPool2dFunction": Wrong}))
    assert main(["--device", "cpu", "--small", "--rounds", "1"]) == 1
    assert "FAILED" in capsys.readouterr().out
