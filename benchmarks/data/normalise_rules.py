"""The vocabularies and lookup tables that map published rows onto canonical names.

`normalise.py` applies these tables; keeping them here leaves that script with the row logic
only. Every table is ordered: the first pattern that matches wins, so a specific pattern sits
above the general one it would otherwise shadow (``l40s`` above ``l40`` above ``l4``).
Patterns are regular expressions searched in the lower-cased source text.
"""

from __future__ import annotations

import re
from typing import TypeVar

_V = TypeVar("_V")

__all__ = [
    "ACCELERATOR_RULES",
    "BATCHINGS",
    "CHECKPOINTINGS",
    "CHECKPOINTING_RULES",
    "DLE_CONVNET_BATCH",
    "DLE_IMAGE_SIZE",
    "EXECUTIONS",
    "INTERCONNECTS",
    "METRICS",
    "MLPERF_LLM_REQUESTS",
    "MLPERF_MAX_OUTPUT_TOKENS",
    "MLPERF_STATIC_BATCHES",
    "MLPERF_TOKEN_RESULTS",
    "MLPERF_VLLM_RUNS",
    "MLPERF_W4A8_FORMATS",
    "MODEL_RULES",
    "NO_NVLINK",
    "ONE_COPY_GROUPS",
    "PRECISIONS",
    "PRECISION_RULES",
    "SCOPES",
    "SHARDINGS",
    "SHARDING_RULES",
    "SOURCE_PREFIXES",
    "TORCHTITAN_SEQ_LEN",
    "UNPINNED_ACCELERATORS",
    "UNSTATED_POWER_CAP",
    "WORKLOADS",
    "XGMI_ONLY",
    "first_match",
]

# Closed vocabularies of the normalised table (the test checks every row against them).
WORKLOADS = ("training", "inference", "llm-serving", "llm-decode-bs1", "time-to-train")
EXECUTIONS = ("eager", "compiled", "engine")
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "unknown")
# "xgmi" is AMD Infinity Fabric between Instinct GPUs: neither NVLink nor PCIe.
INTERCONNECTS = ("nvlink", "nvswitch", "pcie", "xgmi", "infiniband", "ethernet", "unknown")
METRICS = (
    "samples_per_s",
    "tokens_per_s",
    "output_tokens_per_s",
    "requests_per_s",
    "minutes_to_train",
    "seconds_latency",
)
SCOPES = ("system", "per_gpu", "per_stream")
# How a serving engine batched: blank for in flight (continuous) or not serving.
BATCHINGS = ("", "static")

# Per-GPU batch of NVIDIA DeepLearningExamples' ConvNets training benchmarks, whose README
# tables state none: ``launch.py --mode benchmark_training --platform P --precision X`` takes
# ``batch_size`` (per GPU: multiproc.py starts one process per GPU, so 8 GPUs run 8 of these)
# from PyTorch/Classification/ConvNets/configs.yml (NVIDIA/DeepLearningExamples@0fadac23d764
# 429ed0da54dc8c5a31677dc923d5, ``models.<arch>.<platform>.<precision>.batch_size``).
# Keys: (model, platform, precision); platform DGXA100 = A100-SXM4-80GB, DGX1V-16G / -32G =
# V100-SXM2-16GB / 32GB (resnet50 and se-resnext101 use one DGX1V entry for both).
DLE_PLATFORMS = {
    "A100-SXM4-80GB": "DGXA100",
    "V100-SXM2-16GB": "DGX1V-16G",
    "V100-SXM2-32GB": "DGX1V-32G",
}
# Image size of DeepLearningExamples' ConvNets runs where it is not the registry's: the same
# configs.yml gives EfficientNet-B4 ``image_size: 380`` (anchor efficientnet_b4_params_4k,
# which every platform's b4 entry merges; training and the benchmark_inference mode read the
# same config), where the registry's entry is timm's 320 px model. EfficientNet-B0 (224),
# ResNet-50 and SE-ResNeXt101 (224) run at the registry's size.
DLE_IMAGE_SIZE = {"efficientnet-b4": 380}
DLE_CONVNET_BATCH: dict[tuple[str, str, str], int] = {
    ("efficientnet-b0", "DGXA100", "fp16"): 256,
    ("efficientnet-b0", "DGXA100", "tf32"): 256,
    ("efficientnet-b0", "DGX1V-16G", "fp16"): 128,
    ("efficientnet-b0", "DGX1V-16G", "fp32"): 64,
    ("efficientnet-b0", "DGX1V-32G", "fp16"): 256,
    ("efficientnet-b0", "DGX1V-32G", "fp32"): 128,
    ("efficientnet-b4", "DGXA100", "fp16"): 128,
    ("efficientnet-b4", "DGXA100", "tf32"): 64,
    ("efficientnet-b4", "DGX1V-16G", "fp16"): 32,
    ("efficientnet-b4", "DGX1V-16G", "fp32"): 16,
    ("efficientnet-b4", "DGX1V-32G", "fp16"): 64,
    ("efficientnet-b4", "DGX1V-32G", "fp32"): 32,
    ("se-resnext101-32x4d", "DGXA100", "fp16"): 128,
    ("se-resnext101-32x4d", "DGXA100", "tf32"): 128,
    ("se-resnext101-32x4d", "DGX1V-16G", "fp16"): 112,
    ("se-resnext101-32x4d", "DGX1V-16G", "fp32"): 64,
    ("se-resnext101-32x4d", "DGX1V-32G", "fp16"): 112,
    ("se-resnext101-32x4d", "DGX1V-32G", "fp32"): 64,
    ("resnet-50", "DGXA100", "fp16"): 256,
    ("resnet-50", "DGXA100", "tf32"): 256,
    ("resnet-50", "DGX1V-16G", "fp16"): 256,
    ("resnet-50", "DGX1V-16G", "fp32"): 112,
    ("resnet-50", "DGX1V-32G", "fp16"): 256,
    ("resnet-50", "DGX1V-32G", "fp32"): 112,
}

# Groups whose source says every GPU of the row serves one copy of the model, so its tensor-
# parallel degree is the row's GPU count (vLLM on one node splits a copy tensor-parallel,
# ``--tensor-parallel-size``; pipeline stages are opt-in and none is stated). OCI's Llama 3.1
# 405B post, for both of its tables: "We tested the performance of a single instance of the
# Llama 3.1 405B FP8 model on a single OCI bare metal instance. All eight GPUs were assigned
# for serving the numbers reported below" (blogs.oracle.com/cloud-infrastructure/serving-
# llama-31-405b-model-with-amd-mi300x-gpus, 2024-10-10, before "LLM serving performance").
ONE_COPY_GROUPS = frozenset({"oci-blog-mi300x-llama405b"})

# Continuous-batching settings a source's own script states, per group: (the cap on sequences
# one copy decodes at once, the share of each GPU's memory the engine takes). Azure's AI
# benchmarking guide ran vLLM's benchmark_throughput.py on MI300X with ``--max-num-seqs
# {max_num_seq}`` from config.json (3000 for every AMD model) and ``--gpu-memory-utilization
# 0.90`` (samuel-bohman/AI-benchmarking-guide, Benchmarks/AMD/LLMBenchmark.py @04e2ae7d and
# config.json @c7774a87, committed 2025-01-23 minutes after the results page it fills).
STATED_ENGINE_SETTINGS: dict[str, tuple[int, float]] = {
    "azure-aibench-mi300x-vllm": (3000, 0.90),
}

# torchtitan's Llama 3 training presets set ``seq_len = 8192`` (pytorch/torchtitan
# train_configs/llama3_8b.toml @0011fb90 and llama3_405b.toml @057f64d5, ``[training]``); its
# benchmark tables that state no sequence length ran those presets.
TORCHTITAN_SEQ_LEN = 8192

# The mean request shape of each MLPerf Inference generative benchmark's dataset (prompt
# tokens, output tokens), which the results summary does not repeat; "" where no source
# states it (the engine's default shape is then used). Output tokens are the reference
# implementation's accuracy target ``tokens_per_sample`` (mlcommons/inference@b66003e1,
# language/<benchmark>/README.md, "Accuracy Target"); the 405B prompt mean is AMD's, for
# the same dataset ("The Llama 3.1 405B dataset input sequence lengths range from 476 to
# 19988 tokens with an average of 9428", ROCm/rocm-blogs@ebc7f351,
# blogs/artificial-intelligence/mlperf-inference-v5.1/README.md, "Load Balancing").
MLPERF_LLM_REQUESTS: dict[str, tuple[str, str]] = {
    "llama-3.1-405b": ("9428", "685"),  # README: tokens_per_sample 684.68; AMD: average 684
    # Llama 2 70B (OpenOrca, 24,576 samples): prompts of 222.3 tokens on average, the sum of
    # the dataset's ``tok_input_length`` column, 5,463,976, over its rows (an extraction
    # digest-bound to MLCommons' open_orca_gpt4_tokenized_llama.sampled_24576.pkl.gz:
    # FlashLab-MBZUAI/HBFSim@96cf1b37, validation/calibration/
    # h100-llama2-70b-calibration-protocol.json, workload_evidence.lengths_csv.input_tokens);
    # outputs: the README's tokens_per_sample 294.45
    "llama-2-70b": ("222", "294"),
    "mixtral-8x7b": ("", "145"),  # tokens_per_sample 144.84
    "deepseek-r1": ("", "3886"),  # mean-output-tok-len 3886.2274
    # Llama 3.1 8B (CNN/DailyMail, 13,368 samples, at most 128 new tokens): 128.98 tokens per
    # sample, the ratio of the two rates of one Offline run over the whole dataset, "Samples
    # per second: 1282.63" and "Tokens per second: 165432" (mlcommons/inference_results_v6.0
    # @4d3916ac, closed/NVIDIA/results/B300-SXM-270GBx8_TRT/llama3.1-8b/Offline/performance/
    # run_1/mlperf_log_summary.txt, read in its copy tenk-earn/inference-chip-index@d5c26d12
    # data/fixtures/...; performance_sample_count 13368, the v5.1 dataset). The prompt is
    # the article: 781 tokens on average, the dataset card's "Mean Token Count" of an article
    # (Hugging Face datasets abisee/cnn_dailymail, README "Data Instances", read in its copy
    # ccdv/cnn_dailymail@bf1f2635 README.md; See et al. 2017's PTBTokenizer tokens, so a lower
    # bound on Llama 3's BPE tokens, before the harness's summarisation instruction).
    "llama-3.1-8b": ("781", "129"),
    # Whisper: the decoder's forced prefix (<|startoftranscript|>, language, task,
    # <|notimestamps|>: Radford et al. 2022, section 2.3 and Figure 1) and the transcript's
    # tokens per sample: 74.87, the ratio of the two rates one run of the whole dataset (one
    # query of all 1,633 samples) reports, "Samples per second: 1.40174" and "Tokens per
    # second: 104.953" (mlcommons/inference_results_v5.1, read in its mirror
    # ntuhpc/inference_results_v5.1@a634ab77, closed/GATEOverflow/results/
    # 764987c5c33d-reference-gpu-vllm-default_config/whisper/offline/performance/run_1/
    # mlperf_log_summary.txt; the submitter's other system, GATEOverflow_AMD_AM5-reference-
    # gpu-vllm-default_config: 109.6 / 1.4642 = 74.85). Greedy decoding of one model on one
    # dataset: the count is the dataset's, whichever system ran it.
    "whisper-large-v3": ("4", "75"),
}

# Bits per weight of a quantised checkpoint whose size the source states, where it differs
# from the format's usual (``serving.QUANTISED_BYTES``: int4 4.25, AWQ / GPTQ): llama.cpp's
# Q4_K_M GGUF keeps a scale and a minimum per 32-weight sub-block and some tensors at 6 bits.
# The llama.cpp GPU benchmark lists both files of each model it ran (XiongjieDai/GPU-
# Benchmarks-on-LLM-Inference@aa72e0ec, README "Total VRAM Requirements": LLaMA 3 8B Q4_K_M
# 4.58 GB against 14.96 GB in f16, 70B 39.59 GB against 131.42 GB): 16 bits x their ratio.
# torchao's table gives each model's size too (pytorch/ao@81a28138, torchao/quantization/
# README.md, "Benchmarks", "Model Size (GB)": int4wo-64 3.74 GB against 13.21 for Llama-2-7B,
# 4.22 against 15.01 for Llama-3-8B; its autoquant-int4hqq rows are 3 % larger). gpt-fast's
# int4 is "4-bit (G=32)" with a bf16 scale and a bf16 zero per group of 32 (pytorch-labs/
# gpt-fast@32971d31, quantize.py ``get_group_qparams`` / ``pack_scales_and_zeros``): 4 +
# 32 / 32 = 5 bits. Keyed by (source, model, weight format); model "" is any model.
WEIGHT_BITS: dict[tuple[str, str, str], float] = {
    ("llamacpp-gpu-benchmarks", "llama-3-8b", "int4"): 16 * 4.58 / 14.96,  # 4.90
    ("llamacpp-gpu-benchmarks", "llama-3-70b", "int4"): 16 * 39.59 / 131.42,  # 4.82
    ("torchao", "llama-2-7b", "int4"): 16 * 3.74 / 13.21,  # 4.53
    ("torchao", "llama-3-8b", "int4"): 16 * 4.22 / 15.01,  # 4.50
    ("gpt-fast", "", "int4"): 4 + (16 + 16) / 32,  # 5.0
}

# TGI on SageMaker (hf-tgi-sagemaker): the k6 load script (philschmid/text-generation-inference-
# tests@4373a859, sagemaker_llm_container/sagemaker_load.js) sends ShareGPT prompts from the
# repo's samples.json, ``samples[scenario.iterationInTest]``, each entry [prompt, input tokens,
# output tokens]: 1,000 entries whose input tokens sum to 233,094, a mean of 233 (sha256 of the
# file d924d9e8...c233). A run of N requests (the task states N: 21 to 940) sent the first N,
# whose means range from 142 to 255; the dataset's mean stands for all of them, as the MLPerf
# rows take their dataset's, so that runs of one workload stay comparable with one another.
TGI_SAGEMAKER_PROMPT_TOKENS = "233"

# MLPerf Inference's Whisper reference implementation, as v5.1's "reference-gpu-vllm" systems
# ran it (mlcommons/inference@95579145, speech2text/reference_SUT.py, the same settings since
# the benchmark's first commit d690a576): vLLM with ``dtype="bfloat16"`` written into the
# code (the submissions' "fp32" is the harness's default label, not what ran),
# ``tensor_parallel_size=1``, one worker per NUMA node (reference_mlperf_perf.sh:
# ``--num_workers ${NUM_INSTS}``) that picks no device, so every worker runs on the default
# GPU: one GPU, whatever the system holds. The 2 x RTX 4090 system's 104.95 tokens/s sits
# beside its 1-GPU siblings' 109.6 and 136.0. Its batch is what the run's console log
# records, not ``max_num_seqs`` (64, the most the engine would take): every ``generate`` call
# got one sample ("Adding requests: 1/1", "Processed prompts: 1/1", ~110 output tokens/s per
# call) from the first sample to the last (ntuhpc/inference_results_v5.1@a634ab77,
# closed/GATEOverflow/measurements/GATEOverflow_AMD_AM5-reference-gpu-vllm-default_config/
# whisper/offline/performance_console.out; the 2 x RTX 4090 system's accuracy_console.out
# alike), so the reference decoded one transcript at a time: batch 1. The same log shows
# the engine: vLLM 0.10.0, which serves Whisper with its V0 engine ("is not supported by the
# V1 Engine. Falling back to V0", then "Initializing a V0 LLM engine (v0.10.0)"), decode
# steps captured as CUDA graphs ("Capturing cudagraphs for decoding"), so the rows name the
# runtime ``vllm-v0`` (its host loop between steps: serving_step.VLLM_V0_STEP_S).
# RetinaNet's reference ran as its console log records (ntuhpc/inference_results_v5.1@a634ab77,
# closed/GATEOverflow/measurements/GATEOverflow_RTX4090x1-reference-gpu-pytorch_v2.7.1-cu126/
# retinanet/offline/performance_console.out): ``python/main.py --profile retinanet-pytorch
# --max-batchsize 1 --threads 1``, the pytorch-native backend running the TorchScript model
# (``torch.jit.load``) op by op in fp32, one image per call: eager at batch 1, not an engine.
MLPERF_REFERENCE_SYSTEM = "reference-gpu-"
MLPERF_REFERENCE_RUNS: dict[str, dict[str, str]] = {
    "whisper-large-v3": {"precision": "bf16", "gpus": "1", "batch": "1", "engine": "vllm-v0"},
    "retinanet-resnext50": {"execution": "eager", "engine": "", "batch": "1"},
}

# How MLPerf v5.1's TensorRT Whisper submissions batch (every system in the results that runs
# NVIDIA's harness): static batches of ``gpu_batch_size`` transcripts per GPU, the runtime's
# ``use_inflight_batching: False`` (a batch decodes until its longest transcript ends), at most
# ``max_output_len`` 150 new tokens (ntuhpc/inference_results_v5.1@a634ab77,
# closed/NVIDIA/code/whisper/tensorrt/generation_config.json; harness whisper_models.py
# ``process_batch(..., max_new_tokens=150)``). The batch per GPU, by accelerator, from each
# system's configs/<system>/Offline/whisper.py ``model_fields.gpu_batch_size`` (encoder and
# decoder alike): B200 and GB200 320 (closed/NVIDIA B200-SXM-180GBx8 and GB200-NVL72_GB200-
# 186GB_aarch64x4; Dell, Lenovo, Supermicro, Oracle, Google alike), H200 SXM and NVL 256
# (closed/Dell XE9680_H200_SXM_141GBx8 and XE7745_H200_NVL_141GBx8; ASUSTeK, Google, HPE
# DL385 x2, Quanta alike), H100 NVL 64 (closed/Dell R7715-H100-NVL-94GBx3), L40S 64
# (closed/Dell XE7740_L40S_PCIe_48GBx8), L4 32 (closed/Dell R570-L4-PCIE-24GBx4). HPE's
# DL380A systems (10 x H200 NVL, 8 x RTX PRO 6000) batch in flight; no row here is theirs.
MLPERF_STATIC_BATCHES: dict[str, dict[str, int]] = {
    "whisper-large-v3": {
        "B200": 320,
        "GB200": 320,
        "H200-SXM-141GB": 256,
        "H200-NVL-141GB": 256,
        "H100-NVL-94GB": 64,
        "L40S": 64,
        "L4": 32,
    },
}
MLPERF_MAX_OUTPUT_TOKENS = {"whisper-large-v3": "150"}

# A submitter whose name would overflow the lines of ``MLPERF_VLLM_RUNS``.
_QCT = "Quanta_Cloud_Technology"

# How AMD's MLPerf v5.1 harness ran Llama 2 70B and Mixtral 8x7B with vLLM, per model,
# submitted system and scenario: ``vllm_engine_config`` of the harness's model file,
# (``tensor_parallel_size``, ``max_num_seqs``, ``gpu_memory_utilization``, ``kv_cache_dtype``),
# read in each submitter's own copy of the code (mlcommons/inference_results_v5.1@965182b0, the
# commit the rows cite, read in its mirror ntuhpc/inference_results_v5.1: closed/<submitter>/
# code/llama2-70b-99.9/harness_llm/models/llama2-70b/<scenario>_<mi300x|mi325x>.yaml and
# code/mixtral-8x7b/harness_llm/models/mixtral-8x7b/<scenario>_<chip>.yaml). Every system runs
# one model copy per GPU (TP 1, eight per node: ``device_count: 8``); Mixtral's files ask for an
# fp8 KV cache, Llama's set none, so theirs keeps vLLM's default (the model's 16 bits, which the
# rows already leave unstated: ""). Submitters whose results carry no such code (ASUSTeK,
# MangoBoost, Dell_MangoBoost) are left as they were.
MLPERF_VLLM_RUNS: dict[tuple[str, str, str, str], tuple[int, int, float, str]] = {
    ("llama-2-70b", "AMD", "8xMI300X_2xEPYC_9575F", "Interactive"): (1, 600, 1.0, ""),
    ("llama-2-70b", "AMD", "8xMI300X_2xEPYC_9575F", "Offline"): (1, 1792, 0.98, ""),
    ("llama-2-70b", "AMD", "8xMI300X_2xEPYC_9575F", "Server"): (1, 650, 1.0, ""),
    ("mixtral-8x7b", "AMD", "8xMI300X_2xEPYC_9575F", "Offline"): (1, 5000, 0.97, "fp8"),
    ("mixtral-8x7b", "AMD", "8xMI300X_2xEPYC_9575F", "Server"): (1, 4096, 0.99, "fp8"),
    ("llama-2-70b", "AMD", "8xMI325X_2xEPYC_9575F_1", "Offline"): (1, 2700, 0.98, ""),
    ("llama-2-70b", "AMD", "8xMI325X_2xEPYC_9575F_1", "Server"): (1, 1024, 1.0, ""),
    ("mixtral-8x7b", "AMD", "8xMI325X_2xEPYC_9575F_1", "Offline"): (1, 4736, 0.96, "fp8"),
    ("mixtral-8x7b", "AMD", "8xMI325X_2xEPYC_9575F_1", "Server"): (1, 2560, 0.96, "fp8"),
    ("llama-2-70b", "AMD", "8xMI325X_2xEPYC_9575F_2", "Interactive"): (1, 3840, 1.0, ""),
    ("llama-2-70b", "AMD", "8xMI325X_2xEPYC_9575F_2", "Offline"): (1, 2700, 0.98, ""),
    ("llama-2-70b", "Dell", "XE9680_MI300X_192GBx8", "Interactive"): (1, 600, 1.0, ""),
    ("llama-2-70b", "Dell", "XE9680_MI300X_192GBx8", "Offline"): (1, 1792, 0.98, ""),
    ("llama-2-70b", "Dell", "XE9680_MI300X_192GBx8", "Server"): (1, 650, 1.0, ""),
    ("mixtral-8x7b", "Dell", "XE9680_MI300X_192GBx8", "Offline"): (1, 5000, 0.97, "fp8"),
    ("mixtral-8x7b", "Dell", "XE9680_MI300X_192GBx8", "Server"): (1, 4096, 0.99, "fp8"),
    ("llama-2-70b", "GigaComputing", "8xMI325X_2xEPYC_9575F", "Interactive"): (1, 3840, 1.0, ""),
    ("llama-2-70b", "GigaComputing", "8xMI325X_2xEPYC_9575F", "Offline"): (1, 2700, 0.97, ""),
    ("llama-2-70b", "GigaComputing", "8xMI325X_2xEPYC_9575F", "Server"): (1, 1024, 1.0, ""),
    ("mixtral-8x7b", "GigaComputing", "8xMI325X_2xEPYC_9575F", "Offline"): (1, 4736, 0.96, "fp8"),
    ("mixtral-8x7b", "GigaComputing", "8xMI325X_2xEPYC_9575F", "Server"): (1, 2560, 0.96, "fp8"),
    ("llama-2-70b", "MiTAC", "8xMI325X_2xEPYC_9755", "Interactive"): (1, 3840, 1.0, ""),
    ("llama-2-70b", "MiTAC", "8xMI325X_2xEPYC_9755", "Offline"): (1, 2700, 0.98, ""),
    ("llama-2-70b", "MiTAC", "8xMI325X_2xEPYC_9755", "Server"): (1, 1024, 1.0, ""),
    ("mixtral-8x7b", "MiTAC", "8xMI325X_2xEPYC_9755", "Offline"): (1, 4736, 0.96, "fp8"),
    ("mixtral-8x7b", "MiTAC", "8xMI325X_2xEPYC_9755", "Server"): (1, 2560, 0.96, "fp8"),
    ("llama-2-70b", _QCT, "D75T-7U_8xMI325X", "Interactive"): (1, 3840, 1.0, ""),
    ("llama-2-70b", _QCT, "D75T-7U_8xMI325X", "Offline"): (1, 2700, 0.98, ""),
    ("llama-2-70b", _QCT, "D75T-7U_8xMI325X", "Server"): (1, 1024, 1.0, ""),
    ("mixtral-8x7b", _QCT, "D75T-7U_8xMI325X", "Offline"): (1, 4736, 0.96, "fp8"),
    ("mixtral-8x7b", _QCT, "D75T-7U_8xMI325X", "Server"): (1, 2560, 0.96, "fp8"),
    ("llama-2-70b", "Vultr", "8xMI325X_2xEPYC_9554", "Interactive"): (1, 3840, 1.0, ""),
    ("llama-2-70b", "Vultr", "8xMI325X_2xEPYC_9554", "Offline"): (1, 2700, 0.97, ""),
    ("llama-2-70b", "Vultr", "8xMI325X_2xEPYC_9554", "Server"): (1, 1024, 1.0, ""),
    ("mixtral-8x7b", "Vultr", "8xMI325X_2xEPYC_9575F", "Offline"): (1, 4736, 0.96, "fp8"),
    ("mixtral-8x7b", "Vultr", "8xMI325X_2xEPYC_9575F", "Server"): (1, 2560, 0.96, "fp8"),
}

# NVIDIA's TensorRT-LLM submissions (every v5.1 system running NVIDIA's harness) are not given
# their configs the way AMD's vLLM runs are above. Each system's configs/<system>/<scenario>/
# <benchmark>.py (read in the same mirror; the submitters copy NVIDIA's values) sets, for
# Llama 2 70B, ``gpu_batch_size`` 2048 with ``max_num_tokens`` (the iteration's token budget)
# 3584 on B200 / GB200 and 1536 on H200 for Offline and Server, but 768 / 768 on B200 and
# 512 / 256 on H200 for Interactive, all at TP 1; for Llama 3.1 405B on B200 TP 2 x PP 2 at
# 128 (Offline) and TP 4 at 256 (Server and Interactive), on H200 TP 4 x PP 2 at 512
# (Offline) and TP 8 at 512 (Server). Stated on the rows (stop 59), they moved MLPerf held
# out 13.9 -> 14.6 % with a baseline and 16.5 -> 17.2 % without: the engine's best plan at TP
# 1 and batch 256 is already compute-bound, so 2048 adds 4 % (B200) or nothing (H200), and
# 405B Offline at TP 2 x PP 2 and 128 fell from 1.00 to 0.83x of measured. The Interactive
# rows stay 1.33x too fast either way: the token budget (max_num_tokens), which is what
# separates them from Server in these files, is not modelled.

# MLPerf Inference benchmarks whose Offline result counts generated tokens although the results
# summary labels it samples/s: the submission checker reads ``result_tokens_per_second`` for
# them (mlcommons/inference@b66003e1, tools/submission/submission_checker/constants.py,
# RESULT_FIELD_BENCHMARK_OVERWRITE["v5.1"]: "whisper": {"Offline": ...}); the loadgen run
# sets ``whisper.*.use_token_latencies = 1`` (mlperf.conf). The tokens per sample (the
# transcript of a ~30 s clip: ``MLPERF_LLM_REQUESTS``) convert them to samples.
MLPERF_TOKEN_RESULTS = frozenset({"whisper-large-v3"})

# Source family by group prefix (dev2 and extra carry a `group`; dev rows are told apart by
# their URL in `normalise.py`). One family = one publisher's measurement campaign, the unit
# that leave-one-source-out holds out.
SOURCE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("mlperf-training-", "mlperf-training"),
    ("mlperf-inference-v5.1", "mlperf-inference-v5.1"),
    ("timm-results", "timm"),
    ("hf-tgi-sagemaker", "tgi-sagemaker"),
    ("amd-instinct-performance-results", "amd-instinct"),
    ("gpt-fast-readme", "gpt-fast"),
    ("torchtitan-", "torchtitan"),
    ("oci-blog-", "oci-blog"),
    ("deepspeed-chat-", "deepspeed-chat"),
    ("vllm-ci-", "vllm-ci"),
    ("sglang-benchmark-", "sglang"),
    ("nvidia-dle-", "nvidia-dle"),
    ("torchao-", "torchao"),
    ("kempnerforge-", "kempnerforge"),
    ("datacrunch-sglang-", "datacrunch-h200"),
    ("fastertransformer-", "fastertransformer"),
    ("llamacpp-gpu-benchmarks", "llamacpp-gpu-benchmarks"),
    ("rocm-blog-", "rocm-blogs"),
    ("philschmid-llmperf-", "philschmid-llmperf"),
    ("lmdeploy-", "lmdeploy"),
    ("azure-aibench-", "azure-aibench"),
)

# Model text -> canonical key (MODELS-SPEC.md spellings; keys that spec does not list are
# named in the same style and listed in README.md).
MODEL_RULES: tuple[tuple[str, str], ...] = (
    (r"llama[- ]?2[- ]70b|llama2-70b|llama2_70b", "llama-2-70b"),
    (r"llama[- ]?2[- ]13b", "llama-2-13b"),
    (r"llama[- ]?2[- ]7b", "llama-2-7b"),
    (r"llama[- ]?3\.1[- ]405b|llama3\.1-405b|llama31_405b", "llama-3.1-405b"),
    (r"llama[- ]?3\.1[- ]70b", "llama-3.1-70b"),
    (r"llama[- ]?3\.1[- ]8b|llama3\.1-8b|llama-3-8\.1b", "llama-3.1-8b"),
    (r"llama[- ]?3[- ]70b", "llama-3-70b"),
    (r"llama[- ]?3[- ]8b", "llama-3-8b"),
    # KempnerForge's 7B and 70B have the Llama-3 8B / 70B shapes (8.03B / 70.55B parameters,
    # dims stated in the row); its 13B is a Llama-3-style 14.84B model of its own.
    (r"kempnerforge 7b", "llama-3-8b"),
    (r"kempnerforge 70b", "llama-3-70b"),
    (r"kempnerforge 13b", "kempnerforge-13b"),
    (r"mixtral", "mixtral-8x7b"),
    (r"mistral[- ]7b", "mistral-7b"),
    (r"deepseek-r1", "deepseek-r1"),
    (r"bert-6b", "bert-6b"),
    (r"bert-base", "bert-base"),
    (r"bert-large", "bert-large"),
    (r"gpt2-large", "gpt-2-large"),
    (r"gpt3-xl", "gpt-3-xl"),
    (r"gpt3-2\.7b", "gpt-3-2.7b"),
    (r"gpt-3 175b", "gpt-3-175b"),
    (r"opt-1\.3b", "opt-1.3b"),
    (r"opt-6\.7b", "opt-6.7b"),
    (r"opt-13b", "opt-13b"),
    (r"opt-30b", "opt-30b"),
    (r"opt-66b", "opt-66b"),
    (r"opt-175b", "opt-175b"),
    (r"switch-transformer xl", "switch-transformer-xl-4e"),
    (r"se-resnext101", "se-resnext101-32x4d"),
    (r"resnet-50|resnet50", "resnet-50"),
    (r"resnet152", "resnet-152"),
    (r"retinanet", "retinanet-resnext50"),
    (r"stable diffusion xl", "stable-diffusion-xl"),
    (r"stable diffusion v2", "stable-diffusion-2"),
    (r"whisper", "whisper-large-v3"),  # MLPerf Inference v5.1 whisper = Whisper Large v3
    (r"vit_small_patch16", "vit-small-16"),
    (r"vit_base_patch16", "vit-base-16"),
    (r"vit_large_patch16", "vit-large-16"),
    (r"convnext_base", "convnext-base"),
    (r"efficientnet[-_]b0", "efficientnet-b0"),
    (r"efficientnet-b4", "efficientnet-b4"),
    (r"mobilenetv3_large", "mobilenetv3-large"),
    (r"swin_base", "swin-base"),
    (r"densenet121", "densenet-121"),
    (r"transformer-xl base", "transformer-xl-base"),
    (r"transformer-xl large", "transformer-xl-large"),
    (r"temporal fusion transformer", "temporal-fusion-transformer"),
)

# Accelerator text -> canonical id: the id of catalogs/accelerators.yaml where one exists,
# else the product's name in the same style. Where the source gives the memory but not the
# form factor the id says so ("A100-80GB"); where it gives neither, the bare family, which
# UNPINNED_ACCELERATORS marks unusable.
ACCELERATOR_RULES: tuple[tuple[str, str], ...] = (
    (r"h100.*96gb hbm2e", "H100-HBM2e-96GB-500W"),  # torchtitan's Grand Teton part
    (r"h100.*nvl", "H100-NVL-94GB"),
    (r"h100.*pcie", "H100-PCIe-80GB"),
    (r"h100-sxm5-96gb", "H100-SXM5-96GB"),
    (r"h100.*(sxm|80gb hbm3)", "H100-SXM5-80GB"),
    (r"h100 80g", "H100-80GB"),
    (r"h100", "H100"),
    (r"h200.*nvl", "H200-NVL-141GB"),
    (r"h200.*sxm", "H200-SXM-141GB"),
    (r"h200.*141", "H200-141GB"),
    (r"h200", "H200-141GB"),  # every H200 has 141 GB
    (r"gb300", "GB300"),
    (r"gb200", "GB200"),
    (r"b200", "B200"),
    (r"mi325x", "MI325X"),
    (r"mi300x", "MI300X"),
    (r"mi250x \(one gcd\)", "MI250X-GCD"),
    (r"mi210", "MI210"),
    (r"a100.*pcie.*40", "A100-PCIe-40GB"),
    (r"a100.*pcie", "A100-PCIe-80GB"),
    (r"a100.*sxm.*40", "A100-SXM4-40GB"),
    (r"a100.*sxm", "A100-SXM4-80GB"),
    (r"a100.*p4d\.24xlarge", "A100-SXM4-40GB"),  # catalogs/aws.yaml: p4d.24xlarge
    (r"a100.*80g", "A100-80GB"),
    (r"a100.*40g", "A100-40GB"),
    (r"a100", "A100"),
    (r"a10g", "A10G"),
    (r"\ba30\b", "A30"),
    (r"\ba40\b", "A40"),
    (r"l40s", "L40S"),
    (r"\bl40\b", "L40"),
    (r"\bl4\b", "L4"),
    (r"\bt4\b", "T4"),
    (r"\bp4\b", "P4"),
    (r"p100", "P100-PCIe-16GB"),
    (r"v100-sxm2-16gb", "V100-SXM2-16GB"),
    (r"v100-sxm2-32gb", "V100-SXM2-32GB"),
    (r"v100-pcie-32gb", "V100-PCIe-32GB"),
    (r"v100.*dgx-1", "V100-SXM2"),  # DGX-1 V100s are SXM2; memory size not stated
    (r"rtx pro 6000.*max-q", "RTX-PRO-6000-Max-Q"),
    (r"rtx pro 6000.*server", "RTX-PRO-6000-Server"),
    (r"rtx 6000 ada", "RTX-6000-Ada"),
    (r"rtx 5000 ada", "RTX-5000-Ada"),
    (r"rtx 4000 ada", "RTX-4000-Ada"),
    (r"rtx-2000e-ada", "RTX-2000E-Ada"),
    (r"rtx a6000", "RTX-A6000"),
    (r"rtx a5000", "RTX-A5000"),
    (r"5090", "RTX-5090"),
    (r"4090", "RTX-4090"),
    (r"4080", "RTX-4080"),
    (r"4070 ti", "RTX-4070-Ti"),
    (r"3090", "RTX-3090"),
    (r"3080 ti", "RTX-3080-Ti"),
    (r"3080", "RTX-3080"),
    (r"3070", "RTX-3070"),
    (r"7900 xtx", "RX-7900-XTX"),
    (r"arc pro b60", "Arc-Pro-B60"),
    (r"max 1100", "Max-1100"),
)

# Boards that carry more than one GPU, each with its own memory, which a source counts as one
# accelerator: MLPerf's Intel systems list "[MAXSUN] MS-Intel Arc Pro B60 Dual 48G Turbo" x 4
# (x 1 on the edge system) with 48 GB each, a board of two BMG-G21 GPUs of 24 GB GDDR6 at
# 456 GB/s each, separate memories on a bifurcated PCIe 5.0 x16 slot (x8 per GPU; Intel and
# MAXSUN's Computex 2025 announcement, as described by the GamersNexus teardown and Sparkle's
# same-design "48GB dual-GPU" card: "separate memory channels and do not pool memory"). The
# rows count GPUs, so such a board counts this many times.
GPUS_PER_BOARD: tuple[tuple[str, int], ...] = ((r"arc pro b60 dual", 2),)

# What MLPerf v5.1's Intel Arc Pro B60 builds computed in and kept their KV cache in, as their
# code states (mlcommons/inference_results_v5.1 as mirrored at ntuhpc/inference_results_v5.1
# @a634ab77, closed/Intel/code/<benchmark>/pytorch-xpu): int4 weights ("weights UINT4" in the
# summary; checkpoints llama2-gptq-w4g-1b8kv and Llama-3.1-8B-Instruct-autoround-w4g-1) with
# int8 activations: measurements.json states input_data_types INT8 (70B) / UINT8 (8B), and the
# model_init environments set VLLM_FUSE_NORM_QUANT=1 and VLLM_FUSE_SILU_QUANT=1, quantising the
# activations inside RMSNorm and SiLU, so the matmuls run on the XMX int8 units (W4A8), not as
# weight-only int4 into 16-bit. The KV cache: SUT.py sets kv_cache_dtype "int8" on XPU; the 8B
# builds' utils_model.py overrides it with "fp8_e5m2" under their VLLM_XPU_PA_IMPL=triton.
# (activations, KV cache) per (accelerator, model key).
MLPERF_W4A8_FORMATS: dict[tuple[str, str], tuple[str, str]] = {
    ("Arc-Pro-B60", "llama-2-70b"): ("int8", "int8"),
    ("Arc-Pro-B60", "llama-3.1-8b"): ("int8", "fp8"),
}

# Ids that do not pin a product's memory or form factor: rows on them are kept but unusable.
UNPINNED_ACCELERATORS = frozenset({"A100", "H100"})

# A part the source says ran under a power limit it does not state (torchao's float8 table:
# "8x B200 (power limited)") is not the part its spec sheet describes, by an unknown amount;
# a stated cap ("power limited to 330W", gpt-fast's A100s) pins it. Such rows are unusable.
UNSTATED_POWER_CAP = re.compile(r"power[- ]limited(?! to \d)")

# Boards without an NVLink connector: a multi-GPU system of them talks over PCIe, whatever a
# submitter's system description claims (dev2's README notes an L40S system "with 18x 4th Gen
# NVLink", an evident copy-paste).
NO_NVLINK = frozenset(
    {
        "T4",
        "L4",
        "L40",
        "L40S",
        "A10G",
        "P4",
        "RTX-4090",
        "RTX-5090",
        "RTX-4080",
        "RTX-4070-Ti",
        "RTX-6000-Ada",
        "RTX-5000-Ada",
        "RTX-4000-Ada",
        "RTX-2000E-Ada",
        "RTX-PRO-6000-Max-Q",
        "RTX-PRO-6000-Server",
    }
)

# Instinct OAM parts: the GPUs of one node are joined by Infinity Fabric (xGMI) links.
XGMI_ONLY = frozenset({"MI300X", "MI325X"})

# Activation checkpointing and weight sharding as a training row's task states them, in the
# vocabulary of the workload's ``training:`` recipe (recommender/recipe.py); blank where the
# task is silent (the planner chooses). torchtitan's "per-op SAC" (and its "selective" mode)
# maps to the recipe's ``selective``, its nearest value, which charges less recomputation
# than it runs: the recipe recomputes the attention core (Korthikanti et al. 2022), while
# torchtitan's op policy "saves output of all compute ops, except every second mm"
# (torchtitan parallelize_llama.py, ``_custom_policy``), so the element-wise operations and
# half the forward matmuls run again. FSDP (torchtitan's FSDP2, KempnerForge's FSDP=N) shards
# weights, gradients and optimizer state over the data-parallel ranks: ``zero3`` (Zhao et al.
# 2023, "PyTorch FSDP", section 3: FULL_SHARD is ZeRO-3).
CHECKPOINTINGS = ("none", "selective", "full")
CHECKPOINTING_RULES: tuple[tuple[str, str], ...] = (
    (r"full activation checkpointing|full ac\b", "full"),
    (r"selective activation checkpointing|\bsac\b", "selective"),
)
SHARDINGS = ("none", "zero1", "zero2", "zero3")
SHARDING_RULES: tuple[tuple[str, str], ...] = ((r"\bfsdp", "zero3"),)

# Precision text -> vocabulary. Explicit "TF32 off" forms sit above the plain tf32 rule;
# fp8/int8 sit above bf16 because "bf16 + float8 linears" and "int8 weight-only, bf16
# activations" name the format the run is about after the bf16 base.
PRECISION_RULES: tuple[tuple[str, str], ...] = (
    (r"not stated", "unknown"),
    # dev2 README: the TGI rows are "fp16 and GPTQ"; TGI's unquantised rows are the fp16 ones.
    (r"no quantization \(tgi default dtype\)", "fp16"),
    (r"tf32 off|tf32_override=0", "fp32"),
    (r"gptq|q4_k_m|uint4|int4|w4a16", "int4"),
    (r"fp4", "fp4"),
    (r"mxfp8|float8|fp8", "fp8"),
    (r"int8", "int8"),
    (r"tf32", "tf32"),
    (r"bf16|bfloat16", "bf16"),
    (r"\bamp\b|fp16|\bf16\b|float16", "fp16"),  # NVIDIA DLE "AMP" is fp16 autocast
    (r"fp32", "fp32"),
)

# Weight-only quantisation (16-bit activations): "int8 weight-only", torchao's "int8wo",
# "W4A16". Its activation type, where the text names one.
WEIGHT_ONLY_PATTERN = r"weight-only|weight only|\bw[48]a16\b"
ACTIVATION_RULES: tuple[tuple[str, str], ...] = (
    (r"bf16 activations|bfloat16 activations", "bf16"),
    (r"fp16 activations|float16 activations|\bw[48]a16\b", "fp16"),
)


def first_match(rules: tuple[tuple[str, _V], ...], text: str) -> _V | None:
    """The value of the first rule whose pattern occurs in `text` (lower-cased), else None."""
    lowered = text.lower()
    for pattern, value in rules:
        if re.search(pattern, lowered):
            return value
    return None
