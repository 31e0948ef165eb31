"""The signed-in user (and deleting their account), their API tokens, and the log-in with a
user name and password that makes a token (``arena login``)."""

from __future__ import annotations

from django.contrib.auth import authenticate
from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import exceptions, mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from competition.accounts import deletion
from competition.accounts.tokens import TooManyTokens, issue_token
from competition.api.serializers import users as s
from competition.api.throttles import WriteScopedRateThrottle
from competition.api.views.common import IdLookup, JSONOnly, parse_int
from competition.models.accounts import MAX_TOKENS_PER_USER, ApiToken
from competition.models.filters import ID_MAX, ID_MIN


class MeView(JSONOnly, APIView):
    """The signed-in user; ``DELETE`` with the password deletes the account."""

    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "writes"

    @extend_schema(responses=s.MeSerializer)
    def get(self, request):
        return Response(
            {"username": request.user.get_username(), "is_staff": request.user.is_staff}
        )

    @extend_schema(
        request=s.DeleteMeSerializer,
        responses={
            204: None,
            400: OpenApiResponse(description="The password is missing or wrong: nothing deleted."),
        },
    )
    def delete(self, request):
        body = s.DeleteMeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        if not request.user.check_password(body.validated_data["password"]):
            raise exceptions.ValidationError(
                {"password": "That is not your password: the account was not deleted."}
            )
        deletion.delete_account(request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _issued(user, data: dict) -> Response:
    try:
        token, key = issue_token(user, data["name"], data["days"])
    except TooManyTokens as exc:
        raise exceptions.ValidationError({"detail": str(exc)}) from None
    token.token = key
    return Response(s.NewTokenSerializer(token).data, status=status.HTTP_201_CREATED)


class TokenViewSet(
    JSONOnly, IdLookup, mixins.ListModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    """The signed-in user's API tokens: list, make one (its key shown this once), revoke."""

    serializer_class = s.TokenSerializer
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "writes"
    pagination_class = None  # at most MAX_TOKENS_PER_USER live ones (and the expired)

    def get_queryset(self):
        return ApiToken.objects.filter(user=self.request.user)[: MAX_TOKENS_PER_USER * 2]

    def get_object(self):
        pk = parse_int(self.kwargs.get("pk"), ID_MIN, ID_MAX)  # anything else: a 404, no query
        token = ApiToken.objects.filter(user=self.request.user, pk=pk).first() if pk else None
        if token is None:
            raise exceptions.NotFound("No such token of yours.")
        return token

    @extend_schema(request=s.TokenCreateSerializer, responses={201: s.NewTokenSerializer})
    def create(self, request):
        body = s.TokenCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        return _issued(request.user, body.validated_data)

    @extend_schema(
        request=None,
        responses={
            204: OpenApiResponse(description="The token of this request is revoked."),
            400: OpenApiResponse(description="Signed in without a token: nothing to revoke."),
        },
    )
    @action(detail=False, methods=["delete"], url_path="current")
    def current(self, request):
        """Revoke the token this request is signed with (``arena logout``)."""
        if not isinstance(request.auth, ApiToken):
            raise exceptions.ValidationError(
                {"detail": "This request is signed in without a token: there is none to revoke."}
            )
        request.auth.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class LoginView(JSONOnly, APIView):
    """A new API token from a user name and password (``arena login``); failed log-ins count
    toward the same lock-out as the site's."""

    authentication_classes = []
    permission_classes = [permissions.AllowAny]
    throttle_classes = [WriteScopedRateThrottle]
    throttle_scope = "writes"

    def get_authenticate_header(self, request) -> str:
        return "Token"  # a wrong password is a 401, as a wrong token is

    @extend_schema(request=s.LoginSerializer, responses={201: s.NewTokenSerializer})
    def post(self, request):
        body = s.LoginSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            user = authenticate(
                request._request, username=data["username"], password=data["password"]
            )
        except PermissionDenied:
            raise exceptions.PermissionDenied(
                "Too many failed log-ins for this user name: try again later."
            ) from None
        if user is None:
            raise exceptions.AuthenticationFailed("Wrong user name or password.")
        return _issued(user, data)
