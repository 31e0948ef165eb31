"""Accounts: sign up, and the profile page with the user's API token.

Log in, log out and the password reset come from ``django.contrib.auth.urls`` (templates
in ``templates/registration/``); password-reset mail goes through ``EMAIL_BACKEND`` (the
console by default). Sign-up and password-reset requests are rate-limited
(``competition/ratelimit.py``): per client address, and per e-mail address for resets;
past a limit the answer is a 429 page. Log-ins are limited by django-axes.
"""

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

from bots.models import Bot
from competition.ratelimit import Limit, client_address, refused
from competition.web.forms import SignUpForm

#: sign-up attempts per client address
SIGNUP_PER_ADDRESS = Limit("signup-address", 10, 3600)
#: password-reset requests per client address, and per e-mail address (each may send a mail)
RESET_PER_ADDRESS = Limit("reset-address", 10, 3600)
RESET_PER_EMAIL = Limit("reset-email", 3, 3600)

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
    token, _created = Token.objects.get_or_create(user=request.user)
    bots = Bot.objects.filter(owner=request.user).count()
    return render(request, "accounts/profile.html", {"token": token, "bots": bots})


@login_required
@require_POST
def token_regenerate(request):
    with transaction.atomic():
        Token.objects.filter(user=request.user).delete()
        Token.objects.create(user=request.user)
    messages.success(request, "A new API token was made; the old one no longer works.")
    return redirect("profile")
