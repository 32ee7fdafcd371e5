from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication

from accounts.services import key_authenticate


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer service_sk_live_…` for DRF views outside the verb pipeline."""

    def authenticate(self, request):
        if not request.headers.get("Authorization"):
            return None
        key = key_authenticate(authorization=request.headers.get("Authorization"))
        return (None, key)

    def authenticate_header(self, request):
        return "Bearer"


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "service_sk_live_…"}
