"""Conv-output activations and FLOPs of the ResNet / ResNeXt / DenseNet CNNs the registry describes.

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
  activations;
- DenseNet-121 at 224 x 224 gives 6.90 M conv outputs and 5.67 GFLOPs (timm: 6.9 M and
  2.87 GMACs). Its registry figure is another count, the elements its batch norms take in:
  15.67 M. A ResNet normalises each convolution's output once, so for it the two counts
  agree; DenseNet normalises before each convolution, on the concatenation of the block's
  input and every earlier layer's output (Huang et al. 2017, "Densely Connected
  Convolutional Networks", section 3), so every layer re-reads, re-normalises and
  re-activates the whole concatenation, work no convolution's epilogue can take.

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
# DenseNet-121 (torchvision / timm ``densenet121``): layers per dense block, growth rate, the
# bottleneck's width in growth rates, the stem's channels, the classifier's classes.
DENSE_BLOCKS = (6, 12, 24, 16)
GROWTH = 32
BOTTLENECK_WIDTH = 4
DENSE_STEM_CHANNELS = 64
IMAGENET_CLASSES = 1000


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


def densenet121(resolution: int = 224) -> tuple[int, int, int]:
    """(conv and linear outputs, FLOPs, elements entering a batch norm) of DenseNet-121: a 7x7
    stem, four dense blocks whose layers run BN-ReLU-1x1 conv-BN-ReLU-3x3 conv on the
    concatenation of the block's input and every earlier layer's output, and transitions
    (BN-ReLU-1x1 conv halving the channels, 2x2 average pool) between them."""
    side = resolution // 2
    acts, flops = _conv(3, DENSE_STEM_CHANNELS, 7, side)
    normed = acts  # norm0
    side //= 2  # max pool
    channels = DENSE_STEM_CHANNELS
    width = BOTTLENECK_WIDTH * GROWTH
    for block, layers in enumerate(DENSE_BLOCKS):
        for _ in range(layers):
            normed += channels * side * side  # norm1 over the concatenation
            for layer in ((channels, width, 1, side), (width, GROWTH, 3, side)):
                a, f = _conv(*layer)
                acts, flops = acts + a, flops + f
            normed += width * side * side  # norm2 over the bottleneck's output
            channels += GROWTH
        normed += channels * side * side  # the transition's norm, or norm5 after the last
        if block < len(DENSE_BLOCKS) - 1:
            a, f = _conv(channels, channels // 2, 1, side)
            acts, flops = acts + a, flops + f
            channels //= 2
            side //= 2  # average pool
    acts += IMAGENET_CLASSES
    flops += 2 * channels * IMAGENET_CLASSES
    return acts, flops, normed


def main() -> None:
    a, f, _ = backbone(224)
    print(f"ResNet-50 at 224: {a / 1e6:.2f} M activations, {f / 1e9:.2f} GFLOPs of convolution")
    a, f = retinanet()
    print(f"RetinaNet ResNeXt50-32x4d FPN at 800: {a:,} activations, {f / 1e9:.1f} GFLOPs")
    a, f, n = densenet121()
    print(
        f"DenseNet-121 at 224: {a / 1e6:.2f} M activations, {f / 1e9:.2f} GFLOPs, "
        f"{n / 1e6:.2f} M elements into its batch norms"
    )


if __name__ == "__main__":
    main()
