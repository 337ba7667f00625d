"""``python -m dpcore`` imports what a command uses: ``--help`` nothing heavy, ``epsilon`` dp_accounting but not
torch, and a sweep answered from its cache neither torch nor scikit-learn (the plan of its inputs stands in for the
learner registry, see ``dpcore/cli/sweep.py``). Behaviour, not time: each command runs in a fresh interpreter and
the test reads its ``sys.modules``."""
from __future__ import annotations

import io
import json
import os
import pathlib
import subprocess
import sys

import pandas as pd
import pytest

from dpcore.cli import build_parser
from dpcore.cli import sweep as sweep_cli
from dpcore.sweep import SweepCache, SweepConfig, run_sweep

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sklearn", "scipy", "dp_accounting", "joblib")
#: A small real sweep: a private learner, its non-private baseline and the majority line, on iris.
SWEEP = ["sweep", "--dataset", "iris", "--algorithms", "erm-objective", "--values", "1,4", "--seeds", "1",
         "--jobs", "1"]

_PROBE = """
import json, sys
from dpcore.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "loaded": sorted(m for m in %r if m in sys.modules)}), file=sys.stderr)
""" % (HEAVY,)


def _probe(args: list[str], cache: pathlib.Path) -> tuple[dict, subprocess.CompletedProcess]:
    env = {**os.environ, "DPCORE_CACHE_DIR": str(cache)}
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)
    return json.loads(proc.stderr.strip().splitlines()[-1]), proc


def test_help_imports_none_of_the_heavy_libraries(tmp_path):
    seen, _ = _probe(["--help"], tmp_path)
    assert seen == {"code": 0, "loaded": []}


def test_epsilon_imports_dp_accounting_but_not_torch_or_scikit_learn(tmp_path):
    seen, proc = _probe(["epsilon", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100"], tmp_path)
    assert seen["code"] == 0 and float(proc.stdout.strip().splitlines()[-1]) == pytest.approx(1.214, abs=1e-3)
    assert "dp_accounting" in seen["loaded"] and not {"torch", "sklearn", "joblib"} & set(seen["loaded"])


def test_a_cached_sweep_answers_without_torch_or_scikit_learn_and_prints_the_same_table(tmp_path):
    first, cold = _probe(SWEEP, tmp_path)  # computes, and remembers the plan of these inputs
    assert first["code"] == 0, cold.stderr
    second, warm = _probe(SWEEP, tmp_path)
    assert second == {"code": 0, "loaded": []}, warm.stderr
    before, after = pd.read_csv(io.StringIO(cold.stdout)), pd.read_csv(io.StringIO(warm.stdout))
    assert not before.cached.any() and after.cached.all() and len(after) == 2 + 2  # 2 swept, baseline, majority
    pd.testing.assert_frame_equal(before.drop(columns="cached"), after.drop(columns="cached"))
    progress = [ln for ln in warm.stderr.splitlines() if ln.startswith("[")]
    assert len(progress) == 4 and all(ln.endswith("(cached)") for ln in progress)


def test_a_cached_sweep_with_a_summary_says_its_runs_released_together_without_composing_them_again(tmp_path):
    # --out prints the summary and what the runs spend released together: composed when the sweep trained, then
    # kept with its plan, so that the cached answer still loads no dp_accounting (half a second to import)
    out = ["--out", str(tmp_path / "runs.csv")]
    first, cold = _probe([*SWEEP, *out], tmp_path)
    assert first["code"] == 0, cold.stderr
    second, warm = _probe([*SWEEP, *out], tmp_path)
    assert second == {"code": 0, "loaded": []}, warm.stderr
    said = [[ln for ln in p.stderr.splitlines() if "released together" in ln] for p in (cold, warm)]
    assert len(said[0]) == 1 and said[0] == said[1]


def _args(tmp_path, *extra):
    return build_parser("sweep").parse_args([*SWEEP, "--cache-dir", str(tmp_path / "cache"), *extra])


def test_a_plan_rebuilds_the_sweep_its_runs_and_its_table(tmp_path):
    config = SweepConfig(dataset="iris", learners=["erm-objective"], values=[4, 1], seeds=2,
                         params={"huber_h": 0.25, "tune": False, "n_components": 10})
    plan = json.loads(json.dumps(config.plan(), allow_nan=False))  # stored as strict JSON
    restored = SweepConfig.from_plan(plan)
    assert restored.plan() == plan
    assert [r.key for r in restored.runs()] == [r.key for r in config.runs()]
    assert restored.baselines() == config.baselines() and restored.wordings() == config.wordings()
    done = run_sweep(config, n_jobs=1, cache_dir=tmp_path)
    again = run_sweep(restored, n_jobs=1, cache_dir=tmp_path)
    assert again.n_computed == 0
    pd.testing.assert_frame_equal(done.table.drop(columns="cached"), again.table.drop(columns="cached"))
    assert SweepConfig(dataset=config.dataset_name, learners=["erm-objective"], values=[1], seeds=1,
                       include_baselines=False).plan()["baselines"] == []


def test_the_plan_key_follows_the_inputs_and_the_source_and_is_off_where_a_plan_cannot_be_trusted(tmp_path,
                                                                                                  monkeypatch):
    monkeypatch.setattr("dpcore.learners.registry_touched", lambda: False)  # as in a fresh `python -m dpcore`
    key = sweep_cli._plan_key(_args(tmp_path))
    assert key == sweep_cli._plan_key(_args(tmp_path, "--jobs", "2", "--out", "x.csv"))  # where, not what
    assert key != sweep_cli._plan_key(_args(tmp_path, "--seeds", "2"))
    monkeypatch.setattr("dpcore.sweep.config.tree_digest", lambda: "edited")
    assert sweep_cli._plan_key(_args(tmp_path)) != key  # other code never reads this plan
    for extra in (["--no-cache"], ["--provider", "x"], ["--scheduler", "tcp://h:1"]):
        assert sweep_cli._plan_key(_args(tmp_path, *extra)) is None
    monkeypatch.setattr("dpcore.learners.registry_touched", lambda: True)  # learners registered in this process
    assert sweep_cli._plan_key(_args(tmp_path)) is None


def test_a_plan_with_a_run_missing_from_the_cache_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr("dpcore.learners.registry_touched", lambda: False)
    args = _args(tmp_path)
    config = SweepConfig(dataset="iris", learners=["erm-objective"], values=[1.0, 4.0], seeds=1)
    cache = SweepCache(args.cache_dir)
    cache.put_plan(sweep_cli._plan_key(args), config.plan())
    run_sweep(config, n_jobs=1, cache_dir=args.cache_dir)
    assert sweep_cli._from_cache(args) == 0  # every run cached: answered
    first = config.runs()[0].key
    (pathlib.Path(args.cache_dir) / first[:2] / f"{first}.json").unlink()
    assert sweep_cli._from_cache(args) is None  # one missing: the sweep runs as usual
    assert cache.clear() == len(config.runs()) - 1 and cache.get_plan(sweep_cli._plan_key(args)) is None


@pytest.mark.parametrize("command", ["train", "audit"])
def test_a_commands_help_lists_every_learner_knob_without_torch(tmp_path, command):
    # the knobs come from the learners' declarations (their configs and presets), not from the code that trains
    seen, proc = _probe([command, "--help"], tmp_path)
    assert seen["code"] == 0 and "torch" not in seen["loaded"]
    if command == "train":
        assert "--clip-norm" in proc.stdout and "--rounds" in proc.stdout  # DP-SGD's and DP-FedAvg's knobs
    else:
        assert "--canaries" in proc.stdout and "--shadows" in proc.stdout


def test_k_means_runs_without_torch(tmp_path):
    seen, proc = _probe(["cluster", "--dataset", "iris", "--algorithm", "dplloyd", "--seeds", "1"], tmp_path)
    assert seen["code"] == 0, proc.stderr
    assert "torch" not in seen["loaded"] and "accuracy" in proc.stdout


def test_a_network_trained_by_a_command_gets_the_servers_threads_when_torch_loads_inside_the_run():
    from dpcore.runtime.serving import run_threads

    code = ("import sys, os\nfrom dpcore.runtime.serving import run_threads\nassert 'torch' not in sys.modules\n"
            "with run_threads(1):\n    import torch\n    inside = torch.get_num_threads()\n"
            "print(inside, os.environ.get('OMP_NUM_THREADS'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    assert out.stdout.split() == ["1", "None"]  # torch started with one thread; the variable was put back
    import torch

    before = torch.get_num_threads()
    with run_threads(1):  # torch already loaded (a server, a test): set and restored directly
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
