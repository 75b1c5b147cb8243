"""``hermes serve``: a local web app to browse, search and read every stored session, live.

The entry point (:mod:`.plugin`) only adds the command; the rest loads when it runs:
:mod:`.command` (options), :mod:`.serving` (the socket on 127.0.0.1 and uvicorn),
:mod:`.guard` (token cookie, Host check, CSRF, security headers), :mod:`.app` (the routes),
:mod:`.archive` (every read and write, through the store protocol, redacted on request),
:mod:`.pages` (the HTML around the HTML exporter's renderer) and the packaged
``web.js``/``web.css``.
"""
