from django.conf import settings


def service(request):
    return {"SANDBOX": settings.SANDBOX, "BASE_URL": settings.BASE_URL}
