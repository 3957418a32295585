"""Conv-output activations and FLOPs of the ResNet / ResNeXt CNNs the model registry describes.

``forward_activations`` in ``catalogs/models.yaml`` counts, as timm's ``infer_macts`` does, the
elements every convolution (and linear layer) writes in one forward pass of one image: what an
inference engine's fused build streams (batch norm folded, activations and residual adds fused
into the convolution's epilogue). This script counts them from the layer definitions, so that
a registry entry no published table covers (MLPerf's RetinaNet) carries a figure checked the
same way as one that does:

- ResNet-50 at 224 x 224 gives 11.11 M, timm's published ``infer_macts`` (results CSV at
  aa4b5850), and 8.17 GFLOPs of convolution (timm: 8.22 with the classifier);
- RetinaNet ResNeXt50-32x4d FPN at 800 x 800 (torchvision's definition, which MLPerf's
  reference builds: FPN on layers 2-4, LastLevelP6P7(256, 256), 9 anchors, 264 classes)
  gives 402.4 GFLOPs, the registry's figure from ``torch.utils.flop_counter``, and 249.97 M
  activations.

    python benchmarks/data/cnn_activations.py
"""

from __future__ import annotations

# torchvision's ResNet / ResNeXt: blocks per stage, bottleneck planes, expansion.
STAGE_BLOCKS = (3, 4, 6, 3)
STAGE_PLANES = (64, 128, 256, 512)
EXPANSION = 4
STEM_CHANNELS = 64
# RetinaNet (torchvision ``retinanet_resnext50_32x4d_fpn`` as MLPerf builds it).
FPN_CHANNELS = 256
HEAD_CONVS = 4  # 3x3 convolutions before each head's output convolution
ANCHORS = 9
CLASSES = 264  # MLPerf's OpenImages subset
BOX_COORDINATES = 4


def _conv(cin: int, cout: int, kernel: int, side: int, groups: int = 1) -> tuple[int, int]:
    """(output elements, FLOPs at 2 per MAC) of a square convolution with a square output."""
    out = cout * side * side
    return out, 2 * (cin // groups) * kernel * kernel * out


def backbone(
    resolution: int, width_per_group: int = 64, groups: int = 1
) -> tuple[int, int, list[tuple[int, int]]]:
    """(activations, FLOPs, [(channels, side) of each stage's output]) of the backbone's
    convolutions (ResNet-50: 64 x 1; ResNeXt50-32x4d: 4 x 32)."""
    side = resolution // 2
    acts, flops = _conv(3, STEM_CHANNELS, 7, side)
    side //= 2  # max pool
    cin, outs = STEM_CHANNELS, []
    for stage, (blocks, planes) in enumerate(zip(STAGE_BLOCKS, STAGE_PLANES, strict=True)):
        width = planes * width_per_group // 64 * groups
        for block in range(blocks):
            stride = 2 if block == 0 and stage > 0 else 1
            out_side = side // stride
            layers = [
                (cin, width, 1, side, 1),
                (width, width, 3, out_side, groups),  # torchvision v1.5: stride on the 3x3
                (width, planes * EXPANSION, 1, out_side, 1),
            ]
            if block == 0:
                layers.append((cin, planes * EXPANSION, 1, out_side, 1))  # downsample
            for layer in layers:
                a, f = _conv(*layer)
                acts, flops = acts + a, flops + f
            cin, side = planes * EXPANSION, out_side
        outs.append((cin, side))
    return acts, flops, outs


def retinanet(resolution: int = 800) -> tuple[int, int]:
    """(activations, FLOPs) of RetinaNet ResNeXt50-32x4d FPN: backbone, FPN and both heads
    (anchor decoding and NMS are not convolutions and are left out, as in the registry)."""
    acts, flops, outs = backbone(resolution, width_per_group=4, groups=32)
    sides = []
    for cin, side in outs[1:]:  # C3-C5: a 1x1 lateral and a 3x3 output convolution each
        for layer in ((cin, FPN_CHANNELS, 1, side), (FPN_CHANNELS, FPN_CHANNELS, 3, side)):
            a, f = _conv(*layer)
            acts, flops = acts + a, flops + f
        sides.append(side)
    for _ in range(2):  # P6, P7: stride-2 3x3 convolutions
        side = (sides[-1] + 1) // 2
        a, f = _conv(FPN_CHANNELS, FPN_CHANNELS, 3, side)
        acts, flops = acts + a, flops + f
        sides.append(side)
    for side in sides:
        for out_channels in (ANCHORS * CLASSES, ANCHORS * BOX_COORDINATES):
            for _ in range(HEAD_CONVS):
                a, f = _conv(FPN_CHANNELS, FPN_CHANNELS, 3, side)
                acts, flops = acts + a, flops + f
            a, f = _conv(FPN_CHANNELS, out_channels, 3, side)
            acts, flops = acts + a, flops + f
    return acts, flops


def main() -> None:
    a, f, _ = backbone(224)
    print(f"ResNet-50 at 224: {a / 1e6:.2f} M activations, {f / 1e9:.2f} GFLOPs of convolution")
    a, f = retinanet()
    print(f"RetinaNet ResNeXt50-32x4d FPN at 800: {a:,} activations, {f / 1e9:.1f} GFLOPs")


if __name__ == "__main__":
    main()
