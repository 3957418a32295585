"""What the model's shape implies per sample, before any hardware or plan is chosen.

A :class:`Shape` holds the per-sample figures every plan and offer reuses: FLOPs split into
weight matrices and attention, activation bytes per checkpointing mode and attention kernel,
the KV cache per token, and the parameters the optimizer and the collectives see.

Activation memory generalises Korthikanti et al. 2022, "Reducing Activation Recomputation in
Large Transformer Models", section 4.1 (``s b h (34 + 5 a s / h)`` bytes per layer for a GPT
layer with 16-bit activations and dropout), matrix by matrix so that GQA, gated MLPs, MoE and
models without dropout come out right:

- attention: the QKV input ``2h``, Q and K ``2(q + kv)``, V ``2 kv``, the output projection's
  input ``2q`` (bytes per token), plus a 1-byte dropout mask ``h`` when the recipe uses dropout;
- score matrix (eager kernels only; FlashAttention recomputes it, Dao et al. 2022):
  ``2 a s`` for the softmax output, ``3 a s`` more with dropout (mask and output);
- MLP: the input ``2h`` and, per FFN width ``f``, ``4f`` (plain: activation input and
  output) or ``8f`` (gated: gate and up outputs, the activation's output, their product);
- two norms' inputs ``4h``;
- selective recomputation drops the score matrix; full recomputation keeps each layer's
  input ``2h`` and one layer's working set (Korthikanti et al., sections 4.2-4.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from recommender.models.arch import GivenArch, TransformerArch
from recommender.workload import Workload

__all__ = [
    "BYTES_PER_ELEMENT",
    "LOGITS_BYTES_PER_ELEMENT",
    "EncoderPass",
    "Shape",
    "activation_element_bytes",
    "shape_of",
]

BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
}
# Activations are stored at 16 bits in mixed precision (fp8 training keeps bf16 activations,
# Micikevicius et al. 2022, "FP8 Formats for Deep Learning"); fp32 training stores 32 bits.
ACTIVATION_BYTES = {"fp32": 4.0, "tf32": 4.0}
DEFAULT_ACTIVATION_BYTES = 2.0
# Activations flowing between kernels (the traffic the step time streams): the precision's
# width, but 16 bits for fp8 / int8 in a framework (torchao and Transformer Engine quantise a
# matmul's inputs on the fly and hand bf16 to the next op), and 8 bits in an inference
# engine's quantised build, which keeps the tensors between int8 / fp8 layers in 8 bits
# (TensorRT Developer Guide, "Working with Quantized Types": Q/DQ pairs fused into the
# producing and consuming layers).
EIGHT_BIT_PRECISIONS = frozenset({"fp8", "int8"})


def activation_element_bytes(precision: str, execution: str) -> float:
    """Bytes of one activation element streamed between kernels (see above)."""
    if precision in EIGHT_BIT_PRECISIONS and execution != "engine":
        return DEFAULT_ACTIVATION_BYTES
    return BYTES_PER_ELEMENT[precision]


# The loss over the vocabulary keeps 16-bit logits plus the fp32 copy the cross-entropy is
# computed on (Hugging Face's causal-LM heads upcast logits to float32 before the loss).
LOGITS_BYTES_PER_ELEMENT = 6.0
# Activation bytes kept for backward per forward FLOP, 16-bit, when the model gives no shape:
# a CNN from ResNet-50 mixed-precision training fitting batch 256 in a 16 GB V100 (NVIDIA
# DeepLearningExamples ResNet-50 v1.5 README; 8.2 GFLOPs forward): ~53 MB per image; the
# other families from a transformer layer by Korthikanti's formula (BERT-Large, 512 tokens).
ACTIVATION_BYTES_PER_FLOP = {
    "transformer": 3.6e-3,
    "cnn": 6.5e-3,
    "recsys": 1e-2,
    "diffusion": 5e-3,
    "vision": 6.5e-3,
    "speech": 3.6e-3,
    "other": 1e-2,
}
# A CNN keeps ~2.4 tensors per activation it writes for the backward pass (convolution
# inputs, batch-norm inputs, ReLU masks): ResNet-50's 53 MB per image at 16 bits (above)
# over its 11.11 M written activations (timm infer_macts).
CNN_STORED_PER_ACTIVATION = 53e6 / 2.0 / 11.11e6
# Inference keeps about two layers' activations alive at a time (no backward pass).
INFERENCE_LIVE_LAYERS = 2.0
# Inference of a shapeless model keeps this share of its training activations.
INFERENCE_ACTIVATION_SHARE = 0.1


@dataclass(frozen=True, slots=True)
class EncoderPass:
    """What generating from an encoder-decoder (Whisper, T5) adds to serving a decoder: the
    encoder runs once per request, before the generation loop, over its source (Whisper's
    fixed 1,500 audio frames, T5's prompt), and every decode step runs only the decoder,
    whose cross-attention reads K and V of every source position in every layer (Vaswani et
    al. 2017, section 3.2.3; Radford et al. 2022, Figure 1)."""

    source_tokens: float
    decoder_prompt_tokens: float  # the decoder's forced prefix (T5: its start token)
    decoder_layers: float
    decode_parameters: float  # weights one decode step streams (decoder blocks, output head)
    decode_active_parameters: float  # of those, the ones one token multiplies (MoE: routed)
    matmul_flops: float  # the encoder over its source + every layer's cross K / V projections
    attention_flops: float  # the encoder's bidirectional attention over its source
    cross_kv_bytes_16: float  # cross-attention K and V per sequence, 16-bit


# T5 and BART decoders start from one token (``decoder_start_token_id``).
DECODER_START_TOKENS = 1


def encoder_pass(w: Workload, a: TransformerArch) -> EncoderPass | None:
    """The encoder-decoder figures of ``w`` when it generates (an ``inference`` block)."""
    spec = w.inference
    if a.type != "encoder-decoder" or spec is None:
        return None
    source = float(a.source_length or spec.prompt_tokens)  # unset: the encoder reads the prompt
    fixed = a.source_length is not None
    per_source = a.encoder_matmul_flops_per_token()
    return EncoderPass(
        source_tokens=source,
        decoder_prompt_tokens=float(spec.prompt_tokens if fixed else DECODER_START_TOKENS),
        decoder_layers=float(a.n_decoder_layers),
        decode_parameters=a.decode_step_parameters(),
        decode_active_parameters=a.decode_step_parameters(active=True),
        matmul_flops=per_source * source,
        attention_flops=a.encoder_attention_flops_per_token(int(source)) * source,
        cross_kv_bytes_16=a.cross_kv_elements_per_source_token() * source * 2.0,
    )


@dataclass(frozen=True, slots=True)
class Shape:
    """Per-sample (one sequence, image or request) figures of one workload."""

    parameters: float
    active_parameters: float
    expert_parameters: float  # routed-expert weights (what expert parallelism divides)
    experts: int
    experts_per_token: int
    transformer: bool
    layers: float  # blocks one token passes through (both stacks)
    hidden: float
    tokens: float  # tokens per sample (1 when not a sequence model)
    heads: float
    kv_heads: float
    vocab: float
    matmul_flops: float  # forward FLOPs of weight matrices per sample
    attention_flops: float  # forward FLOPs of the whole score and value products per sample
    causal: bool  # a causal kernel may skip half of attention
    # activation bytes per sample kept for backward (16-bit unless fp32 training)
    layer_act_bytes: float  # every layer, no recomputation, flash kernels (no score matrix)
    score_act_bytes: float  # the score matrix eager kernels add, every layer
    layer_input_bytes: float  # what full recomputation keeps (every layer's input)
    head_act_bytes: float  # logits and loss, once per sample
    kv_bytes_per_token_16: float  # KV cache per token at 16-bit (0 for encoders)
    input_embedding_parameters: float  # a lookup table no step streams whole (untied)
    given_activation_bytes: float | None  # a shapeless model's activations per sample
    # Elements per sample entering and leaving the weight matrices (every linear layer's input
    # and output widths x tokens, all layers): what float8 training casts (0: no shape).
    linear_io_elements: float = 0.0
    encoder: EncoderPass | None = None  # an encoder-decoder that generates (serving)

    @property
    def layer_bytes_one(self) -> float:
        """One layer's full activations (the working set full recomputation rebuilds)."""
        return self.layer_act_bytes / max(self.layers, 1.0)


def _stored_element_bytes(w: Workload) -> float:
    """Bytes of one activation element kept for the backward pass (``ACTIVATION_BYTES``)."""
    return ACTIVATION_BYTES.get(w.precision, DEFAULT_ACTIVATION_BYTES)


def _transformer_activations(a: TransformerArch, tokens: float, el: float) -> dict[str, float]:
    """Activation bytes per sample, by part (see the module docstring for the terms)."""
    h, q, kv = float(a.hidden_size), float(a.n_heads * a.d_head), float(a.kv_width)
    if a.attention == "mla":
        q = kv = float(a.q_width)
    mask = 0.5 if a.dropout else 0.0  # 1-byte masks, in 2-byte units
    per_f = 8.0 if a.mlp == "gated" else 4.0
    if a.is_moe:
        f_dense = float(a.d_ff)
        f_moe = float((a.experts_per_token + a.shared_experts) * a.d_expert)
        f = (a.dense_layers * f_dense + a.moe_layers * f_moe) / a.layers
    else:
        f = float(a.d_ff)
    attention = 2 * h + 2 * (q + kv) + 2 * kv + 2 * q + mask * h * 2
    mlp = 2 * h + per_f * f + mask * h * 2
    norms = 4 * h
    per_layer_token = (attention + mlp + norms) * el / 2
    score_per_token = a.n_heads * tokens * (2.0 + (3.0 if a.dropout else 0.0)) * el / 2
    layers = float(a.total_layers)
    # QKV (h in, q + 2 kv out), output projection (q in, h out), MLP up / gate (h in, f or 2f
    # out) and down (f in, h out).
    up = 2.0 * f if a.mlp == "gated" else f
    linear_io = (h + q + 2 * kv) + (q + h) + (h + up) + (f + h)
    return {
        "layer": per_layer_token * tokens * layers,
        "score": score_per_token * tokens * layers,
        "input": 2 * h * tokens * layers * el / 2,
        "head": tokens * a.vocab_size * LOGITS_BYTES_PER_ELEMENT + 2 * h * tokens * el / 2,
        "linear_io": linear_io * tokens * layers,
    }


def _transformer_shape(w: Workload, a: TransformerArch, tokens: float) -> Shape:
    el = _stored_element_bytes(w)
    acts = _transformer_activations(a, tokens, el)
    return Shape(
        parameters=w.parameters,
        active_parameters=w.active_parameters,
        expert_parameters=a.expert_parameters,
        experts=a.experts,
        experts_per_token=a.experts_per_token,
        transformer=True,
        layers=float(a.total_layers),
        hidden=float(a.hidden_size),
        tokens=tokens,
        heads=float(a.n_heads),
        kv_heads=float(a.n_kv_heads),
        vocab=float(a.vocab_size),
        matmul_flops=a.matmul_flops_per_token() * tokens,
        attention_flops=a.attention_flops_per_token(int(tokens)) * tokens,
        causal=a.type != "encoder",
        layer_act_bytes=acts["layer"],
        score_act_bytes=acts["score"],
        layer_input_bytes=acts["input"],
        head_act_bytes=acts["head"],
        kv_bytes_per_token_16=a.kv_elements_per_token() * 2.0,
        input_embedding_parameters=0.0
        if a.tied_embeddings or a.type == "encoder"
        else float(a.vocab_size * a.hidden_size),
        given_activation_bytes=None,
        linear_io_elements=acts["linear_io"],
        encoder=encoder_pass(w, a),
    )


# A transformer known only by its parameter count: d_model / n_layer ~ 128, as GPT-3 175B
# (12288 / 96) and Llama-2-7B (4096 / 32) have it, with N ~ 12 L d^2 (Kaplan et al. 2020).
ESTIMATED_ASPECT_RATIO = 128.0
ESTIMATED_HEAD_DIM = 128
# Shapeless models at least this large, with no family given, are taken as transformers.
TRANSFORMER_ASSUMED_FROM_PARAMETERS = 1e9


def _estimated_layers(parameters: float) -> float:
    """Blocks of a transformer with ``parameters`` and no given shape."""
    per_layer_cube = 12.0 * ESTIMATED_ASPECT_RATIO**2
    return max(1.0, float(round((parameters / per_layer_cube) ** (1 / 3))))


def estimated_transformer(w: Workload) -> tuple[TransformerArch, int] | None:
    """A decoder shaped like ``w``'s parameter count, and the tokens per sample its FLOPs
    imply (``flops = factor x 2 N x tokens``), when ``w`` reads as a transformer."""
    spec = w.model
    family = spec.resolved_family
    big = spec.family is None and w.parameters >= TRANSFORMER_ASSUMED_FROM_PARAMETERS
    if spec.architecture is not None or not (family == "transformer" or big):
        return None
    layers = _estimated_layers(w.parameters)
    hidden = (w.parameters / (12.0 * layers)) ** 0.5
    # Head counts of real models are multiples of 8 (or small powers of two), so that tensor
    # parallelism can split them.
    heads = max(1, round(hidden / ESTIMATED_HEAD_DIM))
    heads = max(8, round(heads / 8) * 8) if heads >= 8 else 2 ** round(math.log2(heads))
    arch = TransformerArch(layers=int(layers), hidden_size=heads * ESTIMATED_HEAD_DIM, heads=heads)
    tokens = spec.sequence_length
    if tokens is None:
        factor = w.training_flops_factor if w.training_job else 1.0
        tokens = max(1, round(w.flops_per_sample / (factor * 2.0 * w.parameters)))
    return arch, tokens


def _evaluation_flops(w: Workload, forward: float) -> float:
    """FLOPs of one model evaluation, which is what memory holds activations for: a diffusion
    model's inference sample runs the denoiser once per step (``forward`` counts them all, or
    a source's own number of evaluations in ``flops_per_sample``), each step's activations
    freed before the next, so no more than the architecture's one evaluation counts."""
    arch = w.model.architecture
    if w.training_job or not isinstance(arch, GivenArch) or arch.denoising_steps is None:
        return forward
    return min(forward, arch.forward_flops)


def _given_shape(w: Workload) -> Shape:
    """A model known only by parameters and FLOPs (or a CNN / diffusion entry)."""
    arch = w.model.architecture
    forward = w.forward_flops_per_sample
    el = _stored_element_bytes(w)
    given = w.model.activation_bytes_per_sample
    if given is None and isinstance(arch, GivenArch):
        given = arch.activation_bytes_per_sample
        if given is None and arch.forward_activations is not None and arch.type == "cnn":
            given = arch.forward_activations * CNN_STORED_PER_ACTIVATION * 2.0  # 16-bit
    if given is None:
        given = _evaluation_flops(w, forward) * ACTIVATION_BYTES_PER_FLOP[w.model.resolved_family]
    given *= el / 2
    layers = _estimated_layers(w.parameters)
    tokens = float(w.model.sequence_length or 1)
    return Shape(
        parameters=w.parameters,
        active_parameters=w.active_parameters,
        expert_parameters=0.0,
        experts=1,
        experts_per_token=1,
        transformer=False,
        layers=layers,
        hidden=(w.parameters / (12 * layers)) ** 0.5,
        tokens=tokens,
        heads=1.0,
        kv_heads=1.0,
        vocab=0.0,
        matmul_flops=forward,
        attention_flops=0.0,
        causal=False,
        layer_act_bytes=given,
        score_act_bytes=0.0,
        layer_input_bytes=given / layers,
        head_act_bytes=0.0,
        kv_bytes_per_token_16=2.0 * layers * (w.parameters / (12 * layers)) ** 0.5 * 2.0
        if w.is_llm_serving
        else 0.0,
        input_embedding_parameters=0.0,
        given_activation_bytes=given,
    )


def _tokens(w: Workload) -> int | None:
    """Tokens of one sample; LLM serving without a sequence length: the prompt."""
    tokens = w.model.tokens_per_sample
    if tokens is None and w.inference is not None:
        return w.inference.prompt_tokens
    return tokens


def shape_of(w: Workload) -> Shape:
    """The per-sample shape of ``w``; a given ``flops_per_sample`` rescales the shape's
    FLOPs (matrices and attention alike) to it."""
    t, tokens = w.model.transformer, _tokens(w)
    estimated = estimated_transformer(w) if t is None else None
    if estimated is not None:
        t, tokens = estimated
    if t is None or tokens is None:
        return _given_shape(w)
    s = _transformer_shape(w, t, float(tokens))
    if (w.model.flops_per_sample is not None or estimated) and w.inference is None:
        factor = w.forward_flops_per_sample / (s.matmul_flops + s.attention_flops)
        s = replace(
            s, matmul_flops=s.matmul_flops * factor, attention_flops=s.attention_flops * factor
        )
    return s
