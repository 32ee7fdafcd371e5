from django import forms
from django.conf import settings

from accounts.models import Membership, Scope


class KeyCreateForm(forms.Form):
    name = forms.CharField(max_length=100, initial="default", help_text="So you can tell your keys apart.")
    scopes = forms.MultipleChoiceField(
        choices=Scope.choices, required=False, widget=forms.CheckboxSelectMultiple,
        help_text="Every other verb needs only a valid key.",
    )


class InviteForm(forms.Form):
    email = forms.EmailField()
    role = forms.ChoiceField(choices=Membership.Role.choices, initial=Membership.Role.MEMBER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Membership.Role.choices)


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
