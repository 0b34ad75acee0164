"""frazil's REST catalog server (``frazil serve``): the Starlette app (:mod:`.app`), its OAuth2
token endpoint (:mod:`.auth`), server-side scan planning (:mod:`.planning`) and the process
that runs it (:mod:`.serve`). The wire shapes it shares with the client
(:mod:`frazil.catalog.rest`) are :mod:`frazil.rest.wire`."""
