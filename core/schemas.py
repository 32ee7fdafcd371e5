"""Shared OpenAPI shapes: the billing envelope and the error envelope."""

from rest_framework import serializers


class ServiceEnvelopeSerializer(serializers.Serializer):
    request_id = serializers.CharField(help_text="Use with GET /v1/requests/{id}.")
    credits_charged = serializers.CharField(help_text='Exact charge of this call, a credit string ("0" for misses and free verbs).')
    credits_available = serializers.CharField(help_text="Available balance after the call.")


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    request_id = serializers.CharField(allow_null=True)
    details = serializers.DictField(required=False)


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()
