"""Models: exact architectures (:mod:`.arch`), the bundled registry and local Hugging Face
configs, and the ``model:`` part of a workload (:mod:`.spec`)."""

from recommender.models.arch import Architecture, GivenArch, TransformerArch, VisionTransformerArch

__all__ = ["Architecture", "GivenArch", "TransformerArch", "VisionTransformerArch"]
