from .broker_fetch import register as _register_broker_fetch
from .celery import app as celery_app

_register_broker_fetch()  # after config.celery: over whichever filesystem transport it registered

__all__ = ["celery_app"]
