from api.views import verb_urlpatterns
from config.urls import handler400, handler403, handler404, handler500  # noqa: F401
from config.urls import urlpatterns as product_urlpatterns
from tests import testverbs

urlpatterns = verb_urlpatterns([testverbs.echo, testverbs.confirm]) + product_urlpatterns
