"""``orlbuild serve``: the judging pages, the lead's round pages and a read-only JSON API.

A FastAPI application (:func:`orlbuild.web.app.create_app`) with server-rendered
Jinja2 pages and HTMX (vendored in ``static/`` with its licence), run under
uvicorn; installed with the optional extra ``web``
(docs/judging-in-the-browser.md). Every route reaches the store through
:mod:`orlbuild.services` only; nothing here is imported by the other commands.
"""
