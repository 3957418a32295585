"""One router per resource; :func:`recommender.api.app.create_app` includes them all."""
