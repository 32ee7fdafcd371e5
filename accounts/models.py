import uuid

from django.contrib.auth.models import AbstractUser, BaseUserManager
from django.db import models
from django.utils import timezone


class UserManager(BaseUserManager):
    use_in_migrations = True

    def _create(self, email, password, **extra):
        if not email:
            raise ValueError("email is required")
        user = self.model(email=self.normalize_email(email).lower(), **extra)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save(using=self._db)
        return user

    def create_user(self, email, password=None, **extra):
        extra.setdefault("is_staff", False)
        extra.setdefault("is_superuser", False)
        return self._create(email, password, **extra)

    def create_superuser(self, email, password=None, **extra):
        extra["is_staff"] = True
        extra["is_superuser"] = True
        return self._create(email, password, **extra)


class User(AbstractUser):
    """A person, identified by email. There are no passwords in the product (sign-in is by emailed code)."""

    username = None
    email = models.EmailField(unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: list[str] = []
    objects = UserManager()

    def __str__(self):
        return self.email


class Workspace(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self):
        return f"{self.name} ({self.id})"


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner"
        ADMIN = "admin"
        MEMBER = "member"

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "workspace"], name="uniq_membership")]

    @property
    def can_approve(self) -> bool:
        return self.role in (self.Role.OWNER, self.Role.ADMIN)


class Scope(models.TextChoices):
    ASSETS_PURCHASE = "assets:purchase", "Buy sending capacity (setup_sending)"
    CAMPAIGN_WRITE = "campaign:write", "Create campaigns"
    CAMPAIGN_LAUNCH = "campaign:launch", "Launch campaigns (launch_campaign)"
    REPLIES_SEND = "replies:send", "Answer replies (send_reply)"


ALL_SCOPES = [s.value for s in Scope]


class ApiKey(models.Model):
    """An API key. Only a keyed hash of the secret is stored; `prefix` finds the row, the hash proves it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="default")
    prefix = models.CharField(max_length=32, unique=True)
    hashed_secret = models.CharField(max_length=128)
    last4 = models.CharField(max_length=4)
    scopes = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    answers_per_day = models.PositiveIntegerField(null=True, blank=True, help_text=(
        "How many replies a UTC day this key (or OAuth connection) may send without a human's approval; "
        "null: every answer needs an approval."))

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def display(self) -> str:
        return f"{self.prefix}…{self.last4}"

    def has_scope(self, scope: str | None) -> bool:
        return scope is None or scope in (self.scopes or [])

    def connection_name(self) -> str | None:
        """The client's name when this key is an OAuth connection's principal (OAuthGrant), else None."""
        grant = getattr(self, "oauth_grant", None)  # the reverse one-to-one; None for a console key
        return grant.client_name if grant is not None else None

    def __str__(self):
        return f"{self.name} {self.display}"


class ConfirmationToken(models.Model):
    """A single-use human approval for a purchase or launch (CONTRACT section 3)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        DENIED = "denied"
        EXPIRED = "expired"
        USED = "used"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="confirmation_tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    token_hint = models.CharField(max_length=16)
    verb = models.CharField(max_length=64)
    params_hash = models.CharField(max_length=64)
    params = models.JSONField(default=dict)
    summary = models.JSONField(default=dict, help_text="What will happen, for the approval page.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    issued_request_id = models.CharField(max_length=64, blank=True, default="")
    decided_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(null=True, blank=True)
    used_request_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        indexes = [models.Index(fields=["workspace", "status", "-created_at"])]

    @property
    def is_expired(self) -> bool:
        return self.status in (self.Status.PENDING, self.Status.APPROVED) and self.expires_at <= timezone.now()

    @property
    def effective_status(self) -> str:
        return self.Status.EXPIRED if self.is_expired else self.status


class SignInLink(models.Model):
    """An emailed one-time sign-in link (sent beside the allauth code). Only a SHA-256 of the token is
    stored; the link signs in only after a POST on its confirmation page (mail scanners follow GETs)."""

    id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="+")
    email = models.EmailField()
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["email", "-created_at"])]


class Invitation(models.Model):
    """An invitation to join a workspace; accepted when a user with that (verified) email signs in."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Membership.Role.choices, default=Membership.Role.MEMBER)
    invited_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["email", "accepted_at"])]


# --- OAuth 2.1 for the MCP server (the console is the authorization server) ----------------------------
class OAuthClient(models.Model):
    """An MCP client known to the authorization server: registered dynamically (RFC 7591, `client_id` a
    random id) or identified by its client ID metadata document (`client_id` is the document's HTTPS URL,
    the document is fetched and cached). A client secret, when one was issued, is stored only as a hash."""

    class Kind(models.TextChoices):
        REGISTERED = "registered"
        METADATA_DOCUMENT = "metadata_document"

    id = models.BigAutoField(primary_key=True)
    client_id = models.CharField(max_length=500, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    client_name = models.CharField(max_length=200, blank=True, default="")
    redirect_uris = models.JSONField(default=list)
    token_endpoint_auth_method = models.CharField(max_length=40, default="none")
    secret_hash = models.CharField(max_length=64, blank=True, default="")
    metadata = models.JSONField(default=dict, help_text="The client metadata as registered or fetched.")
    created_at = models.DateTimeField(default=timezone.now)
    fetched_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return self.client_name or self.client_id


class OAuthGrant(models.Model):
    """A connection: one member's consent for one client in one workspace. The grant's `api_key` is its
    principal: the scopes granted, the rate-limit bucket, the request records and last use, exactly as for
    a key made in the console (the key has no secret; only this grant's access tokens resolve to it)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="oauth_grants")
    user = models.ForeignKey(User, null=True, on_delete=models.SET_NULL, related_name="+")
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="grants")
    client_name = models.CharField(max_length=200)
    redirect_uri = models.CharField(max_length=2000)
    api_key = models.OneToOneField(ApiKey, on_delete=models.CASCADE, related_name="oauth_grant")
    created_at = models.DateTimeField(default=timezone.now)
    revoked_at = models.DateTimeField(null=True, blank=True)


class OAuthAuthorization(models.Model):
    """One authorization request: waiting for the member's consent, then (approved) the single-use code."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    client = models.ForeignKey(OAuthClient, on_delete=models.CASCADE, related_name="+")
    redirect_uri = models.CharField(max_length=2000)
    redirect_uri_provided_explicitly = models.BooleanField(default=True)
    code_challenge = models.CharField(max_length=128)
    state = models.CharField(max_length=2000, blank=True, default="")
    scopes_requested = models.JSONField(default=list)
    resource = models.CharField(max_length=2000, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    grant = models.ForeignKey(OAuthGrant, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    code_hash = models.CharField(max_length=64, null=True, blank=True, unique=True)
    code_expires_at = models.DateTimeField(null=True, blank=True)
    code_used_at = models.DateTimeField(null=True, blank=True)


class OAuthToken(models.Model):
    """An access or refresh token of a grant; only a keyed hash is stored. A refresh token is used once
    (rotation): `used_at` set, a new pair issued; presenting it again revokes the whole grant."""

    class Kind(models.TextChoices):
        ACCESS = "access"
        REFRESH = "refresh"

    id = models.BigAutoField(primary_key=True)
    grant = models.ForeignKey(OAuthGrant, on_delete=models.CASCADE, related_name="tokens")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    resource = models.CharField(max_length=2000, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
