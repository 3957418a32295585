"""Reading a local Hugging Face config.json: published configs give the registry's shapes,
every supported model type maps to its published count, and a bad file names key and file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recommender.models.arch import TransformerArch
from recommender.models.hf_config import (
    SUPPORTED_MODEL_TYPES,
    HFConfigError,
    architecture_from_hf_config,
    load_hf_config,
)
from recommender.models.registry import load_registry

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
REGISTRY = load_registry(REPO / "catalogs" / "models.yaml")

# Published config.json (fixtures/README.md says where each was published) -> registry entry.
PUBLISHED = {
    "meta-llama--Llama-3.1-8B": "llama-3.1-8b",
    "meta-llama--Llama-3.1-70B": "llama-3.1-70b",
    "meta-llama--Llama-3.1-405B": "llama-3.1-405b",
    "mistralai--Mixtral-8x7B-v0.1": "mixtral-8x7b",
    "mistralai--Mixtral-8x22B-v0.1": "mixtral-8x22b",
    "Qwen--Qwen3-8B": "qwen3-8b",
    "Qwen--Qwen3-32B": "qwen3-32b",
    "Qwen--Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen--Qwen3-235B-A22B": "qwen3-235b-a22b",
    "deepseek-ai--DeepSeek-V3": "deepseek-v3",
    "deepseek-ai--DeepSeek-R1": "deepseek-r1",
}


def _fixture(stem: str) -> Path:
    return FIXTURES / f"{stem}.config.json"


def _config(stem: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_fixture(stem).read_text())
    return data


def test_every_fixture_is_listed_with_its_source() -> None:
    files = sorted(p.name.removesuffix(".config.json") for p in FIXTURES.glob("*.config.json"))
    assert files == sorted(PUBLISHED)
    readme = (FIXTURES / "README.md").read_text()
    assert all(f"{stem}.config.json" in readme for stem in PUBLISHED)


@pytest.mark.parametrize(("stem", "name"), PUBLISHED.items(), ids=list(PUBLISHED))
def test_published_config_gives_the_registry_shape(stem: str, name: str) -> None:
    arch = load_hf_config(_fixture(stem))
    entry = REGISTRY.resolve(name)
    assert isinstance(arch, TransformerArch) and isinstance(entry.architecture, TransformerArch)
    assert arch.model_dump() == entry.architecture.model_dump()
    assert arch.parameters == entry.parameters
    assert arch.active_parameters == entry.active_parameters
    assert arch.kv_elements_per_token() == entry.architecture.kv_elements_per_token()


def test_a_model_directory_reads_its_config_json(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(_fixture("Qwen--Qwen3-8B").read_text())
    assert load_hf_config(tmp_path) == load_hf_config(_fixture("Qwen--Qwen3-8B"))


def test_llama_3_8b_kv_cache_is_131072_bytes_per_token_in_bf16() -> None:
    arch = load_hf_config(_fixture("meta-llama--Llama-3.1-8B"))
    assert isinstance(arch, TransformerArch)
    bf16_bytes = 2
    assert arch.kv_elements_per_token() * bf16_bytes == 131_072  # 2 x 32 layers x 8 x 128


# Configs of the other model types, with the published config's architecture keys (the
# source of each is the registry entry named beside it, or the model card quoted).
OTHER_TYPES: list[tuple[str, dict[str, Any], str | float]] = [
    ("gpt2", {"n_embd": 1280, "n_layer": 36, "n_head": 20, "n_positions": 1024,
              "vocab_size": 50257, "activation_function": "gelu_new"}, "gpt-2-large"),
    ("gptj", {"n_embd": 4096, "n_layer": 28, "n_head": 16, "n_positions": 2048, "n_inner": None,
              "rotary_dim": 64, "vocab_size": 50400, "tie_word_embeddings": False}, "gpt-j-6b"),
    ("opt", {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 32,
             "ffn_dim": 8192, "vocab_size": 50272, "max_position_embeddings": 2048,
             "word_embed_proj_dim": 2048, "enable_bias": True}, "opt-1.3b"),
    ("bert", {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
              "intermediate_size": 3072, "vocab_size": 30522, "max_position_embeddings": 512,
              "type_vocab_size": 2, "hidden_act": "gelu"}, "bert-base"),
    ("t5", {"d_model": 768, "num_layers": 12, "num_decoder_layers": 12, "num_heads": 12,
            "d_kv": 64, "d_ff": 3072, "vocab_size": 32128, "feed_forward_proj": "relu",
            "n_positions": 512}, "t5-base"),
    ("t5", {"d_model": 1024, "num_layers": 24, "num_heads": 128, "d_kv": 128, "d_ff": 65536,
            "vocab_size": 32128, "n_positions": 512}, "t5-11b"),
    ("whisper", {"d_model": 1280, "encoder_layers": 32, "decoder_layers": 32,
                 "encoder_attention_heads": 20, "decoder_attention_heads": 20,
                 "encoder_ffn_dim": 5120, "decoder_ffn_dim": 5120, "vocab_size": 51866,
                 "num_mel_bins": 128, "max_source_positions": 1500,
                 "max_target_positions": 448}, "whisper-large-v3"),
    ("vit", {"image_size": 224, "patch_size": 16, "num_channels": 3, "num_hidden_layers": 12,
             "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072,
             "id2label": {str(i): f"class {i}" for i in range(1000)}}, "vit-base-16"),
    ("gemma2", {"hidden_size": 3584, "num_hidden_layers": 42, "num_attention_heads": 16,
                "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336,
                "vocab_size": 256000, "hidden_activation": "gelu_pytorch_tanh",
                "max_position_embeddings": 8192}, "gemma-2-9b"),
    ("phi3", {"hidden_size": 3072, "num_hidden_layers": 32, "num_attention_heads": 32,
              "num_key_value_heads": 32, "intermediate_size": 8192, "vocab_size": 32064,
              "max_position_embeddings": 4096, "tie_word_embeddings": False}, "phi-3-mini"),
    ("qwen2", {"hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
               "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
               "max_position_embeddings": 131072, "tie_word_embeddings": False}, "qwen2.5-7b"),
    ("mistral", {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                 "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
                 "max_position_embeddings": 32768, "tie_word_embeddings": False},
     "mistral-7b"),
    # Qwen1.5-MoE-A2.7B model card: 14.3B parameters in total, 2.7B activated.
    ("qwen2_moe", {"hidden_size": 2048, "num_hidden_layers": 24, "num_attention_heads": 16,
                   "num_key_value_heads": 16, "intermediate_size": 5632, "vocab_size": 151936,
                   "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632,
                   "num_experts": 60, "num_experts_per_tok": 4,
                   "tie_word_embeddings": False}, 14.3e9),
]  # fmt: skip


@pytest.mark.parametrize(
    ("model_type", "keys", "expected"),
    OTHER_TYPES,
    ids=[f"{t}-{e}" for t, _, e in OTHER_TYPES],
)
def test_model_type_maps_to_the_published_count(
    model_type: str, keys: dict[str, Any], expected: str | float
) -> None:
    arch = architecture_from_hf_config({"model_type": model_type, **keys})
    if isinstance(expected, str):
        entry = REGISTRY.resolve(expected)
        assert arch.parameters == pytest.approx(entry.parameters, rel=2e-4)
        assert abs(arch.parameters / entry.published_parameters - 1) <= 0.01
    else:
        assert abs(arch.parameters / expected - 1) <= 0.01


def test_qwen2_moe_shared_expert_counts_as_four_expert_widths() -> None:
    (_, keys, _) = OTHER_TYPES[-1]
    arch = architecture_from_hf_config({"model_type": "qwen2_moe", **keys})
    assert isinstance(arch, TransformerArch)
    assert arch.shared_experts == 4 and arch.qkv_bias
    assert abs(arch.active_parameters / 2.7e9 - 1) <= 0.01


def test_gemma3_reads_its_text_config_with_transformers_defaults() -> None:
    # google/gemma-3-27b-it config.json: text_config omits vocab_size and context length.
    config = {
        "model_type": "gemma3",
        "text_config": {
            "model_type": "gemma3_text",
            "head_dim": 128,
            "hidden_size": 5376,
            "intermediate_size": 21504,
            "num_attention_heads": 32,
            "num_hidden_layers": 62,
            "num_key_value_heads": 16,
            "sliding_window": 1024,
        },
        "vision_config": {"hidden_size": 1152, "num_hidden_layers": 27, "patch_size": 14},
    }
    arch = architecture_from_hf_config(config)
    entry = REGISTRY.resolve("gemma-3-27b")
    assert isinstance(arch, TransformerArch) and isinstance(entry.architecture, TransformerArch)
    assert arch.vocab_size == 262_208 and arch.max_sequence_length == 131_072
    assert arch.tied_embeddings and arch.mlp == "gated"
    # The language model only: the registry adds the 417M vision encoder as extra parameters.
    vision = entry.architecture.extra_parameters
    assert arch.parameters == pytest.approx(entry.parameters - vision)


@pytest.mark.parametrize(
    ("model_type", "keys", "mlp"),
    [
        ("llama", {"hidden_act": "silu"}, "gated"),
        ("gemma", {"hidden_act": "gelu"}, "gated"),
        ("t5", {"feed_forward_proj": "relu"}, "plain"),
        ("t5", {"feed_forward_proj": "gated-gelu"}, "gated"),
        ("gpt2", {"activation_function": "gelu_new"}, "plain"),
        ("bert", {"hidden_act": "gelu"}, "plain"),
    ],
)
def test_gated_or_plain_follows_type_and_activation(
    model_type: str, keys: dict[str, Any], mlp: str
) -> None:
    base = {
        "llama": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                  "intermediate_size": 128, "vocab_size": 100},
        "t5": {"d_model": 64, "num_layers": 2, "num_heads": 4, "d_kv": 16, "d_ff": 128,
               "vocab_size": 100},
        "gpt2": {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 32, "vocab_size": 100},
        "bert": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 32},
    }  # fmt: skip
    shape = base["llama" if model_type == "gemma" else model_type]
    arch = architecture_from_hf_config({"model_type": model_type, **shape, **keys})
    assert isinstance(arch, TransformerArch) and arch.mlp == mlp


def test_every_supported_type_has_a_test_above() -> None:
    tested = {t for t, _, _ in OTHER_TYPES} | {"llama", "mixtral", "qwen3", "qwen3_moe"}
    tested |= {"deepseek_v3", "gemma", "gemma3", "t5", "bert", "gpt2"}
    untested = set(SUPPORTED_MODEL_TYPES) - tested
    assert untested <= {"deepseek_v2", "gemma3_text"}  # same mappers as deepseek_v3, gemma3


def _errors(config: dict[str, Any] | str, tmp_path: Path) -> list[str]:
    path = tmp_path / "config.json"
    path.write_text(config if isinstance(config, str) else json.dumps(config))
    with pytest.raises(HFConfigError) as info:
        load_hf_config(path)
    return [str(p) for p in info.value.problems]


def test_missing_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = _config("meta-llama--Llama-3.1-8B")
    del config["num_hidden_layers"]
    (problem,) = _errors(config, tmp_path)
    assert problem == (
        f"{tmp_path / 'config.json'} num_hidden_layers: required key is missing "
        "(model_type 'llama')"
    )


def test_every_missing_key_is_reported_at_once(tmp_path: Path) -> None:
    config = _config("deepseek-ai--DeepSeek-V3")
    for key in ("kv_lora_rank", "n_routed_experts", "vocab_size"):
        del config[key]
    problems = _errors(config, tmp_path)
    assert [p.split()[1] for p in problems] == ["vocab_size:", "n_routed_experts:", "kv_lora_rank:"]


def test_wrong_value_type_is_named(tmp_path: Path) -> None:
    config = _config("Qwen--Qwen3-8B") | {"num_attention_heads": "thirty-two"}
    (problem,) = _errors(config, tmp_path)
    assert "num_attention_heads: must be a non-negative integer (got 'thirty-two')" in problem


def test_inconsistent_shape_is_refused_with_the_field(tmp_path: Path) -> None:
    config = _config("Qwen--Qwen3-8B") | {"num_key_value_heads": 5}
    (problem,) = _errors(config, tmp_path)
    assert "kv_heads (5) must divide heads (32)" in problem


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"hidden_size": 8}, "model_type: required key is missing"),
        ({"model_type": "mamba"}, "model_type 'mamba' is not supported (supported: bert,"),
        ({"model_type": "gemma3"}, "text_config: required key is missing"),
        (
            {"model_type": "opt", "hidden_size": 1024, "word_embed_proj_dim": 512,
             "num_hidden_layers": 24, "num_attention_heads": 16, "ffn_dim": 4096,
             "vocab_size": 50272, "max_position_embeddings": 2048},
            "word_embed_proj_dim: 512 is not supported",
        ),
        (
            {**OTHER_TYPES[-1][1], "model_type": "qwen2_moe",
             "shared_expert_intermediate_size": 1000},
            "shared_expert_intermediate_size: 1000 is not supported",
        ),
        ("[1, 2]", "expected a JSON object"),
        ('{"model_type": "llama",\n "hidden_size": }', "config.json:2 invalid JSON"),
    ],
)  # fmt: skip
def test_unusable_configs_say_why(
    config: dict[str, Any] | str, expected: str, tmp_path: Path
) -> None:
    problems = _errors(config, tmp_path)
    assert any(expected in p for p in problems), problems


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(HFConfigError, match="cannot read file"):
        load_hf_config(tmp_path / "absent.json")
