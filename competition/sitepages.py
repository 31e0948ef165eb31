"""The site's own error pages, in its layout, in every configuration.

- ``404.html`` and ``500.html`` (``templates/``) are Django's ``handler404``/``handler500``
  pages with ``DEBUG=false``. With ``DEBUG=true`` Django answers a missing page with its
  debug page instead (listing every route): ``NotFoundPageMiddleware`` replaces any such
  HTML 404 of the site's pages with ``404.html`` too. The API (its own JSON errors), the
  admin and static files keep theirs.
- ``locked_out``: django-axes' lock-out answer (``AXES_LOCKOUT_CALLABLE``), a page in the
  site's layout saying how long the lock lasts.
"""

from __future__ import annotations

from django.conf import settings
from django.shortcuts import render

#: paths whose 404 answers are not the site's pages
OTHER_PREFIXES = ("/api/", "/admin/", "/static/", "/ws/")


class NotFoundPageMiddleware:
    """With ``DEBUG=true``, answer a missing site page with ``404.html`` (not Django's debug
    page). Listed before ``CommonMiddleware``, so its slash redirects happen first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and response.get("Content-Type", "").startswith("text/html")
            and not request.path.startswith(OTHER_PREFIXES)
        ):
            return render(request, "404.html", status=404)
        return response


def locked_out(request, credentials, *args, **kwargs):
    """django-axes' answer once a user name is locked out from an address (429)."""
    cool_off = settings.AXES_COOLOFF_TIME
    minutes = max(1, int(cool_off.total_seconds() + 59) // 60)
    return render(
        request,
        "registration/locked_out.html",
        {"minutes": minutes, "limit": settings.AXES_FAILURE_LIMIT},
        status=429,
    )
