"""Reading a local Hugging Face ``config.json`` (never the network) into an exact architecture.

``load_hf_config(path)`` maps the keys each ``model_type`` uses (``num_key_value_heads``,
``moe_intermediate_size``, ``first_k_dense_replace``, ``d_kv``, ...) onto
:mod:`recommender.models.arch`. Whether the MLP is gated follows from the model type and its
activation: the Llama family (Llama, Mistral, Mixtral, Qwen, Gemma, Phi-3, DeepSeek) always
gates (SwiGLU with ``silu``, GeGLU with ``gelu*``), T5 gates when ``feed_forward_proj`` is
``gated-*`` (T5 v1.1, FLAN-T5), and GPT-2, GPT-J, OPT, BERT, ViT and Whisper never do. A key
the mapping needs and the file lacks is an :class:`HFConfigError` naming the key and the file;
every such problem is reported at once. Keys a config may omit take the default of the
``transformers`` config class of that model type (``tie_word_embeddings``, Gemma 3's
``vocab_size``), each named below.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from recommender.catalog.problems import Problem, ProblemsError, display_path
from recommender.models.arch import Architecture

__all__ = [
    "SUPPORTED_MODEL_TYPES",
    "HFConfigError",
    "architecture_from_hf_config",
    "load_hf_config",
]

# Hugging Face writes `config.json` into a model directory.
CONFIG_FILE = "config.json"
# transformers' OPTLearnedPositionalEmbedding keeps 2 rows before position 0.
OPT_POSITION_OFFSET = 2
# transformers' Gemma3TextConfig defaults, used when the multimodal text_config omits them.
GEMMA3_VOCAB_SIZE = 262_208
GEMMA3_MAX_POSITIONS = 131_072
# transformers' T5Config default number of relative-position buckets.
T5_RELATIVE_BUCKETS = 32
# transformers' BertConfig default number of token types (segments A and B).
BERT_TOKEN_TYPES = 2
# Dropout rates when a config omits them: transformers' defaults (BertConfig
# hidden_dropout_prob, GPT2Config resid_pdrop, OPTConfig dropout, T5Config dropout_rate 0.1;
# GPTJConfig resid_pdrop, WhisperConfig dropout, ViTConfig hidden_dropout_prob 0.0).
DEFAULT_DROPOUT = {"bert": 0.1, "gpt2": 0.1, "opt": 0.1, "t5": 0.1}
# Whisper's front end: two 1-D convolutions of kernel 3 (Radford et al. 2022, section 2.2).
WHISPER_CONV_KERNEL = 3
# tie_word_embeddings when a config omits it: the default of each transformers config class.
_TIED_BY_DEFAULT = {"gemma": True, "gemma2": True, "gemma3_text": True, "gpt2": True}
_ADAPTER: TypeAdapter[Architecture] = TypeAdapter(Architecture)
_MISSING = object()


class HFConfigError(ProblemsError):
    """A Hugging Face config could not be read or mapped onto an architecture."""

    what = "the Hugging Face config"


class _Keys:
    """Typed reads of one config mapping; every missing or mistyped key is collected."""

    def __init__(self, data: Mapping[str, Any], file: str, model_type: str, prefix: str = ""):
        self.data, self.file, self.model_type, self.prefix = data, file, model_type, prefix
        self.problems: list[Problem] = []

    def problem(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, None, self.prefix + key, message))

    def integer(self, key: str, default: Any = _MISSING) -> int:
        value = self.data.get(key, default)
        if value is _MISSING:
            self.problem(key, f"required key is missing (model_type {self.model_type!r})")
            return 1
        if value is None and default is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.problem(key, f"must be a non-negative integer (got {value!r})")
            return 1
        return value

    def optional_integer(self, key: str) -> int | None:
        return self.integer(key, None) or None

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            self.problem(key, f"must be true or false (got {value!r})")
            return default
        return value

    def dropout(self, key: str, default: float) -> bool:
        """Whether training keeps dropout masks: the config's rate (or its class default) > 0."""
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            self.problem(key, f"must be a non-negative number (got {value!r})")
            return False
        return value > 0

    def text(self, key: str, default: str) -> str:
        value = self.data.get(key, default)
        return value if isinstance(value, str) else default

    def tied(self) -> bool:
        return self.flag("tie_word_embeddings", _TIED_BY_DEFAULT.get(self.model_type, False))

    def unsupported(self, key: str, value: object, why: str) -> None:
        self.problem(key, f"{value!r} is not supported: {why}")


Fields = dict[str, Any]


def _llama_family(k: _Keys) -> Fields:
    """Llama, Mistral, Qwen 2 / 3, Gemma 1-3, Phi-3: pre-norm RMSNorm decoders, gated MLP."""
    heads = k.integer("num_attention_heads")
    gemma3 = k.model_type == "gemma3_text"
    fields: Fields = {
        "type": "decoder",
        "layers": k.integer("num_hidden_layers"),
        "hidden_size": k.integer("hidden_size"),
        "heads": heads,
        "kv_heads": k.optional_integer("num_key_value_heads") or heads,
        "head_dim": k.optional_integer("head_dim"),
        "intermediate_size": k.integer("intermediate_size"),
        "mlp": "gated",
        "vocab_size": k.integer("vocab_size", GEMMA3_VOCAB_SIZE if gemma3 else _MISSING),
        "tied_embeddings": k.tied(),
        "norm": "rmsnorm",
        "max_sequence_length": k.integer(
            "max_position_embeddings", GEMMA3_MAX_POSITIONS if gemma3 else None
        )
        or None,
    }
    # Qwen 2 puts biases on Q, K and V only; Llama-style configs may ask for them.
    fields["qkv_bias"] = k.model_type in ("qwen2", "qwen2_moe") or k.flag("attention_bias", False)
    return fields


def _sparse_every_layer(k: _Keys) -> None:
    if k.integer("decoder_sparse_step", 1) != 1:
        k.unsupported("decoder_sparse_step", k.data["decoder_sparse_step"], "MoE on every layer")
    if k.data.get("mlp_only_layers"):
        k.unsupported("mlp_only_layers", k.data["mlp_only_layers"], "dense layers only first")


def _mixtral(k: _Keys) -> Fields:
    fields = _llama_family(k)
    fields["experts"] = k.integer("num_local_experts")
    fields["experts_per_token"] = k.integer("num_experts_per_tok")
    return fields


def _qwen_moe(k: _Keys) -> Fields:
    fields = _llama_family(k)
    _sparse_every_layer(k)
    expert = k.integer("moe_intermediate_size")
    fields.update(
        experts=k.integer("num_experts"),
        experts_per_token=k.integer("num_experts_per_tok"),
        expert_intermediate_size=expert,
    )
    shared = k.integer("shared_expert_intermediate_size", 0) if k.model_type == "qwen2_moe" else 0
    if shared % max(expert, 1):
        k.unsupported("shared_expert_intermediate_size", shared, "a multiple of the expert size")
    fields["shared_experts"] = shared // max(expert, 1)
    return fields


def _deepseek(k: _Keys) -> Fields:
    """DeepSeek-V2 / V3 / R1: multi-head latent attention, dense first layers, then MoE."""
    fields = _llama_family(k)
    if k.integer("moe_layer_freq", 1) != 1:
        k.unsupported("moe_layer_freq", k.data["moe_layer_freq"], "MoE on every later layer")
    fields.update(
        kv_heads=fields["heads"],
        experts=k.integer("n_routed_experts"),
        experts_per_token=k.integer("num_experts_per_tok"),
        shared_experts=k.integer("n_shared_experts", 0),
        expert_intermediate_size=k.integer("moe_intermediate_size"),
        dense_layers=k.integer("first_k_dense_replace", 0),
        attention="mla",
        q_lora_rank=k.integer("q_lora_rank", None),
        kv_lora_rank=k.integer("kv_lora_rank"),
        qk_rope_head_dim=k.integer("qk_rope_head_dim"),
        qk_nope_head_dim=k.integer("qk_nope_head_dim"),
        v_head_dim=k.integer("v_head_dim"),
        head_dim=None,
    )
    return fields


def _gpt2(k: _Keys) -> Fields:
    hidden, positions = k.integer("n_embd"), k.integer("n_positions")
    return {
        "type": "decoder",
        "layers": k.integer("n_layer"),
        "hidden_size": hidden,
        "heads": k.integer("n_head"),
        "intermediate_size": k.optional_integer("n_inner") or 4 * hidden,
        "vocab_size": k.integer("vocab_size"),
        "tied_embeddings": k.tied(),
        "bias": True,
        "learned_positions": positions if k.model_type == "gpt2" else 0,  # GPT-J: rotary
        "max_sequence_length": positions,
        "dropout": k.dropout("resid_pdrop", DEFAULT_DROPOUT.get(k.model_type, 0.0)),
    }


def _opt(k: _Keys) -> Fields:
    hidden, positions = k.integer("hidden_size"), k.integer("max_position_embeddings")
    projection = k.integer("word_embed_proj_dim", hidden)
    if projection != hidden:
        k.unsupported("word_embed_proj_dim", projection, "embeddings as wide as hidden_size")
    return {
        "type": "decoder",
        "layers": k.integer("num_hidden_layers"),
        "hidden_size": hidden,
        "heads": k.integer("num_attention_heads"),
        "intermediate_size": k.integer("ffn_dim"),
        "vocab_size": k.integer("vocab_size"),
        "tied_embeddings": k.flag("tie_word_embeddings", True),
        "bias": k.flag("enable_bias", True),
        "learned_positions": positions + OPT_POSITION_OFFSET,
        "max_sequence_length": positions,
        "dropout": k.dropout("dropout", DEFAULT_DROPOUT["opt"]),
    }


def _bert(k: _Keys) -> Fields:
    hidden, positions = k.integer("hidden_size"), k.integer("max_position_embeddings")
    token_types = k.integer("type_vocab_size", BERT_TOKEN_TYPES)
    pooler = hidden * hidden + hidden
    return {
        "type": "encoder",
        "layers": k.integer("num_hidden_layers"),
        "hidden_size": hidden,
        "heads": k.integer("num_attention_heads"),
        "intermediate_size": k.integer("intermediate_size"),
        "vocab_size": k.integer("vocab_size"),
        "tied_embeddings": True,
        "bias": True,
        "learned_positions": positions,
        "max_sequence_length": positions,
        "extra_parameters": float(token_types * hidden + pooler),
        "dropout": k.dropout("hidden_dropout_prob", DEFAULT_DROPOUT["bert"]),
    }


def _t5(k: _Keys) -> Fields:
    layers, heads = k.integer("num_layers"), k.integer("num_heads")
    buckets = k.integer("relative_attention_num_buckets", T5_RELATIVE_BUCKETS)
    return {
        "type": "encoder-decoder",
        "layers": layers,
        "decoder_layers": k.optional_integer("num_decoder_layers") or layers,
        "hidden_size": k.integer("d_model"),
        "heads": heads,
        "head_dim": k.integer("d_kv"),
        "intermediate_size": k.integer("d_ff"),
        "mlp": "gated" if k.text("feed_forward_proj", "relu").startswith("gated-") else "plain",
        "vocab_size": k.integer("vocab_size"),
        "tied_embeddings": k.flag("tie_word_embeddings", True),
        "norm": "rmsnorm",
        "max_sequence_length": k.optional_integer("n_positions"),
        "extra_parameters": float(2 * buckets * heads),  # one bias table in each stack
        "dropout": k.dropout("dropout_rate", DEFAULT_DROPOUT["t5"]),
    }


def _same(k: _Keys, first: str, second: str) -> int:
    value = k.integer(first)
    if k.integer(second, value) != value:
        k.unsupported(second, k.data[second], f"the same value as {first}")
    return value


def _whisper(k: _Keys) -> Fields:
    hidden, mels = k.integer("d_model"), k.integer("num_mel_bins")
    conv = mels * hidden * WHISPER_CONV_KERNEL + hidden * hidden * WHISPER_CONV_KERNEL + 2 * hidden
    source = k.integer("max_source_positions")  # the encoder always runs every position
    sinusoids = source * hidden  # the encoder's fixed table, stored
    target = k.integer("max_target_positions")
    return {
        "type": "encoder-decoder",
        "layers": k.integer("encoder_layers"),
        "decoder_layers": k.integer("decoder_layers"),
        "hidden_size": hidden,
        "heads": _same(k, "encoder_attention_heads", "decoder_attention_heads"),
        "intermediate_size": _same(k, "encoder_ffn_dim", "decoder_ffn_dim"),
        "vocab_size": k.integer("vocab_size"),
        "tied_embeddings": k.flag("tie_word_embeddings", True),
        "bias": True,
        "learned_positions": target,
        "max_sequence_length": target,
        "source_length": source,
        "extra_parameters": float(conv + sinusoids),
        "dropout": k.dropout("dropout", 0.0),
    }


def _vit(k: _Keys) -> Fields:
    labels = k.data.get("id2label")
    return {
        "type": "vit",
        "image_size": k.integer("image_size"),
        "patch_size": k.integer("patch_size"),
        "channels": k.integer("num_channels", 3),
        "layers": k.integer("num_hidden_layers"),
        "hidden_size": k.integer("hidden_size"),
        "heads": k.integer("num_attention_heads"),
        "intermediate_size": k.integer("intermediate_size"),
        "num_classes": len(labels) if isinstance(labels, Mapping) else 0,
        "dropout": k.dropout("hidden_dropout_prob", 0.0),
    }


_MAPPERS: dict[str, Callable[[_Keys], Fields]] = {
    **dict.fromkeys(
        ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "phi3"),
        _llama_family,
    ),
    "mixtral": _mixtral,
    "qwen2_moe": _qwen_moe,
    "qwen3_moe": _qwen_moe,
    "deepseek_v2": _deepseek,
    "deepseek_v3": _deepseek,
    "gpt2": _gpt2,
    "gptj": _gpt2,
    "opt": _opt,
    "bert": _bert,
    "t5": _t5,
    "whisper": _whisper,
    "vit": _vit,
}
# gemma3 is multimodal: its language model is the text_config (the vision tower is left out).
SUPPORTED_MODEL_TYPES: tuple[str, ...] = (*sorted(_MAPPERS), "gemma3")


def _keys_for(config: Mapping[str, Any], file: str) -> _Keys:
    model_type = config.get("model_type")
    if not isinstance(model_type, str):
        raise HFConfigError([Problem(file, None, "model_type", "required key is missing")])
    if model_type == "gemma3":
        text = config.get("text_config")
        if not isinstance(text, Mapping):
            raise HFConfigError([Problem(file, None, "text_config", "required key is missing")])
        return _Keys(text, file, "gemma3_text", prefix="text_config.")
    if model_type not in _MAPPERS:
        supported = ", ".join(SUPPORTED_MODEL_TYPES)
        message = f"model_type {model_type!r} is not supported (supported: {supported})"
        raise HFConfigError([Problem(file, None, "model_type", message)])
    return _Keys(config, file, model_type)


def architecture_from_hf_config(
    config: Mapping[str, Any], *, file: str = CONFIG_FILE
) -> Architecture:
    """The :data:`~recommender.models.arch.Architecture` a parsed ``config.json`` describes."""
    keys = _keys_for(config, file)
    fields = _MAPPERS[keys.model_type](keys)
    if keys.problems:
        raise HFConfigError(keys.problems)
    try:
        return _ADAPTER.validate_python({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise HFConfigError(
            Problem(file, None, ".".join(str(p) for p in err["loc"][1:]), err["msg"])
            for err in exc.errors(include_url=False)
        ) from exc


def load_hf_config(path: str | Path) -> Architecture:
    """Read ``path`` (a ``config.json``, or a model directory holding one) from local disk."""
    file = Path(path)
    if file.is_dir():
        file = file / CONFIG_FILE
    shown = display_path(file)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HFConfigError(
            [Problem(shown, None, "", f"cannot read file: {exc.strerror}")]
        ) from exc
    except json.JSONDecodeError as exc:
        raise HFConfigError([Problem(shown, exc.lineno, "", f"invalid JSON: {exc.msg}")]) from exc
    if not isinstance(data, dict):
        raise HFConfigError([Problem(shown, 1, "", "expected a JSON object")])
    return architecture_from_hf_config(data, file=shown)
