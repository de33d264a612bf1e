"""`arl export verl` against veRL 0.9.1 itself: every shipped Practitioner's Guide and AgentRL
experiment is exported (one variant each, over dist/: `npm run build` first), composed with
veRL's own Hydra defaults (verl/trainer/config/ppo_trainer.yaml) and checked by veRL's own
dataclasses and validate_config, as main_ppo does before it starts Ray. A key veRL lacks or a
value it rejects fails the test.

veRL's package __init__ imports Ray (verl.protocol) and its profiler package imports the Ray
worker classes; neither is needed for configuration, and Ray is not installed here, so those
two package __init__ files are skipped (the modules under them are veRL's own, loaded as they
are)."""

import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from helpers import require_built

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
ARL = REPO / "bin" / "arl.js"
# One variant of each: spec -> experiment/variant.
EXPERIMENTS = {
    "pg-appendix-a-hparams.arl": "pg_appendix_a_hparams/coef=0.01,algorithm.optimizer.lr=1e-6,algorithm.critic.optimizer.lr=1e-5",
    "pg-table1-env-complexity.arl": "pg_table1_env_complexity/w8_o12_q4",
    "pg-table3-max-steps.arl": "pg_table3_max_steps/max_turns=8",
    "pg-table8-algorithms.arl": "pg_table8_algorithms/rloo",
    "pg-table9-reward-density.arl": "pg_table9_reward_density/ppo_dense1",
    "agentrl-table6-ablation.arl": "agentrl_table6/full",
}

pytest.importorskip("hydra", reason="hydra-core is not installed (veRL's config loader)")
if importlib.util.find_spec("verl") is None:
    pytest.skip("verl 0.9.1 is not installed", allow_module_level=True)
if shutil.which("node") is None:
    pytest.skip("node is not on PATH", allow_module_level=True)
require_built(REPO / "dist" / "cli" / "main.js", module=True)


def _bare_package(name, path):
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module
    return module


def _load_verl_config_modules():
    """veRL's config modules without the package __init__ files that import Ray."""
    if "verl.workers.config" in sys.modules:
        return
    root = Path(importlib.util.find_spec("verl").origin).parent
    if "verl" not in sys.modules:
        _bare_package("verl", root)
    profiler = _bare_package("verl.utils.profiler", root / "utils" / "profiler")
    config = importlib.import_module("verl.utils.profiler.config")
    for name in dir(config):
        if not name.startswith("_"):
            setattr(profiler, name, getattr(config, name))
    importlib.import_module("verl.workers.config")


def _start_export(spec, out):
    """One variant of `spec`, exported config-only (the data files need no veRL check)."""
    target = f"{REPO / 'experiments' / spec}#{EXPERIMENTS[spec]}"
    command = ["node", str(ARL), "export", "verl", target, "--out", str(out), "--allow-approximate", "--config-only"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _compose(folder, overrides=()):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    _load_verl_config_modules()  # pkg://verl.trainer.config imports the package
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(folder), version_base=None):
        return compose(config_name="arl_ppo", overrides=list(overrides))


def _validate(cfg):
    """What main_ppo checks before Ray starts, plus the dataclasses of every section it builds."""
    _load_verl_config_modules()
    from omegaconf import OmegaConf
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    use_ref = cfg.algorithm.use_kl_in_reward or cfg.actor_rollout_ref.actor.use_kl_loss
    # The critic's dataclass loads its model's Hugging Face config (a download), so its
    # checks run here without the model: its optimizer as a dataclass, its keys by composition
    # (the ppo_trainer config is struct: an unknown key fails there).
    validate_config(config=cfg, use_reference_policy=use_ref, use_critic=False)
    if cfg.algorithm.adv_estimator == "gae":
        omega_conf_to_dataclass(cfg.critic.optim)
    omega_conf_to_dataclass(cfg.algorithm)
    rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    omega_conf_to_dataclass(cfg.actor_rollout_ref.actor.optim)
    assert rollout.n == cfg.actor_rollout_ref.rollout.n
    if cfg.actor_rollout_ref.rollout.multi_turn.enable:
        import yaml
        from verl.tools.schemas import OpenAIFunctionToolSchema

        tools = yaml.safe_load(Path(cfg.actor_rollout_ref.rollout.multi_turn.tool_config_path).read_text())["tools"]
        for tool in tools:
            OpenAIFunctionToolSchema.model_validate(tool["tool_schema"])
    return OmegaConf.to_container(cfg, resolve=False)


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The six exports run at once, while veRL's config modules load."""
    base = tmp_path_factory.mktemp("verl")
    folders = {spec: base / spec.removesuffix(".arl") for spec in EXPERIMENTS}
    running = {spec: _start_export(spec, folder) for spec, folder in folders.items()}
    _load_verl_config_modules()
    for spec, process in running.items():
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, f"{spec}: {stderr}"
    return folders


@pytest.mark.parametrize("spec", sorted(EXPERIMENTS))
def test_export_loads_and_validates_in_verl(exports, spec, monkeypatch):
    folder = exports[spec]
    monkeypatch.chdir(folder)
    cfg = _compose(folder)
    _validate(cfg)
    assert (folder / "SEMANTICS.md").read_text().startswith("# ")
    for program in ("reward.py", "prepare_data.py", "arl_env_tool.py"):
        if (folder / program).exists():
            compile((folder / program).read_text(), program, "exec")


def test_reward_module_scores_the_plans_terms(exports):
    """reward.py's compute_score, with veRL's keyword arguments, on recorded signals (agentrl: success - 0.2 if aborted)."""
    namespace = {}
    exec(compile((exports["agentrl-table6-ablation.arl"] / "reward.py").read_text(), "reward.py", "exec"), namespace)
    score = namespace["compute_score"]
    won = score(data_source="db", solution_str="", ground_truth="", extra_info={"arl_signals": {"env": {"success": True}, "episode": {"aborted": False}}})
    cut = score(data_source="db", solution_str="", ground_truth="", extra_info={"arl_signals": {"env": {"success": False}, "episode": {"aborted": True}}})
    assert (won["score"], cut["score"]) == (1.0, -0.2)
    with pytest.raises(ValueError, match="no ARL env signals"):
        score(data_source="db", solution_str="", ground_truth="", extra_info={})


def test_unknown_key_is_rejected(exports, monkeypatch):
    """The check is real: a key veRL's config lacks fails composition."""
    from hydra.errors import ConfigCompositionException

    folder = exports["agentrl-table6-ablation.arl"]
    monkeypatch.chdir(folder)
    with pytest.raises(ConfigCompositionException, match="clip_ratio_lowest"):
        _compose(folder, ["actor_rollout_ref.actor.clip_ratio_lowest=0.2"])


def test_rejected_value_fails_validation(exports, monkeypatch):
    """The check is real: a value veRL's dataclasses reject fails validation."""
    folder = exports["agentrl-table6-ablation.arl"]
    monkeypatch.chdir(folder)
    cfg = _compose(folder, ["actor_rollout_ref.actor.loss_agg_mode=seq-mean-group-mean"])
    with pytest.raises(Exception, match="loss_agg_mode"):
        _validate(cfg)
