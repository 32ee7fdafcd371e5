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

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def display(self) -> str:
        return f"{self.prefix}…{self.last4}"

    def has_scope(self, scope: str | None) -> bool:
        return scope is None or scope in (self.scopes or [])

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
