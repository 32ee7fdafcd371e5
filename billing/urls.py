from django.urls import path

from billing import views

urlpatterns = [
    path("billing/stripe/webhook", views.stripe_webhook, name="stripe-webhook"),
]
