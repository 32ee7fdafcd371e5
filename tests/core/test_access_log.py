"""The web server's access log (uvicorn.access) never records an OAuth callback's `code` and `state`."""

import logging


def test_oauth_code_and_state_are_redacted_in_the_access_log():
    from core.logfilters import RedactOAuthQuery

    logger = logging.getLogger("uvicorn.access")
    assert any(isinstance(f, RedactOAuthQuery) for f in logger.filters)  # installed when Django starts
    record = logger.makeRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                               ("127.0.0.1:5000", "GET", "/console/mailboxes/oauth/callback/?state=s3cret&code=c0de&x=1",
                                "1.1", 302), None)
    for f in logger.filters:
        f.filter(record)
    line = record.getMessage()
    assert "s3cret" not in line and "c0de" not in line
    assert "state=[redacted]&code=[redacted]&x=1" in line
    other = logger.makeRecord("uvicorn.access", logging.INFO, __file__, 1, '%s - "%s %s HTTP/%s" %d',
                              ("127.0.0.1:5000", "GET", "/v1/campaigns?state=active", "1.1", 200), None)
    for f in logger.filters:
        f.filter(other)
    assert "state=active" in other.getMessage()  # other paths untouched
