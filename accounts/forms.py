from django import forms

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
