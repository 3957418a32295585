"""scoring.shape: per-sample figures from exact shapes, with worked numbers from the sources."""

from __future__ import annotations

import pytest

from recommender.models.arch import TransformerArch
from recommender.scoring.shape import shape_of

from .conftest import make

# GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d 12288, 96 heads, 2048 tokens.
GPT3 = {"layers": 96, "hidden_size": 12288, "heads": 96, "vocab_size": 50257, "dropout": True}


def test_kv_cache_per_token_of_llama_3_8b_is_131072_bytes_in_bf16() -> None:
    # 2 (K and V) x 32 layers x 8 KV heads x 128 dims x 2 bytes (Llama 3 8B config.json).
    w = make(kind="inference", model={"name": "llama-3-8b"}, inference={"prompt_tokens": 128})
    assert shape_of(w).kv_bytes_per_token_16 == 131_072


def test_gpt3_layer_activations_match_korthikanti_eq_1() -> None:
    # Korthikanti et al. 2022, eq. 1: s b h (34 + 5 a s / h) bytes per layer, 16-bit, dropout.
    s, h, a = 2048, 12288, 96
    w = make(model={"architecture": GPT3, "sequence_length": s}, batch_size=1)
    shape = shape_of(w)
    per_layer = (shape.layer_act_bytes + shape.score_act_bytes) / 96
    assert per_layer == pytest.approx(s * h * (34 + 5 * a * s / h), rel=1e-9)


def test_selective_recomputation_drops_the_score_matrix_only() -> None:
    # Korthikanti section 4.2: selective recomputation keeps 34 s b h per layer.
    w = make(model={"architecture": GPT3, "sequence_length": 2048}, batch_size=1)
    shape = shape_of(w)
    assert shape.layer_act_bytes / 96 == pytest.approx(2048 * 12288 * 34, rel=1e-9)


def test_gated_mlp_and_gqa_change_the_activations() -> None:
    # Llama-style: no dropout, SwiGLU (8 f bytes per token), K/V at the KV-head width.
    arch = TransformerArch(
        layers=1, hidden_size=4096, heads=32, kv_heads=8, intermediate_size=14336, mlp="gated"
    )
    w = make(model={"architecture": arch.model_dump(), "sequence_length": 1}, batch_size=1)
    h, q, kv, f = 4096, 4096, 1024, 14336
    expected = (2 * h + 2 * (q + kv) + 2 * kv + 2 * q) + (2 * h + 8 * f) + 4 * h
    assert shape_of(w).layer_act_bytes == pytest.approx(expected)


def test_moe_flops_follow_active_parameters() -> None:
    # Mixtral 8x7B: 46.7 B parameters, 12.9 B active per token (Jiang et al. 2024).
    w = make(model={"name": "mixtral-8x7b", "sequence_length": 4096}, batch_size=1)
    shape = shape_of(w)
    assert shape.parameters == pytest.approx(46.7e9, rel=0.01)
    assert shape.active_parameters == pytest.approx(12.9e9, rel=0.01)
    per_token = shape.matmul_flops / 4096
    assert per_token == pytest.approx(2 * 12.9e9, rel=0.02)  # logits included


def test_a_shapeless_7b_model_gets_a_plausible_transformer_shape() -> None:
    # 6.74 B parameters, 6 N FLOPs per token over 2048 tokens: read as ~32 layers of ~4096.
    w = make(model={"parameters": 6.74e9, "flops_per_sample": 6 * 6.74e9 * 2048}, batch_size=1)
    shape = shape_of(w)
    assert shape.transformer
    assert 28 <= shape.layers <= 36
    assert shape.tokens == 2048
    per_sample_gb = (shape.layer_act_bytes + shape.head_act_bytes) / 1e9
    assert 5 < per_sample_gb < 40  # not the TBs a FLOP-proportional guess gives
