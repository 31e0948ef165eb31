"""Accounts: sign up, and the profile: API tokens (each shown once), the archive of
everything about the user, deleting the account. Sign-up and
password resets are rate-limited per address (and per e-mail); log-ins by django-axes."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header, url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from competition.accounts import deletion, export
from competition.accounts.tokens import TooManyTokens, issue_token
from competition.models.accounts import MAX_TOKENS_PER_USER, ApiToken
from competition.models.bots import Bot
from competition.plumbing.ratelimit import Limit, client_address, refused
from competition.web.forms import DeleteAccountForm, SignUpForm, TokenForm

#: sign-up attempts per client address
SIGNUP_PER_ADDRESS = Limit("signup-address", 10, 3600)
#: password-reset requests per client address, and per e-mail address (each may send a mail)
RESET_PER_ADDRESS = Limit("reset-address", 10, 3600)
RESET_PER_EMAIL = Limit("reset-email", 3, 3600)
#: attempts to delete one's account (each checks the password) per user
DELETE_PER_USER = Limit("delete-account", 10, 3600)

#: the session key holding a new token's key until the profile page has shown it once
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
def profile(request, *, token_form=None, delete_form=None, status=200):
    """The profile: the API tokens (a new one's key only on the visit after it was made),
    the archive of everything about the user, and deleting the account."""
    tokens = ApiToken.objects.filter(user=request.user)[: MAX_TOKENS_PER_USER * 2]
    context = {
        "tokens": tokens,
        "new_token": request.session.pop(NEW_TOKEN_KEY, None),
        "token_form": token_form or TokenForm(),
        "delete_form": delete_form or DeleteAccountForm(request.user),
        "bots": Bot.objects.filter(owner=request.user).count(),
    }
    return render(request, "accounts/profile.html", context, status=status)


@login_required
@require_POST
def token_create(request):
    """A new named API token for the signed-in user, its key shown once on the profile."""
    form = TokenForm(request.POST)
    if not form.is_valid():
        return profile(request, token_form=form, status=400)
    try:
        _token, key = issue_token(
            request.user, form.cleaned_data["name"], form.cleaned_data["days"]
        )
    except TooManyTokens as exc:
        form.add_error(None, str(exc))
        return profile(request, token_form=form, status=400)
    request.session[NEW_TOKEN_KEY] = key
    messages.success(request, "A new API token was made: copy it now, it is not shown again.")
    return redirect("profile")


@login_required
@require_POST
def token_revoke(request, pk: int):
    """Revoke one of the signed-in user's tokens (another's: 404)."""
    token = get_object_or_404(ApiToken, pk=pk, user=request.user)
    token.delete()
    messages.success(request, f"The token “{token.name}” was revoked: it no longer works.")
    return redirect("profile")


@login_required
def account_export(request):
    """Everything about the signed-in user as one zip archive, streamed."""
    name = f"arena-{request.user.get_username()}.zip"
    response = StreamingHttpResponse(
        export.archive(request.user, site=request.get_host()), content_type="application/zip"
    )
    response["Content-Disposition"] = content_disposition_header(True, name)
    return response


@login_required
@require_POST
def account_delete(request):
    """Delete the signed-in user's account, confirmed by their password."""
    limited = refused(request, [(DELETE_PER_USER, str(request.user.pk))])
    if limited is not None:
        return limited
    form = DeleteAccountForm(request.user, request.POST)
    if not form.is_valid():
        return profile(request, delete_form=form, status=400)
    deletion.delete_account(request.user)
    logout(request)
    messages.success(
        request, "Your account was deleted. Its bots' matches stay, by “deleted user”."
    )
    return redirect("home")
