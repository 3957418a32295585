"""GPU kernels one eager decode step of a Python generate loop launches, per layer and per
step, counted from Hugging Face transformers' Llama on the meta device: every ATen operator
call that reaches a device kernel (views, reshapes and other metadata-only operators excluded,
as ``cnn_kernels.py`` counts them), one sequence, one new token after a 16-token prompt, with
the KV cache. ``scaled_dot_product_attention`` counts as the one fused kernel it is on a GPU
(on the meta device it would decompose into its math path).

Layers are told apart from the rest of the step by counting a 1-layer and a 3-layer model:
transformers 5.24.0 with torch 2.13.0 gives 40 kernels per layer (4 casts and 9 multiplies
of the unfused RMSNorm and rotary embedding among them, 7 matrix multiplies, 1 attention)
and 23 outside the layers (embedding, rotary tables, final norm, output head). At the
calibration's 30 us a launch (``kernel_cpu_s.eager``), Llama-2-7B's 1,303 launches are the
39 ms eager step the PyTorch gpt-fast blog measured, the figure behind ``priors.json``'s
``serving_step_s.eager`` (its note says what modelling the step by its launches did).

    pip install torch transformers && python benchmarks/data/decode_kernels.py
"""

from __future__ import annotations

from collections import Counter
from typing import Any
from unittest.mock import patch

import torch
import torch.nn.functional as functional
from cnn_kernels import Count

# Llama-2-7B's shape (the layer count is varied; the per-layer count does not depend on it).
LLAMA_2_7B = {
    "hidden_size": 4096,
    "intermediate_size": 11008,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "vocab_size": 32000,
}
PROMPT_TOKENS = 16


def decode_step(layers: int) -> Counter[str]:
    """Kernels of one decode step of a ``layers``-layer Llama, by operator."""
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(num_hidden_layers=layers, **LLAMA_2_7B)
    config._attn_implementation = "sdpa"
    with torch.device("meta"):
        model = LlamaForCausalLM(config).eval().half()
    count = Count()

    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *a: Any, **kw: Any):  # type: ignore[no-untyped-def]
        count.ops["scaled_dot_product_attention"] += 1
        return torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)

    with torch.device("meta"), torch.no_grad():
        prompt = torch.zeros(1, PROMPT_TOKENS, dtype=torch.long)
        cache = model(input_ids=prompt, past_key_values=DynamicCache(config=config)).past_key_values
        with patch.object(functional, "scaled_dot_product_attention", attention), count:
            model(
                input_ids=torch.zeros(1, 1, dtype=torch.long),
                past_key_values=cache,
                cache_position=torch.tensor([PROMPT_TOKENS]),
            )
    return count.ops


def main() -> None:
    one, three = decode_step(1), decode_step(3)
    per_layer = three.copy()
    per_layer.subtract(one)
    layer_total = sum(per_layer.values()) // 2
    outside = sum(one.values()) - layer_total
    by_op = ", ".join(f"{op} {n // 2}" for op, n in per_layer.most_common() if n)
    print(f"per layer {layer_total} kernels ({by_op}); outside the layers {outside}")


if __name__ == "__main__":
    main()
