"""Names the probe-campaign commands show in their options, without the campaign models
(pydantic) that ``recommender --help`` must not load."""

from __future__ import annotations

from recommender import __version__

__all__ = ["API_KEY_ENV", "DEFAULT_IMAGE"]

DEFAULT_IMAGE = f"instance-recommender-probe:{__version__}"
API_KEY_ENV = "RECOMMENDER_API_KEY"  # what `recommender probe --api-key` reads
