"""API errors in JSON: Django's ``ValidationError`` is a 400, its ``PermissionDenied`` a 403 in
the service's words, an oversized body a 413, too many query parameters a 400."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, status
from rest_framework.serializers import as_serializer_error
from rest_framework.views import exception_handler as drf_exception_handler


class RequestTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge(
            f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
        )
    elif isinstance(exc, TooManyFieldsSent):
        exc = exceptions.ParseError(
            f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} query parameters."
        )
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=as_serializer_error(exc))
    elif isinstance(exc, DjangoPermissionDenied) and str(exc):
        exc = exceptions.PermissionDenied(str(exc))
    return drf_exception_handler(exc, context)
