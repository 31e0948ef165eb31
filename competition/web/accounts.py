"""Accounts: sign up, and the profile with the user's API token (shown once). Sign-up and
password resets are rate-limited per address (and per e-mail); log-ins by django-axes."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from competition.models.bots import Bot
from competition.plumbing.ratelimit import Limit, client_address, refused
from competition.web.forms import SignUpForm

#: sign-up attempts per client address
SIGNUP_PER_ADDRESS = Limit("signup-address", 10, 3600)
#: password-reset requests per client address, and per e-mail address (each may send a mail)
RESET_PER_ADDRESS = Limit("reset-address", 10, 3600)
RESET_PER_EMAIL = Limit("reset-email", 3, 3600)

#: the session key holding a regenerated token until the profile page has shown it once
NEW_TOKEN_KEY = "new-api-token"

_password_reset = auth_views.PasswordResetView.as_view()


def password_reset(request):
    """Django's password reset, rate-limited per client address and per e-mail."""
    if request.method == "POST":
        email = (request.POST.get("email") or "").strip().lower()
        limited = refused(
            request, [(RESET_PER_ADDRESS, client_address(request)), (RESET_PER_EMAIL, email)]
        )
        if limited is not None:
            return limited
    return _password_reset(request)


def signup(request):
    if request.user.is_authenticated:
        return redirect("profile")
    if request.method == "POST":
        limited = refused(request, [(SIGNUP_PER_ADDRESS, client_address(request))])
        if limited is not None:
            return limited
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}! Register a bot to start playing.")
        target = request.POST.get("next") or ""
        if url_has_allowed_host_and_scheme(
            target, {request.get_host()}, require_https=request.is_secure()
        ):
            return redirect(target)
        return redirect("bot-list")
    return render(
        request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")}
    )


@login_required
def profile(request):
    """The profile; the API token in full only on the visit that made it."""
    token, created = Token.objects.get_or_create(user=request.user)
    shown = request.session.pop(NEW_TOKEN_KEY, None)
    context = {
        "token": token,
        "new_token": token.key if created or shown == token.key else None,
        "bots": Bot.objects.filter(owner=request.user).count(),
    }
    return render(request, "accounts/profile.html", context)


@login_required
@require_POST
def token_regenerate(request):
    """A new API token for the signed-in user only, shown once on the profile."""
    with transaction.atomic():
        Token.objects.filter(user=request.user).delete()
        token = Token.objects.create(user=request.user)
    request.session[NEW_TOKEN_KEY] = token.key
    messages.success(
        request,
        "A new API token was made; copy it now, it is not shown again. The old one no "
        "longer works.",
    )
    return redirect("profile")
