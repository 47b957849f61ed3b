"""The web console at /console: server-rendered pages over the REST handlers.

Every page calls the same REST route functions (and so the same agent functions and
scope checks) as a client of /v1 would, with the Caller resolved from the API key kept
in an HttpOnly, SameSite=Strict cookie. No JavaScript is needed; assets ship here.
"""
