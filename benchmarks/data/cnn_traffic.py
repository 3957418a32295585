"""Element-wise traffic of an eager CNN forward pass, for the registry's ``traffic_activations``.

The step model streams a CNN's ``forward_activations`` ``cnn_passes`` times (fitted; 8.65 in
eager PyTorch), a figure that for most registry CNNs is timm's ``infer_macts``: the elements
its convolutions write. That is right for nets built like a ResNet, whose every convolution
output passes the same chain of element-wise kernels (batch norm, activation, the residual
add). Four registry nets are built otherwise, and their conv outputs misstate their traffic:

- DenseNet-121 (Huang et al. 2017, "Densely Connected Convolutional Networks", section 3)
  concatenates every earlier layer's output and normalises and activates the whole
  concatenation before each layer's convolution: each output is re-read by every later layer
  of its block;
- SE-ResNeXt101-32x4d (Hu et al. 2018, "Squeeze-and-Excitation Networks") pools each
  block's output and multiplies it by a per-channel gate, two more passes over it;
- ConvNeXt-B (Liu et al. 2022, "A ConvNet for the 2020s", figure 4) runs one norm and one
  activation per block of three weighted layers, on channels-last copies;
- Swin-B (Liu et al. 2021, "Swin Transformer") copies every block's tokens into windows and
  back, and writes its attention scores, which timm's count includes, fewer times each than a
  ResNet writes a conv output.

This script counts the elements each kernel of an eager forward pass reads and writes (weights
left out), following torchvision's ResNet-50 (and its bottleneck with SE-ResNeXt's groups and
gate) and DenseNet-121 and timm's ``efficientnet_b0``, ``convnext_base`` (``conv_mlp=False``:
its norm is ``F.layer_norm`` on a permuted, non-contiguous view, which PyTorch copies to a
contiguous tensor first) and ``swin_base_patch4_window7_224``. Where a net's passes per conv
output differ from ResNet-50's by more than 10 % (``TRAFFIC_TOLERANCE``: more than the copies
PyTorch may or may not make, which the count cannot tell apart), the registry carries its
element passes over ResNet-50's per conv output as ``traffic_activations``, the conv outputs a
ResNet would need to stream as much, which the step model streams instead
(``forward_activations`` keeps timm's count, which also sizes training activations):

- ResNet-50 at 224: 11.11 M conv outputs (timm's ``infer_macts``), 80.9 M element passes,
  7.28 a conv output;
- EfficientNet-B0 at 224: 6.75 M conv outputs (timm: 6.75 M), 47.0 M passes, 6.46 M
  equivalent, 4 % off its conv outputs: built like a ResNet in this respect, it keeps timm's
  (EfficientNet-B4 and MobileNetV3-Large, of the same inverted-residual blocks, are not
  counted and keep theirs too);
- SE-ResNeXt101-32x4d at 224: 21.26 M conv outputs (timm: 21.26 M), 178.7 M passes, 24.55 M
  equivalent;
- DenseNet-121 at 224: 6.90 M conv outputs (timm: 6.9 M), 107.6 M passes, 14.78 M equivalent;
- ConvNeXt-B at 224: 28.75 M conv outputs (timm: 28.75 M), 141.4 M passes, 19.43 M equivalent;
- Swin-B at 224: 36.63 M linear and attention-matmul outputs (timm: 36.63 M), 200.1 M passes,
  27.50 M equivalent.

    python benchmarks/data/cnn_traffic.py
"""

from __future__ import annotations

from dataclasses import dataclass

# torchvision's ResNet-50, as the conv-output count beside this script describes it.
from cnn_activations import EXPANSION as RESNET_EXPANSION
from cnn_activations import STAGE_BLOCKS as RESNET_BLOCKS
from cnn_activations import STAGE_PLANES as RESNET_PLANES
from cnn_activations import STEM_CHANNELS as RESNET_STEM

RESNET_WIDTH_PER_GROUP = 64
# SE-ResNeXt101-32x4d (the DeepLearningExamples model, timm's seresnext101_32x4d): a ResNeXt
# of 32 groups of 4 with 23 blocks in its third stage, and a squeeze-excitation gate of a
# sixteenth of the block's channels.
SE_RESNEXT101_BLOCKS = (3, 4, 23, 3)
SE_REDUCTION = 16
# torchvision's DenseNet-121: layers per dense block, growth rate, bottleneck width in growth
# rates, stem channels.
DENSE_BLOCKS = (6, 12, 24, 16)
GROWTH = 32
BOTTLENECK_WIDTH = 4
DENSE_STEM = 64
# timm's convnext_base: channels and blocks per stage, the stem's patch, the MLP's ratio.
CONVNEXT_DIMS = (128, 256, 512, 1024)
CONVNEXT_DEPTHS = (3, 3, 27, 3)
CONVNEXT_PATCH = 4
CONVNEXT_MLP_RATIO = 4
# timm's efficientnet_b0: (expansion, kernel, stride, output channels, repeats) per stage,
# stem and head channels, the squeeze-excitation's width over the block's input channels.
EFFICIENTNET_B0 = (
    (1, 3, 1, 16, 1),
    (6, 3, 2, 24, 2),
    (6, 5, 2, 40, 2),
    (6, 3, 2, 80, 3),
    (6, 5, 1, 112, 3),
    (6, 5, 2, 192, 4),
    (6, 3, 1, 320, 1),
)
EFFICIENTNET_STEM = 32
EFFICIENTNET_HEAD = 1280
SE_RATIO = 0.25
# timm's swin_base_patch4_window7_224: channels, blocks and heads per stage, the patch, the
# window's tokens, the MLP's ratio; every second block of a stage shifts its windows, unless
# the window covers the whole map (the last stage's 7 x 7).
SWIN_DIMS = (128, 256, 512, 1024)
SWIN_DEPTHS = (2, 2, 18, 2)
SWIN_HEADS = (4, 8, 16, 32)
SWIN_PATCH = 4
SWIN_WINDOW = 7
SWIN_MLP_RATIO = 4
IMAGENET_CLASSES = 1000
# Elements a kernel moves per element of its output: an element-wise kernel (batch norm,
# activation, a per-channel scale, a copy) reads one and writes one; a residual add reads two.
POINTWISE_PASSES = 2
ADD_PASSES = 3
# How far a net's passes per conv output may stray from ResNet-50's before the registry carries
# its own traffic figure: the copies PyTorch may or may not make, which the count cannot tell
# apart, are worth about this much.
TRAFFIC_TOLERANCE = 0.10


@dataclass
class Traffic:
    """Elements written by weighted layers, and elements read or written by every kernel."""

    conv_outputs: int = 0
    passes: int = 0

    def weighted(self, read: int, written: int) -> None:
        """A convolution or linear layer: reads its input, writes its output."""
        self.conv_outputs += written
        self.passes += read + written

    def pointwise(self, elements: int, kernels: int = 1) -> None:
        self.passes += POINTWISE_PASSES * elements * kernels

    def add(self, elements: int) -> None:
        self.passes += ADD_PASSES * elements

    def reduce(self, read: int, written: int) -> None:
        """A pooling or a concatenation: reads its inputs, writes its output."""
        self.passes += read + written

    def equivalent(self, reference: Traffic) -> float:
        """Conv outputs a net with ``reference``'s passes per conv output streams as much."""
        return self.passes / (reference.passes / reference.conv_outputs)

    def differs(self, reference: Traffic) -> bool:
        """Whether its chain per conv output strays from ``reference``'s by more than
        ``TRAFFIC_TOLERANCE``: then the registry carries ``equivalent`` as its traffic."""
        return abs(self.equivalent(reference) / self.conv_outputs - 1.0) > TRAFFIC_TOLERANCE


def _stem(resolution: int, channels: int, pool: bool) -> tuple[Traffic, int]:
    """A stride-2 stem convolution, its batch norm and activation, and (``pool``) a stride-2
    max pool: the traffic so far and the side of the map it leaves."""
    t = Traffic()
    side = resolution // 2
    t.weighted(3 * resolution**2, channels * side**2)
    t.pointwise(channels * side**2, kernels=2)
    if pool:
        t.reduce(channels * side**2, channels * (side // 2) ** 2)
        side //= 2
    return t, side


def _classifier(t: Traffic, channels: int, side: int) -> Traffic:
    """Global average pool and the ImageNet classifier."""
    t.reduce(channels * side**2, channels)
    t.weighted(channels, IMAGENET_CLASSES)
    return t


def _bottleneck_net(
    resolution: int,
    blocks: tuple[int, ...],
    width_per_group: int = RESNET_WIDTH_PER_GROUP,
    groups: int = 1,
    squeeze: bool = False,
) -> Traffic:
    """A torchvision-style bottleneck net: ResNet (64 x 1), or ResNeXt (``groups`` of
    ``width_per_group``) with, where ``squeeze``, a squeeze-excitation gate on each block's
    output (Hu et al. 2018: pool, two 1x1s, a per-channel multiply)."""
    t, side = _stem(resolution, RESNET_STEM, pool=True)
    cin = RESNET_STEM
    for stage, (count, planes) in enumerate(zip(blocks, RESNET_PLANES, strict=True)):
        width = planes * width_per_group // RESNET_WIDTH_PER_GROUP * groups
        cout = planes * RESNET_EXPANSION
        for block in range(count):
            out = side // 2 if block == 0 and stage > 0 else side
            t.weighted(cin * side**2, width * side**2)
            t.pointwise(width * side**2, kernels=2)
            t.weighted(width * side**2, width * out**2)  # v1.5: the stride on the 3x3
            t.pointwise(width * out**2, kernels=2)
            t.weighted(width * out**2, cout * out**2)
            t.pointwise(cout * out**2)
            if squeeze:
                t.reduce(cout * out**2, cout)
                t.weighted(cout, cout // SE_REDUCTION)
                t.weighted(cout // SE_REDUCTION, cout)
                t.pointwise(cout * out**2)  # the gate's multiply
            if block == 0:
                t.weighted(cin * side**2, cout * out**2)  # downsample and its batch norm
                t.pointwise(cout * out**2)
            t.add(cout * out**2)
            t.pointwise(cout * out**2)  # ReLU
            cin, side = cout, out
    return _classifier(t, cin, side)


def resnet50(resolution: int = 224) -> Traffic:
    return _bottleneck_net(resolution, RESNET_BLOCKS)


def seresnext101_32x4d(resolution: int = 224) -> Traffic:
    return _bottleneck_net(
        resolution, SE_RESNEXT101_BLOCKS, width_per_group=4, groups=32, squeeze=True
    )


def densenet121(resolution: int = 224) -> Traffic:
    t, side = _stem(resolution, DENSE_STEM, pool=True)
    channels = DENSE_STEM
    width = BOTTLENECK_WIDTH * GROWTH
    for block, layers in enumerate(DENSE_BLOCKS):
        for _ in range(layers):
            concat = channels * side**2
            t.reduce(concat, concat)  # torch.cat of the block's features so far
            t.pointwise(concat, kernels=2)  # norm1, relu1 over the concatenation
            t.weighted(concat, width * side**2)
            t.pointwise(width * side**2, kernels=2)
            t.weighted(width * side**2, GROWTH * side**2)
            channels += GROWTH
        concat = channels * side**2
        t.reduce(concat, concat)  # the block's output
        t.pointwise(concat, kernels=2)  # the transition's (or the final) norm and ReLU
        if block < len(DENSE_BLOCKS) - 1:
            t.weighted(concat, channels // 2 * side**2)
            channels //= 2
            t.reduce(channels * side**2, channels * (side // 2) ** 2)  # average pool
            side //= 2
    return _classifier(t, channels, side)


def efficientnet_b0(resolution: int = 224) -> Traffic:
    t, side = _stem(resolution, EFFICIENTNET_STEM, pool=False)
    cin = EFFICIENTNET_STEM
    for expansion, _kernel, first_stride, cout, repeats in EFFICIENTNET_B0:
        for repeat in range(repeats):
            out = side // (first_stride if repeat == 0 else 1)
            mid = cin * expansion
            if expansion != 1:
                t.weighted(cin * side**2, mid * side**2)  # 1x1 expansion
                t.pointwise(mid * side**2, kernels=2)
            t.weighted(mid * side**2, mid * out**2)  # depthwise
            t.pointwise(mid * out**2, kernels=2)
            squeezed = max(1, int(cin * SE_RATIO))
            t.reduce(mid * out**2, mid)  # squeeze-excitation: pool, two 1x1s, gate
            t.weighted(mid, squeezed)
            t.weighted(squeezed, mid)
            t.pointwise(mid * out**2)
            t.weighted(mid * out**2, cout * out**2)  # 1x1 projection and its batch norm
            t.pointwise(cout * out**2)
            if out == side and cin == cout:
                t.add(cout * out**2)
            cin, side = cout, out
    t.weighted(cin * side**2, EFFICIENTNET_HEAD * side**2)
    t.pointwise(EFFICIENTNET_HEAD * side**2, kernels=2)
    return _classifier(t, EFFICIENTNET_HEAD, side)


def _layer_norm_2d(t: Traffic, elements: int) -> None:
    """timm's channels-first norm: a permuted view, copied contiguous, normalised."""
    t.pointwise(elements, kernels=2)


def convnext_base(resolution: int = 224) -> Traffic:
    t = Traffic()
    side = resolution // CONVNEXT_PATCH
    t.weighted(3 * resolution**2, CONVNEXT_DIMS[0] * side**2)
    _layer_norm_2d(t, CONVNEXT_DIMS[0] * side**2)
    for stage, (dim, depth) in enumerate(zip(CONVNEXT_DIMS, CONVNEXT_DEPTHS, strict=True)):
        if stage > 0:
            prev = CONVNEXT_DIMS[stage - 1] * side**2
            _layer_norm_2d(t, prev)
            side //= 2
            t.weighted(prev, dim * side**2)  # 2x2 stride-2 convolution
        x = dim * side**2
        hidden = CONVNEXT_MLP_RATIO * x
        for _ in range(depth):
            t.weighted(x, x)  # 7x7 depthwise convolution
            t.pointwise(x, kernels=2)  # contiguous copy of the permuted view, layer norm
            t.weighted(x, hidden)  # fc1
            t.pointwise(hidden)  # GELU
            t.weighted(hidden, x)  # fc2
            t.pointwise(x)  # layer scale (gamma)
            t.add(x)  # residual
    dim = CONVNEXT_DIMS[-1]
    t.reduce(dim * side**2, dim)
    t.pointwise(dim)  # head norm
    t.weighted(dim, IMAGENET_CLASSES)
    return t


def _swin_block(t: Traffic, dims: int, heads: int, side: int, shifted: bool) -> None:
    """One Swin block, eager: timm's window attention keeps its unfused path by default
    (``use_fused_attn(experimental=True)``), so the scores are written, biased, masked and
    softmaxed in memory, and ``torch.matmul`` copies the strided k and v views first."""
    x = dims * side**2
    scores = heads * SWIN_WINDOW**2 * side**2
    shifts = 2 if shifted else 0  # torch.roll before the partition and after the reverse
    # norm1, the window partition's copy, q * scale, the k and v copies, the head merge's
    # copy, the window reverse's copy, norm2
    t.pointwise(x, kernels=8 + shifts)
    t.weighted(x, 3 * x)  # qkv
    t.weighted(2 * x, scores)  # q @ k^T
    t.pointwise(scores, kernels=3 if shifted else 2)  # + position bias (+ mask), softmax
    t.weighted(scores + x, x)  # attn @ v
    t.weighted(x, x)  # proj
    t.add(x)
    t.weighted(x, SWIN_MLP_RATIO * x)
    t.pointwise(SWIN_MLP_RATIO * x)  # GELU
    t.weighted(SWIN_MLP_RATIO * x, x)
    t.add(x)


def swin_base(resolution: int = 224) -> Traffic:
    t = Traffic()
    side = resolution // SWIN_PATCH
    t.weighted(3 * resolution**2, SWIN_DIMS[0] * side**2)  # patch embedding
    t.pointwise(SWIN_DIMS[0] * side**2)  # its norm
    for stage, (dims, depth, heads) in enumerate(
        zip(SWIN_DIMS, SWIN_DEPTHS, SWIN_HEADS, strict=True)
    ):
        if stage > 0:  # patch merging: 2 x 2 tokens stacked, copied, normalised, projected
            side //= 2
            merged = 4 * SWIN_DIMS[stage - 1] * side**2
            t.pointwise(merged, kernels=2)
            t.weighted(merged, dims * side**2)
        for block in range(depth):
            _swin_block(t, dims, heads, side, shifted=block % 2 == 1 and side > SWIN_WINDOW)
    dims = SWIN_DIMS[-1]
    t.pointwise(dims * side**2)  # final norm
    return _classifier(t, dims, side)


def main() -> None:
    ref = resnet50()
    print(
        f"ResNet-50: {ref.conv_outputs / 1e6:.2f} M conv outputs, {ref.passes / 1e6:.1f} M "
        f"element passes, {ref.passes / ref.conv_outputs:.2f} a conv output"
    )
    nets = (
        ("EfficientNet-B0", efficientnet_b0()),
        ("SE-ResNeXt101-32x4d", seresnext101_32x4d()),
        ("DenseNet-121", densenet121()),
        ("ConvNeXt-B", convnext_base()),
        ("Swin-B", swin_base()),
    )
    for name, net in nets:
        print(
            f"{name}: {net.conv_outputs / 1e6:.2f} M conv outputs, {net.passes / 1e6:.1f} M "
            f"element passes, {net.equivalent(ref) / 1e6:.2f} M ResNet-equivalent"
        )


if __name__ == "__main__":
    main()
