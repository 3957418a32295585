"""How a workload is run: the training recipe and the serving setup, as workload fields.

Every field has a practitioner's default, and ``auto`` lets the planner
(:mod:`recommender.scoring.plan`) choose per offer; anything else the user writes is pinned
and respected. Sizes are per GPU unless a name says otherwise.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "AttentionKernel",
    "Checkpointing",
    "KvFormat",
    "LoRA",
    "Optimizer",
    "ServingRuntime",
    "ServingSpec",
    "Sharding",
    "TrainingRecipe",
    "WeightFormat",
]

AttentionKernel = Literal["auto", "flash", "sdpa", "eager"]
Checkpointing = Literal["auto", "none", "selective", "full"]
Optimizer = Literal["adamw", "adamw-8bit", "sgd-momentum", "adafactor"]
Sharding = Literal["auto", "none", "zero1", "zero2", "zero3"]
Offload = Literal["auto", "none", "optimizer"]
WeightFormat = Literal["fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"]
# Serving runtimes the engine models apart from the default (``ServingSpec.runtime``).
# ``llama.cpp-2024`` is llama.cpp between its CUDA graphs (ggml-org/llama.cpp#6766, May 2024)
# and their use with several GPUs (#13814, May 2025): the same kernels, launched one by one
# when a model is split over GPUs (``serving_step.uncaptured_decode_s``).
ServingRuntime = Literal["llama.cpp", "llama.cpp-2024", "vllm-v0"]
KvFormat = Literal["fp32", "bf16", "fp16", "fp8", "int8"]
ParallelDegree = Literal["auto"] | Annotated[int, Field(ge=1, le=1024)]
# Most tensor-parallel ranks a recipe may name: one NVL72 rack.
MAX_TENSOR_PARALLEL = 72
# Pipeline stages of one model copy on one instance (its GPUs: at most 16 in the catalog).
MAX_PIPELINE_STAGES = 16
# Sequences from which ``context_parallel: auto`` tries splitting one sequence over GPUs:
# NeMo's long-context recipes train Llama 3 at 16k and 64k tokens with context parallelism
# (docs.nvidia.com/nemo-framework/user-guide/latest/longcontext), the shortest of them.
CONTEXT_PARALLEL_MIN_AUTO_TOKENS = 16_384


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LoRA(_Spec):
    """Low-rank adapters (Hu et al. 2021) on the attention and MLP matrices; ``quantized_base``
    is QLoRA (Dettmers et al. 2023): the frozen base in 4-bit NF4."""

    rank: int = Field(ge=1, le=4096)
    targets: Literal["attention", "all"] = "all"
    quantized_base: bool = False


class TrainingRecipe(_Spec):
    """``training:``: precision of the optimizer state, optimizer, kernels, memory savers and
    parallelism. ``micro_batch`` is per GPU; ``global_batch`` is samples per optimizer step
    over every GPU (default: the workload's ``batch_size`` x data-parallel GPUs)."""

    optimizer: Optimizer = "adamw"
    master_weights: bool | None = Field(
        default=None,
        description="Keep an fp32 copy of the weights (mixed precision); default: true for "
        "16-bit and 8-bit training.",
    )
    attention: AttentionKernel = Field(
        default="auto",
        description="auto / sdpa: PyTorch SDPA's fused kernel (cuDNN's on Hopper and "
        "Blackwell, FlashAttention-2 elsewhere); flash: FlashAttention-2 everywhere (the "
        "flash-attn package or SDPA's flash backend); eager: the score matrix materialised.",
    )
    checkpointing: Checkpointing = "auto"
    micro_batch: int | None = Field(default=None, ge=1, le=1_000_000)
    global_batch: int | None = Field(default=None, ge=1, le=100_000_000)
    sharding: Sharding = "auto"
    tensor_parallel: ParallelDegree = "auto"
    pipeline_parallel: ParallelDegree = Field(
        default="auto",
        description="Pipeline stages across nodes (multi-node plans only; one node runs "
        "one stage per instance).",
    )
    context_parallel: ParallelDegree = Field(
        default="auto",
        description="GPUs one sequence is split over along its tokens (ring attention, for "
        "long-context training); auto tries it from "
        f"{CONTEXT_PARALLEL_MIN_AUTO_TOKENS:,} tokens per sequence.",
    )
    offload: Offload = "auto"
    lora: LoRA | None = None

    @model_validator(mode="after")
    def _sane(self) -> Self:
        if isinstance(self.tensor_parallel, int) and self.tensor_parallel > MAX_TENSOR_PARALLEL:
            raise ValueError(f"tensor_parallel must be <= {MAX_TENSOR_PARALLEL}")
        split = isinstance(self.context_parallel, int) and self.context_parallel > 1
        if split and self.attention == "eager":
            raise ValueError(
                "context_parallel splits attention with a fused kernel per ring step "
                "(flash or SDPA); it does not run with attention: eager"
            )
        if self.lora is not None and self.lora.quantized_base and self.sharding == "zero3":
            raise ValueError("QLoRA's 4-bit base is not sharded with zero3; use none or zero2")
        return self


class ServingSpec(_Spec):
    """``inference:`` for LLM serving: request shape, weight and KV-cache formats, engine.

    ``max_batch`` caps the sequences one model copy decodes at once (continuous batching);
    the KV-cache room left after the weights bounds it too. ``weights: int4`` is AWQ / GPTQ
    weight-only quantisation (compute in 16-bit), or W4A8 with the workload's ``precision``
    int8 / fp8 (activations quantised too: the matmuls run at that rate); ``fp8`` and ``fp4``
    use the chip's fp8 / fp4 tensor cores where it has them.
    """

    prompt_tokens: int = Field(default=512, ge=1, le=10_000_000)
    output_tokens: int = Field(default=256, ge=1, le=10_000_000)
    max_batch: int = Field(default=256, ge=1, le=100_000)
    weights: WeightFormat | None = None
    weight_bits: float | None = Field(
        default=None,
        gt=0,
        le=32,
        description="Bits per weight of the checkpoint, its quantisation scales included, "
        "where they differ from the format's usual (int4: 4.25, AWQ / GPTQ with a 16-bit scale "
        "and zero per 128 weights; llama.cpp's GGUF Q4_K_M: about 4.9)",
    )
    kv_cache: KvFormat | None = None
    tensor_parallel: ParallelDegree = "auto"
    pipeline_parallel: int = Field(
        default=1,
        ge=1,
        le=MAX_PIPELINE_STAGES,
        description="Layers of one model copy split over this many GPUs of an instance, each "
        "stage's layers and their KV cache on its own GPU, a token passing the stages in turn "
        "(llama.cpp's default --split-mode layer, Hugging Face Accelerate's device_map='auto', "
        "vLLM's --pipeline-parallel-size on one node). Stated, never chosen: 1 keeps a copy "
        "tensor parallel only",
    )
    max_output_tokens: int | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description="The generation cap (max_new_tokens). A static batch decodes until its "
        "longest output ends, so it runs about this many steps; unset, every output is "
        "output_tokens long",
    )
    engine: Literal["continuous", "static"] = Field(
        default="continuous",
        description="continuous batching (vLLM, SGLang, TGI, TensorRT-LLM) or static batches",
    )
    runtime: ServingRuntime | None = Field(
        default=None,
        description="The serving runtime, where it rather than the memory sets the decode "
        "rate: llama.cpp's CUDA matrix-vector kernels stream about as many bytes per "
        "multiprocessor cycle on every NVIDIA part, so on data-centre HBM parts (A100, H100) "
        "they reach well under the memory's bandwidth; llama.cpp-2024, its builds of May 2024 to "
        "May 2025, replays the decode as a CUDA graph on one GPU only, so split over several "
        "(pipeline_parallel) every kernel is launched from the host, ~27 us a layer a token; "
        "vLLM's V0 engine (before 0.11, and the "
        "fallback of 0.10 for models its V1 engine lacks, such as Whisper) leaves the GPU idle "
        "~4 ms between decode steps while its Python scheduler, input preparation and sampler "
        "run. Unset: an engine whose decode streams at the memory's rate with ~1 ms of host "
        "time a step (vLLM V1, SGLang, TensorRT-LLM, TGI, LMDeploy, gpt-fast)",
    )
    memory_utilization: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="Share of each GPU's memory the engine may take for the weights, its "
        "runtime and the KV cache (vLLM's gpu_memory_utilization, SGLang's "
        "mem_fraction_static); unset, vLLM's default 0.9. An engine that allocates only what "
        "it needs, such as llama.cpp, takes 1",
    )

    @model_validator(mode="after")
    def _cap_above_mean(self) -> Self:
        cap = self.max_output_tokens
        if cap is not None and cap < self.output_tokens:
            raise ValueError(
                f"max_output_tokens ({cap}) caps every output, so it cannot be below "
                f"output_tokens ({self.output_tokens}), their mean"
            )
        return self
