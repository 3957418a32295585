"""Domain errors as problems: which library exception becomes which HTTP answer.

Rule of thumb: something wrong *inside* the request (an unknown accelerator name, a
reference to a profile that does not exist, a workload that cannot run) is a 422 naming the
field; a resource named by the *path* that does not exist is a 404.
"""

from __future__ import annotations

from recommender.api.problems import FieldError, ProblemError
from recommender.catalog import UnknownAcceleratorError

__all__ = ["not_found", "unknown_accelerator", "unusable_request"]


def unknown_accelerator(
    exc: UnknownAcceleratorError, *, location: str = "body", field: str = "accelerator"
) -> ProblemError:
    hint = f"; did you mean {', '.join(exc.suggestions)}?" if exc.suggestions else ""
    message = f"unknown accelerator {exc.name!r}{hint} (GET /v1/accelerators lists them)"
    return ProblemError(
        422,
        "unknown-accelerator",
        f"{field}: {message}",
        title="Unknown accelerator",
        errors=[FieldError(location=location, field=field, message=message, type="unknown")],
    )


def unusable_request(exc: Exception, *, field: str = "(workload)") -> ProblemError:
    """A request that validates but cannot be answered (the scoring engine refused it)."""
    return ProblemError(
        422,
        "unanswerable",
        str(exc) or type(exc).__name__,
        title="Cannot answer this request",
        errors=[FieldError(location="body", field=field, message=str(exc), type="value_error")],
    )


def not_found(what: str, ident: object, *, hint: str = "") -> ProblemError:
    return ProblemError(404, "not-found", f"No {what} with id {ident}.{' ' + hint if hint else ''}")
