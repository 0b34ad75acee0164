"""The REST catalog protocol: its wire shapes (:mod:`frazil.rest.wire`), shared by frazil's
REST client (:mod:`frazil.catalog.rest`) and its REST catalog server (:mod:`frazil.server`,
``frazil serve``)."""
