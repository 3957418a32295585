"""benchmarks/data/cnn_activations.py: the counts behind the registry's CNN activation figures."""

from __future__ import annotations

import pytest
from data.cnn_activations import backbone, densenet121

from recommender.models.registry import resolve_model


def test_resnet50_reproduces_timms_published_activation_count() -> None:
    activations, flops, _ = backbone(224)
    assert activations / 1e6 == pytest.approx(11.11, abs=0.01)
    assert flops / 1e9 == pytest.approx(8.17, abs=0.01)


def test_densenet121_conv_outputs_reproduce_timm_and_its_norms_take_in_more() -> None:
    conv_outputs, flops, normed = densenet121()
    # timm's results CSV: infer_macts 6.9 M, infer_gmacs 2.87 (5.74 GFLOPs)
    assert conv_outputs / 1e6 == pytest.approx(6.9, abs=0.05)
    assert flops / 5.74e9 == pytest.approx(1.0, abs=0.02)
    # every layer re-normalises the concatenation of the block's earlier outputs
    assert normed > 2 * conv_outputs


def test_registry_densenet_carries_the_batch_norm_count() -> None:
    _, _, normed = densenet121()
    arch = resolve_model("densenet-121").architecture
    assert arch.forward_activations == pytest.approx(normed, rel=1e-3)
