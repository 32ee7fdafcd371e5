from django.urls import path

from campaigns import views

urlpatterns = [
    path("u/<str:token>", views.unsubscribe, name="campaigns-unsubscribe"),
]
