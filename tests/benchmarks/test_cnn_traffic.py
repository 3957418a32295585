"""benchmarks/data/cnn_traffic.py: the element-wise traffic behind the registry's CNN figures."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from recommender.models.arch import GivenArch
from recommender.models.registry import resolve_model

# The script imports the conv-output count beside it, as it does when run: that folder joins
# the path.
DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"
if str(DATA) not in sys.path:
    sys.path.insert(0, str(DATA))

from cnn_traffic import (  # noqa: E402
    TRAFFIC_TOLERANCE,
    Traffic,
    convnext_base,
    densenet121,
    efficientnet_b0,
    resnet50,
    seresnext101_32x4d,
    swin_base,
)

Net = Callable[[], Traffic]


@pytest.mark.parametrize(
    ("net", "infer_macts"),
    [
        (resnet50, 11.11e6),
        (efficientnet_b0, 6.75e6),
        (seresnext101_32x4d, 21.26e6),
        (densenet121, 6.9e6),
        (convnext_base, 28.75e6),
        (swin_base, 36.63e6),
    ],
)
def test_conv_outputs_reproduce_timms_published_count(net: Net, infer_macts: float) -> None:
    # timm's results CSV (pytorch-image-models@aa4b5850, infer_macts at 224)
    assert net().conv_outputs == pytest.approx(infer_macts, rel=0.01)


def test_densenet_streams_more_and_convnext_less_than_a_resnet_per_conv_output() -> None:
    ref = resnet50()
    per_output = ref.passes / ref.conv_outputs
    dense, convnext = densenet121(), convnext_base()
    assert dense.passes / dense.conv_outputs > 2 * per_output
    assert convnext.passes / convnext.conv_outputs < 0.7 * per_output
    # EfficientNet's chain per conv output is a ResNet's within 5 %: it keeps timm's count
    effnet = efficientnet_b0()
    assert effnet.passes / effnet.conv_outputs == pytest.approx(per_output, rel=0.05)
    assert TRAFFIC_TOLERANCE == 0.10


# The registry's name of each counted net.
COUNTED = [
    ("resnet-50", resnet50),
    ("efficientnet-b0", efficientnet_b0),
    ("se-resnext101-32x4d", seresnext101_32x4d),
    ("densenet-121", densenet121),
    ("convnext-base", convnext_base),
    ("swin-base", swin_base),
]


@pytest.mark.parametrize(("name", "net"), COUNTED)
def test_registry_carries_the_equivalent_where_a_net_differs_beyond_the_tolerance(
    name: str, net: Net
) -> None:
    counted, ref = net(), resnet50()
    equivalent = counted.equivalent(ref)
    differs = counted.differs(ref)
    arch = resolve_model(name).architecture
    assert isinstance(arch, GivenArch)
    # forward_activations stays timm's count (it also sizes training activations); the
    # traffic the step model streams is the equivalent where the chain differs
    assert arch.forward_activations == pytest.approx(counted.conv_outputs, rel=0.01)
    traffic = arch.traffic_activations or arch.forward_activations
    expected = equivalent if differs else counted.conv_outputs
    assert traffic == pytest.approx(expected, rel=0.01)
    assert (arch.traffic_activations is not None) == differs
