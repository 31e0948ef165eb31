"""The site's own error pages, in its layout, in every configuration: ``404.html``/``500.html``,
also with ``DEBUG=true`` for the site's pages, and django-axes' lock-out page."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render

#: paths whose 404 answers are not the site's pages
OTHER_PREFIXES = ("/api/", "/admin/", "/static/", "/ws/")


class NotFoundPageMiddleware:
    """With ``DEBUG=true``, answer a missing site page with ``404.html`` rather than Django's
    route list. Listed before ``CommonMiddleware`` so its slash redirects come first."""

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
    """django-axes' answer once a user name is locked out from an address (429): a page, or
    for the API's log-in (``arena login``) a JSON body."""
    cool_off = settings.AXES_COOLOFF_TIME
    minutes = max(1, int(cool_off.total_seconds() + 59) // 60)
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {
                "detail": f"Too many failed log-ins for this user name: try again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}."
            },
            status=429,
        )
        response["Retry-After"] = str(int(cool_off.total_seconds()))
        return response
    return render(
        request,
        "registration/locked_out.html",
        {"minutes": minutes, "limit": settings.AXES_FAILURE_LIMIT},
        status=429,
    )
