"""The built documentation site in a real browser: Debian's headless ``chromium``, driven by
playwright's Python API through ``executable_path`` (no browser download), loading ``site/``
from a local HTTP server on 127.0.0.1. The home page renders with its navigation, the search
finds "upsert", and the API page of ``load_catalog`` exists. A screenshot of the home page is
kept as a test artefact (``$FRAZIL_TEST_ARTIFACTS``, default ``<tmp>/frazil-test-artifacts``).

The site is ``site/`` as ``dev/docs`` built it (CI builds it before the tests); when it is
missing or older than the pages, the test builds it into a temporary directory itself.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from peers import import_peer, peer_missing

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "mkdocs.yml", *(ROOT / "docs").rglob("*.md")]


def _current_site() -> Path | None:
    index = ROOT / "site" / "index.html"
    if not index.is_file():
        return None
    built = index.stat().st_mtime
    return index.parent if all(p.stat().st_mtime <= built for p in SOURCES) else None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    found = _current_site()
    if found is not None:
        return found
    import_peer("mkdocs", "the site's tests need mkdocs (requirements-dev.txt)")
    out = tmp_path_factory.mktemp("site")
    # the hooks import frazil.cli: the frazil this test runs against (the installed wheel)
    env = dict(os.environ, MPLBACKEND="Agg", NO_MKDOCS_2_WARNING="1")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # no access log in test output
        pass


@pytest.fixture(scope="module")
def page(base_url: str) -> Iterator[object]:
    sync_api = import_peer("playwright.sync_api", "the browser test needs playwright")
    chromium = shutil.which("chromium")
    if chromium is None:
        peer_missing("Debian's chromium is not installed (apt-get install -y chromium)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 900})
        finally:
            browser.close()


@pytest.mark.slow
def test_home_page_renders_with_navigation(page, base_url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(base_url + "/")
    assert page.title().startswith("frazil")
    assert page.locator("h1").first.inner_text().rstrip("¶ \n") == "frazil"
    nav = page.locator("nav.md-nav--primary")
    for section in ("Getting started", "Catalogs", "Reading", "Writing", "API reference"):
        assert nav.get_by_text(section, exact=True).count() >= 1, section
    # the first example is highlighted code, not raw text
    assert page.locator("div.highlight pre code").count() >= 1
    artifacts = Path(
        os.environ.get("FRAZIL_TEST_ARTIFACTS")
        or os.path.join(tempfile.gettempdir(), "frazil-test-artifacts")
    )
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "docs-home.png"
    page.screenshot(path=str(shot), full_page=False)
    assert shot.stat().st_size > 10_000
    print(f"screenshot of the documentation home page: {shot}")


@pytest.mark.slow
def test_search_finds_upsert(page, base_url: str) -> None:  # type: ignore[no-untyped-def]
    page.goto(base_url + "/")
    search = page.locator("input.md-search__input")
    search.click()  # at desktop width the search field is in the header
    search.press_sequentially("upsert")  # typed: the search reacts to key events
    results = page.locator("li.md-search-result__item")
    results.first.wait_for(timeout=30_000)
    text = " ".join(results.all_inner_texts()).lower()
    assert "upsert" in text
    pages = [a.get_attribute("href") or "" for a in page.locator("a.md-search-result__link").all()]
    assert any("/writing/" in href for href in pages), pages  # the guide's page, not only the API


@pytest.mark.slow
def test_api_page_of_load_catalog(page, base_url: str) -> None:  # type: ignore[no-untyped-def]
    response = page.goto(base_url + "/api/catalog/")
    assert response is not None and response.status == 200
    heading = page.locator("[id='frazil.catalog.load_catalog']")
    assert heading.count() == 1
    assert "load_catalog" in heading.inner_text()
    # its docstring is rendered below the signature
    assert "FRAZIL_CATALOG__" in page.locator("div.doc-contents").first.inner_text() or (
        "configuration" in page.content()
    )
