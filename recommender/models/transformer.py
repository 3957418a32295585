"""The transformer architecture, counted matrix by matrix (see :mod:`recommender.models.arch`
for the sources of each count and FLOP formula)."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DEFAULT_FFN_MULTIPLIER",
    "DEFAULT_HEAD_DIM",
    "FLOP_PER_MAC",
    "ArchBase",
    "Count",
    "Positive",
    "PositiveInt",
    "TransformerArch",
]

# Ceilings far above any real model that keep every count the shape formulas multiply (up to
# five dimensions, then converted to float) finite: a request with a 1e304 FFN multiplier or a
# 400-digit hidden size is a 422 naming the field, not an overflow inside the arithmetic.
MAX_DIMENSION = 2**31 - 1
MAX_FIGURE = 1e30

Positive = Annotated[float, Field(gt=0, le=MAX_FIGURE)]
PositiveInt = Annotated[int, Field(ge=1, le=MAX_DIMENSION)]
Count = Annotated[int, Field(ge=0, le=MAX_DIMENSION)]

# Heads when a transformer gives none: d_head = 64 (BERT, GPT-2, GPT-3 use it).
DEFAULT_HEAD_DIM = 64
# d_ff = 4 d_model in the original transformer (Vaswani et al. 2017, section 3.3).
DEFAULT_FFN_MULTIPLIER = 4.0
# Multiply-accumulate = 2 FLOPs.
FLOP_PER_MAC = 2.0


class ArchBase(BaseModel):
    """Every architecture: unknown fields refused, immutable (shapes are cached)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _mlp_matrices(mlp: str) -> int:
    """Weight matrices of one FFN: gate, up and down (gated) or up and down (plain)."""
    return 3 if mlp == "gated" else 2


class TransformerArch(ArchBase):
    """A transformer by shape: decoder (GPT, Llama), encoder (BERT) or encoder-decoder (T5).

    ``kind`` is the older spelling of ``type``; ``ffn_multiplier`` (d_ff / d_model) the older
    spelling of ``intermediate_size``. ``sequence_length`` is the tokens of one sample in the
    workload (it may also be given as ``model.sequence_length``).
    """

    type: Literal["decoder", "encoder", "encoder-decoder"] = "decoder"
    layers: PositiveInt
    decoder_layers: PositiveInt | None = None
    hidden_size: PositiveInt
    heads: PositiveInt | None = Field(default=None, description="Default: hidden_size / 64.")
    kv_heads: PositiveInt | None = Field(default=None, description="GQA / MQA; default heads.")
    head_dim: PositiveInt | None = Field(default=None, description="Default hidden/heads.")
    intermediate_size: PositiveInt | None = None
    ffn_multiplier: Positive | None = None
    mlp: Literal["gated", "plain"] = "plain"
    vocab_size: Count = 0
    tied_embeddings: bool = False
    bias: bool = False
    qkv_bias: bool = False
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    dropout: bool = Field(
        default=False, description="Training keeps dropout masks (BERT, GPT-2, T5 recipes)."
    )
    learned_positions: Count = 0
    max_sequence_length: PositiveInt | None = None
    sequence_length: PositiveInt | None = None
    source_length: PositiveInt | None = Field(
        default=None,
        description="Encoder-decoder: positions the encoder always runs, whatever the input "
        "(Whisper's 1,500 audio frames: max_source_positions); unset, it reads the prompt.",
    )
    experts: PositiveInt = 1
    experts_per_token: PositiveInt = 1
    shared_experts: Count = 0
    expert_intermediate_size: PositiveInt | None = None
    dense_layers: Count = 0
    attention: Literal["mha", "mla"] = "mha"
    q_lora_rank: Count = 0
    kv_lora_rank: PositiveInt | None = None
    qk_rope_head_dim: PositiveInt | None = None
    qk_nope_head_dim: PositiveInt | None = None
    v_head_dim: PositiveInt | None = None
    extra_parameters: Annotated[float, Field(ge=0, le=MAX_FIGURE)] = 0.0

    @model_validator(mode="before")
    @classmethod
    def _old_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict) and "kind" in data:
            data = dict(data)
            kind = data.pop("kind")
            if "type" in data and data["type"] != kind:
                raise ValueError(f"kind ({kind}) and type ({data['type']}) disagree")
            data["type"] = kind
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        problems: list[str] = []
        if self.intermediate_size is not None and self.ffn_multiplier is not None:
            problems.append("give intermediate_size or ffn_multiplier, not both")
        if self.head_dim is None and self.hidden_size % self.n_heads:
            problems.append(
                f"heads ({self.n_heads}) must divide hidden_size ({self.hidden_size}), "
                "or give head_dim"
            )
        if self.n_heads % self.n_kv_heads:
            problems.append(f"kv_heads ({self.n_kv_heads}) must divide heads ({self.n_heads})")
        if self.experts_per_token > self.experts:
            problems.append(
                f"experts_per_token ({self.experts_per_token}) exceeds experts ({self.experts})"
            )
        if self.dense_layers >= self.layers and self.experts > 1:
            problems.append(f"dense_layers ({self.dense_layers}) leaves no MoE layer")
        if self.decoder_layers is not None and self.type != "encoder-decoder":
            problems.append("decoder_layers is for type encoder-decoder")
        if self.source_length is not None and self.type != "encoder-decoder":
            problems.append("source_length is for type encoder-decoder")
        if self.attention == "mla" and None in (
            self.kv_lora_rank,
            self.qk_rope_head_dim,
            self.qk_nope_head_dim,
            self.v_head_dim,
        ):
            problems.append(
                "attention mla needs kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim and "
                "v_head_dim"
            )
        if problems:
            raise ValueError("; ".join(problems))
        return self

    # -- shape ---------------------------------------------------------------------------
    @property
    def n_heads(self) -> int:
        return self.heads or max(1, self.hidden_size // DEFAULT_HEAD_DIM)

    @property
    def n_kv_heads(self) -> int:
        return self.kv_heads or self.n_heads

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden_size // self.n_heads

    @property
    def d_ff(self) -> int:
        if self.intermediate_size is not None:
            return self.intermediate_size
        return round((self.ffn_multiplier or DEFAULT_FFN_MULTIPLIER) * self.hidden_size)

    @property
    def d_expert(self) -> int:
        return self.expert_intermediate_size or self.d_ff

    @property
    def is_moe(self) -> bool:
        return self.experts > 1

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    @property
    def n_decoder_layers(self) -> int:
        """Layers of the decoder stack (0 for an encoder)."""
        if self.type == "encoder":
            return 0
        if self.type == "encoder-decoder":
            return self.decoder_layers or self.layers
        return self.layers

    @property
    def total_layers(self) -> int:
        """Every block a token of a training sample passes through (both stacks)."""
        return self.layers + (self.n_decoder_layers if self.type == "encoder-decoder" else 0)

    @property
    def q_width(self) -> int:
        """Width of the concatenated query heads (= the attention output width)."""
        if self.attention == "mla":
            return self.n_heads * self._mla_qk_dim
        return self.n_heads * self.d_head

    @property
    def kv_width(self) -> int:
        """Width of K (and of V) per token, over every KV head."""
        return self.n_kv_heads * self.d_head

    @property
    def _mla_qk_dim(self) -> int:
        assert self.qk_nope_head_dim is not None and self.qk_rope_head_dim is not None
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    # -- parameters ----------------------------------------------------------------------
    def _attention_parameters(self) -> float:
        h = self.hidden_size
        if self.attention == "mla":
            return self._mla_parameters()
        q, kv = self.n_heads * self.d_head, self.kv_width
        weights = h * q + 2 * h * kv + q * h
        biases = (q + 2 * kv + h) if self.bias else (q + 2 * kv) if self.qkv_bias else 0
        return float(weights + biases)

    def _mla_parameters(self) -> float:
        """DeepSeek-V2 section 2.1: low-rank Q (optional) and KV compression, decoupled RoPE."""
        assert self.kv_lora_rank is not None and self.v_head_dim is not None
        assert self.qk_rope_head_dim is not None
        h, heads, qk = self.hidden_size, self.n_heads, self._mla_qk_dim
        r_q, r_kv = self.q_lora_rank, self.kv_lora_rank
        q = h * r_q + r_q + r_q * heads * qk if r_q else h * heads * qk  # + q_a_layernorm
        kv_a = h * (r_kv + self.qk_rope_head_dim) + r_kv  # + kv_a_layernorm
        kv_b = r_kv * heads * (self.qk_nope_head_dim or 0) + r_kv * heads * self.v_head_dim
        out = heads * self.v_head_dim * h
        return float(q + kv_a + kv_b + out)

    def _mlp_parameters(self, d_ff: int) -> float:
        h, m = self.hidden_size, _mlp_matrices(self.mlp)
        biases = ((m - 1) * d_ff + h) if self.bias else 0
        return float(m * h * d_ff + biases)

    def _norm_parameters(self) -> float:
        return float(self.hidden_size * (2 if self.norm == "layernorm" else 1))

    def _ffn_parameters(self, moe: bool, active: bool) -> float:
        if not moe:
            return self._mlp_parameters(self.d_ff)
        routed = self.experts_per_token if active else self.experts
        router = float(self.hidden_size * self.experts)
        return (routed + self.shared_experts) * self._mlp_parameters(self.d_expert) + router

    def _first_stack_parameters(self, active: bool) -> float:
        """The ``layers`` blocks (a decoder's, or an encoder-decoder's encoder) and their
        final norm."""
        attn, norm = self._attention_parameters(), self._norm_parameters()
        dense_layers = self.layers - self.moe_layers
        own = dense_layers * self._ffn_parameters(False, active)
        own += self.moe_layers * self._ffn_parameters(True, active)
        return own + self.layers * (attn + 2 * norm) + norm

    def _decoder_stack_parameters(self, active: bool) -> float:
        """An encoder-decoder's decoder blocks (self-attention, cross-attention, FFN, three
        norms) and final norm; 0 for the other types."""
        if self.type != "encoder-decoder":
            return 0.0
        attn, norm = self._attention_parameters(), self._norm_parameters()
        ffn = self._ffn_parameters(self.is_moe, active)
        return self.n_decoder_layers * (2 * attn + ffn + 3 * norm) + norm

    def _stack_parameters(self, active: bool) -> float:
        return self._first_stack_parameters(active) + self._decoder_stack_parameters(active)

    def _embedding_parameters(self) -> float:
        h = self.hidden_size
        table = self.vocab_size * h
        head = 0 if self.tied_embeddings or self.type == "encoder" else self.vocab_size * h
        return float(table + head + self.learned_positions * h)

    @cached_property
    def non_embedding_parameters(self) -> float:
        return self._stack_parameters(active=False)

    @cached_property
    def parameters(self) -> float:
        """Every weight, as the published counts give it (embeddings included)."""
        return self._stack_parameters(False) + self._embedding_parameters() + self.extra_parameters

    @cached_property
    def active_parameters(self) -> float:
        """Weights one token passes through (MoE: the routed and shared experts only)."""
        return self._stack_parameters(True) + self._embedding_parameters() + self.extra_parameters

    @cached_property
    def expert_parameters(self) -> float:
        """Weights of the routed experts (what expert parallelism divides); 0 when dense."""
        enc_dec = self.type == "encoder-decoder" and self.is_moe
        layers = self.moe_layers + (self.n_decoder_layers if enc_dec else 0)
        return layers * self.experts * self._mlp_parameters(self.d_expert)

    # -- FLOPs ---------------------------------------------------------------------------
    def matmul_flops_per_token(self) -> float:
        """Forward FLOPs of the weight matrices one token passes through, logits included
        (norms, biases and the embedding lookup are not matrix products)."""
        stack = self._stack_parameters(active=True)
        return FLOP_PER_MAC * (stack + self.vocab_size * self.hidden_size)

    def attention_flops_per_token(
        self, sequence_length: int | None = None, causal_skip: bool = False
    ) -> float:
        """Score (Q K^T) and value (A V) products per token over every layer: 4 s d_attn
        per layer for the whole score matrix; half of it when a causal kernel skips the
        masked upper triangle (FlashAttention does, eager attention does not)."""
        per_layer = self._attention_flops_per_layer(sequence_length or self.sequence_length or 0)
        causal = self.type != "encoder"
        share = 0.5 if causal_skip and causal else 1.0
        cross = self.n_decoder_layers if self.type == "encoder-decoder" else 0
        return per_layer * (self.total_layers + cross) * share

    def _attention_flops_per_layer(self, sequence_length: int) -> float:
        """Score and value products of one layer, per token attending ``sequence_length``."""
        v_width = self.n_heads * (self.v_head_dim or self.d_head)
        return FLOP_PER_MAC * sequence_length * (self.q_width + v_width)

    def forward_flops_per_token(
        self, sequence_length: int | None = None, causal_skip: bool = False
    ) -> float:
        return self.matmul_flops_per_token() + self.attention_flops_per_token(
            sequence_length, causal_skip
        )

    # -- encoder-decoder generation ------------------------------------------------------
    def decode_step_parameters(self, active: bool = False) -> float:
        """Weights of one step of an encoder-decoder's generation loop: the decoder blocks and
        the output head (the encoder ran once, before the loop). ``active``: only the experts
        one token is routed to (its FLOPs); else every expert (what a batch's step streams)."""
        return self._decoder_stack_parameters(active) + self.vocab_size * self.hidden_size

    def encoder_matmul_flops_per_token(self) -> float:
        """Forward FLOPs of the encoder's weight matrices per source position, with the
        K and V projections every decoder layer's cross-attention makes of it."""
        cross_kv = self.n_decoder_layers * 2 * self.hidden_size * self.kv_width
        return FLOP_PER_MAC * (self._first_stack_parameters(active=True) + cross_kv)

    def encoder_attention_flops_per_token(self, source_length: int) -> float:
        """The encoder's (bidirectional) score and value products per source position."""
        return self._attention_flops_per_layer(source_length) * self.layers

    def cross_kv_elements_per_source_token(self) -> float:
        """Cross-attention K and V one sequence keeps per source position, every decoder
        layer (an encoder-decoder's decode steps read them all, each step)."""
        return float(2 * self.n_decoder_layers * self.kv_width)

    # -- serving state -------------------------------------------------------------------
    def kv_elements_per_token(self) -> float:
        """Cached elements per token of one sequence (0 for an encoder)."""
        layers = self.n_decoder_layers
        if self.attention == "mla":
            assert self.kv_lora_rank is not None and self.qk_rope_head_dim is not None
            return float(layers * (self.kv_lora_rank + self.qk_rope_head_dim))
        return float(2 * layers * self.kv_width)
