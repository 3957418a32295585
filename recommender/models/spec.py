"""The ``model:`` part of a workload: a registry name, a local Hugging Face config, an exact
architecture, or bare figures (parameters and FLOPs per sample).

Whichever way it is given, a validated :class:`ModelSpec` carries an ``architecture`` when
the shape is known (a registry name and a config are resolved while validating), so scoring
reads one description. Relative ``hf_config`` paths are taken from the workload file's folder
(``load_workload`` passes it as validation context ``base_dir``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    model_validator,
)

from recommender.models.arch import (
    Architecture,
    GivenArch,
    TransformerArch,
    VisionTransformerArch,
    at_image_size,
)

__all__ = ["ModelFamily", "ModelSpec"]

Positive = Annotated[float, Field(gt=0)]
PositiveInt = Annotated[int, Field(ge=1)]
ModelFamily = Literal["transformer", "cnn", "recsys", "diffusion", "vision", "speech", "other"]
# Largest model the engine accepts: 10x the largest published dense or MoE model (~2 T).
MAX_PARAMETERS = 2e13
# Registry families that mean "a transformer" to the demand model.
_FAMILY_OF_TYPE: dict[str, ModelFamily] = {
    "cnn": "cnn",
    "diffusion-unet": "diffusion",
    "dit": "diffusion",
    "vit": "transformer",
    "other": "other",
}


def _resolve_name(data: dict[str, Any]) -> dict[str, Any]:
    from recommender.models.registry import UnknownModelError, resolve_model

    try:
        entry = resolve_model(str(data["name"]))
    except UnknownModelError as exc:
        raise ValueError(f"name: {exc}") from None
    out = {"architecture": entry.architecture, **data}
    if "family" not in data and entry.family in ("cnn", "diffusion"):
        out["family"] = entry.family
    return out


def _resolve_hf_config(data: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    from recommender.models.hf_config import load_hf_config

    path = Path(str(data["hf_config"])).expanduser()
    base = (info.context or {}).get("base_dir") if info.context else None
    if not path.is_absolute() and base is not None:
        path = Path(base) / path
    from recommender.catalog.problems import ProblemsError

    try:
        arch = load_hf_config(path)
    except ProblemsError as exc:
        raise ValueError("hf_config: " + "; ".join(str(p) for p in exc.problems)) from None
    except OSError as exc:
        raise ValueError(f"hf_config: cannot read {path}: {exc.strerror or exc}") from None
    return {"architecture": arch, **data}


def _at_image_size(data: dict[str, Any]) -> dict[str, Any]:
    """The architecture at ``image_size`` (a no-op when it already states that size, so a
    validated spec, which dumps both, validates back to the same model)."""
    size, arch = data.get("image_size"), data.get("architecture")
    if size is None:
        return data
    if arch is None:
        raise ValueError("image_size: give a model name or an architecture to scale")
    if not isinstance(arch, BaseModel):
        arch = TypeAdapter(Architecture).validate_python(arch)
    if not isinstance(arch, GivenArch | VisionTransformerArch):
        raise ValueError(
            "image_size: a transformer's input is tokens (sequence_length), not pixels"
        )
    try:
        return {**data, "architecture": at_image_size(arch, int(size))}
    except ValidationError as exc:  # the rescaled architecture is invalid (a ViT's patches)
        reason = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise ValueError(f"image_size: {reason}") from None
    except ValueError as exc:
        raise ValueError(f"image_size: {exc}") from None


class ModelSpec(BaseModel):
    """The model: ``name`` (registry), ``hf_config`` (a local config.json), an
    ``architecture``, or ``parameters`` and ``flops_per_sample``. A name or config is
    resolved into ``architecture`` while validating; when an architecture is given too, it
    is used as given and the name is a label.

    ``flops_per_sample`` is what one sample costs in the workload's kind: forward + backward
    for training, forward for inference; given, it overrides what the shape implies.
    ``sequence_length`` is the tokens of one sample (transformers), ``image_size`` the
    pixels a side of one image (CNNs and ViTs, when not the architecture's). ``family`` steers
    defaults (activation memory, typical bottlenecks); ``activation_bytes_per_sample``
    overrides the activation estimate.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str | None = Field(default=None, min_length=1, max_length=200)
    hf_config: str | None = Field(default=None, min_length=1, max_length=4096)
    architecture: Architecture | None = None
    parameters: Positive | None = Field(default=None, le=MAX_PARAMETERS)
    flops_per_sample: Positive | None = Field(default=None, le=1e21)
    sequence_length: PositiveInt | None = Field(default=None, le=10_000_000)
    family: ModelFamily | None = None
    activation_bytes_per_sample: Positive | None = Field(default=None, le=1e13)
    memory_bytes_per_sample: Positive | None = Field(
        default=None,
        le=1e14,
        description="Device-memory traffic per sample (bytes read + written), when known.",
    )
    execution: Literal["eager", "compiled", "engine"] = Field(
        default="eager",
        description="eager PyTorch; compiled (torch.compile, CUDA graphs); or engine: an "
        "inference engine's fused, quantised build (TensorRT, FasterTransformer), inference "
        "only.",
    )
    kernels_per_forward: PositiveInt | None = Field(
        default=None, le=10_000_000, description="GPU kernels one forward pass launches."
    )
    optimizer_step: bool = Field(
        default=True, description="Training steps include an optimizer (Adam) update."
    )
    image_size: PositiveInt | None = Field(
        default=None,
        le=16_384,
        description="Pixels a side of the square images the model runs on, when not the "
        "architecture's: a CNN's per-image FLOPs and activations scale with the pixels, a "
        "ViT's patches follow the image.",
    )

    @model_validator(mode="before")
    @classmethod
    def _resolve(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            return data
        sources = [k for k in ("name", "hf_config") if data.get(k) is not None]
        if len(sources) > 1:
            raise ValueError("give name or hf_config, not both")
        # A given architecture wins: the name is then a label (a validated spec dumps both,
        # and must validate back to the same model).
        if data.get("architecture") is not None or not sources:
            resolved = data
        elif sources == ["name"]:
            resolved = _resolve_name(data)
        else:
            resolved = _resolve_hf_config(data, info)
        return _at_image_size(resolved)

    @model_validator(mode="after")
    def _enough_to_size(self) -> Self:
        arch = self.architecture
        if arch is None and (self.parameters is None or self.flops_per_sample is None):
            missing = [n for n in ("parameters", "flops_per_sample") if getattr(self, n) is None]
            raise ValueError(
                f"give {' and '.join(missing)}, a model name, an hf_config, or an "
                "architecture (layers, hidden_size, ...) to derive them from"
            )
        if arch is not None and arch.active_parameters > MAX_PARAMETERS:
            raise ValueError(f"the architecture has {arch.parameters:.3g} parameters (max 2e13)")
        return self

    @property
    def tokens_per_sample(self) -> int | None:
        """Tokens of one sample: ``sequence_length`` here or on the architecture; a ViT's
        patches; ``None`` when the model is not a sequence model."""
        arch = self.architecture
        if isinstance(arch, VisionTransformerArch):
            return arch.tokens
        if isinstance(arch, TransformerArch):
            return self.sequence_length or arch.sequence_length
        return self.sequence_length

    @property
    def transformer(self) -> TransformerArch | None:
        """The transformer stack, when the model has one (a ViT's encoder included)."""
        arch = self.architecture
        if isinstance(arch, VisionTransformerArch):
            return arch.as_encoder()
        return arch if isinstance(arch, TransformerArch) else None

    @property
    def resolved_family(self) -> ModelFamily:
        if self.family is not None:
            return self.family
        arch = self.architecture
        if isinstance(arch, GivenArch | VisionTransformerArch):
            return _FAMILY_OF_TYPE[arch.type]
        return "transformer" if arch is not None else "other"
