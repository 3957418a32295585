"""The web page: describe a workload, see the picks and the cost-vs-time picture.

``install(app)`` adds the page (``/``, ``/r/{id}`` for a stored recommendation, the bundled
examples at ``/web/examples.json``) and its static files (``/static/``) to an app. The page
is plain HTML, CSS and JavaScript in ``static/`` (no build step, nothing from another host)
and talks to the service only through the public ``/v1`` API.
"""

from recommender.api.web.examples import Example, default_examples_dir, load_examples
from recommender.api.web.routes import CONTENT_SECURITY_POLICY, STATIC_DIR, install, router

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "STATIC_DIR",
    "Example",
    "default_examples_dir",
    "install",
    "load_examples",
    "router",
]
