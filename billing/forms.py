from django import forms
from django.conf import settings


class TopupForm(forms.Form):
    pack = forms.IntegerField(required=False, widget=forms.HiddenInput)
    credits = forms.IntegerField(required=False, min_value=1, label="Custom amount (credits)")

    def clean(self):
        data = super().clean()
        amount = data.get("pack") or data.get("credits")
        if not amount:
            raise forms.ValidationError("Choose a pack or enter an amount.")
        if amount < settings.TOPUP_MIN_CREDITS:
            raise forms.ValidationError(f"The smallest top-up is {settings.TOPUP_MIN_CREDITS:,} credits.")
        data["amount"] = amount
        return data
