"""Importing SkyPilot-format ``vms.csv`` catalogs into our YAML, deterministically.

``import_skypilot(dir)`` reads the CSVs (SkyPilot's ``<version>/<cloud>/vms.csv`` layout or
flat ``<cloud>_*.csv`` files), composes GCP host + GPU prices, fixes the known data quirks
and records each fix in an :class:`ImportReport`; :func:`publish` checks the result as a
whole catalog and writes it atomically, or refuses it and writes nothing.
"""

from recommender.catalog.skypilot.discover import CsvFile, FileSource, discover
from recommender.catalog.skypilot.importer import ImportResult, import_skypilot
from recommender.catalog.skypilot.parse import SkyPilotFormatError, VmRow, read_vms
from recommender.catalog.skypilot.publish import Published, Written, publish
from recommender.catalog.skypilot.report import KINDS, Fix, ImportReport

__all__ = [
    "KINDS",
    "CsvFile",
    "FileSource",
    "Fix",
    "ImportReport",
    "ImportResult",
    "Published",
    "SkyPilotFormatError",
    "VmRow",
    "Written",
    "discover",
    "import_skypilot",
    "publish",
    "read_vms",
]
