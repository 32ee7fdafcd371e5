from django import forms

from sending.models import Mailbox

SECURITY = [(Mailbox.Security.STARTTLS, "STARTTLS"), (Mailbox.Security.SSL, "TLS (implicit)"),
            (Mailbox.Security.NONE, "None (local test servers only)")]


class ByoMailboxForm(forms.Form):
    email = forms.EmailField(label="Email address", max_length=254)
    first_name = forms.CharField(label="Sender first name", max_length=100, required=False)
    last_name = forms.CharField(label="Sender last name", max_length=100, required=False)
    smtp_host = forms.CharField(label="SMTP host", max_length=253)
    smtp_port = forms.IntegerField(label="SMTP port", min_value=1, max_value=65535, initial=587)
    smtp_security = forms.ChoiceField(label="SMTP security", choices=SECURITY, initial=Mailbox.Security.STARTTLS)
    smtp_username = forms.CharField(label="SMTP username", max_length=254, required=False,
                                    help_text="Defaults to the email address.")
    imap_host = forms.CharField(label="IMAP host", max_length=253)
    imap_port = forms.IntegerField(label="IMAP port", min_value=1, max_value=65535, initial=993)
    imap_security = forms.ChoiceField(label="IMAP security", choices=SECURITY, initial=Mailbox.Security.SSL)
    imap_username = forms.CharField(label="IMAP username", max_length=254, required=False,
                                    help_text="Defaults to the email address.")
    secret = forms.CharField(label="Password or app password", widget=forms.PasswordInput, max_length=500,
                             help_text="Stored encrypted; never shown again.")

    def clean(self):
        data = super().clean()
        if data.get("email"):
            data["email"] = data["email"].strip().lower()
            data["smtp_username"] = data.get("smtp_username") or data["email"]
            data["imap_username"] = data.get("imap_username") or data["email"]
        return data
