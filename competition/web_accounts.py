"""Accounts: sign up, and the profile page with the user's API token.

Log in, log out and the password reset come from ``django.contrib.auth.urls`` (templates
in ``templates/registration/``); password-reset mail goes through ``EMAIL_BACKEND`` (the
console by default).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from bots.models import Bot, EndpointKind
from competition.forms import SignUpForm


def signup(request):
    if request.user.is_authenticated:
        return redirect("profile")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}! Register a bot to start playing.")
        target = request.POST.get("next") or ""
        if url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
            return redirect(target)
        return redirect("bot-list")
    return render(request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")})


@login_required
def profile(request):
    token, _created = Token.objects.get_or_create(user=request.user)
    bots = Bot.objects.filter(owner=request.user).exclude(kind=EndpointKind.HUMAN).count()
    return render(request, "accounts/profile.html", {"token": token, "bots": bots})


@login_required
@require_POST
def token_regenerate(request):
    with transaction.atomic():
        Token.objects.filter(user=request.user).delete()
        Token.objects.create(user=request.user)
    messages.success(request, "A new API token was made; the old one no longer works.")
    return redirect("profile")
