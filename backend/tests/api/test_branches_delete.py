"""Deleting a session that has branches asks what becomes of them: kept (standalone, their
past still theirs) or deleted with it; and a branch's export includes its past."""

from __future__ import annotations

from tests.api.branching import branch, sees, shown, three_questions
from tests.conftest import Api
from tests.support.llm import ScriptedLLM
from tests.support.server import LiveServer


def test_a_parent_with_branches_is_deleted_only_as_asked(
    live: LiveServer, alice: Api, llm: ScriptedLLM
) -> None:
    session, runs = three_questions(alice, llm)
    kept = branch(alice, session["id"], runs[1]["id"])
    deeper = branch(alice, kept["id"], runs[0]["id"])  # after a run the branch inherited
    asked = alice.post(f"/runs/{runs[0]['id']}/comments", json={"body": "Net or gross?"}).json()
    alice.post(f"/runs/{runs[0]['id']}/comments", json={"body": "Net.", "reply_to": asked["id"]})
    alice.post(f"/runs/{runs[2]['id']}/comments", json={"body": "After the branch point"})
    refused = alice.delete(f"/sessions/{session['id']}")
    assert refused.status_code == 409
    assert refused.json()["code"] == "has_branches"
    assert "1 branch" in refused.json()["detail"]
    assert alice.get(f"/sessions/{session['id']}").status_code == 200  # nothing was deleted

    assert (
        alice.delete(f"/sessions/{session['id']}", params={"branches": "keep"}).status_code == 204
    )
    assert alice.get(f"/sessions/{session['id']}").status_code == 404
    standalone = alice.get(f"/sessions/{kept['id']}").json()
    assert standalone["parent_session_id"] is None
    past = alice.get(f"/sessions/{kept['id']}/runs").json()["items"]
    assert [r["final_answer"] for r in past] == ["A1", "A2"]  # its past, now its own
    assert all(r["session_id"] == kept["id"] and not r["inherited"] for r in past)
    assert past[0]["steps"][0]["code"].startswith("import pandas")
    # The comments on the copied runs came with them, replies under their comment.
    thread = alice.get(f"/runs/{past[0]['id']}/comments").json()
    assert thread["total"] == 2
    [first, reply] = thread["items"]
    assert (first["body"], first["reply_to"]) == ("Net or gross?", None)
    assert (reply["body"], reply["reply_to"]) == ("Net.", first["id"])
    assert first["id"] != asked["id"] and first["author"]["email"] == "alice@example.com"
    assert alice.get(f"/runs/{past[1]['id']}/comments").json()["total"] == 0
    nested = alice.get(f"/sessions/{deeper['id']}/runs").json()["items"]
    assert [r["final_answer"] for r in nested] == ["A1"]
    assert nested[0]["id"] == past[0]["id"]  # the branch of the branch follows the copy
    tree = alice.get(f"/sessions/{deeper['id']}/tree").json()
    assert tree["session"]["id"] == kept["id"]
    assert [c["session"]["id"] for c in tree["children"]] == [deeper["id"]]
    output, _ = shown(alice, kept["id"], llm)  # and it still starts from Q2's variables
    sees(output, 2)

    gone = alice.delete(f"/sessions/{kept['id']}", params={"branches": "delete"})
    assert gone.status_code == 204
    assert alice.get(f"/sessions/{kept['id']}").status_code == 404
    assert alice.get(f"/sessions/{deeper['id']}").status_code == 404
    log = alice.get(f"/projects/{session['project_id']}/audit").json()["items"]
    summaries = [e["summary"] for e in log if e["action"] == "session.deleted"]
    assert any("keeping its 1 branch(es)" in s for s in summaries), summaries
    assert any("and its 1 branch(es)" in s for s in summaries), summaries


def test_a_branch_exports_with_its_past(live: LiveServer, alice: Api, llm: ScriptedLLM) -> None:
    session, runs = three_questions(alice, llm)
    after_q1 = branch(alice, session["id"], runs[0]["id"])
    shown(alice, after_q1["id"], llm)
    markdown = alice.get(f"/sessions/{after_q1['id']}/export", params={"format": "md"})
    assert markdown.status_code == 200, markdown.text
    text = markdown.text
    assert "Question answered by A1" in text and "Question answered by shown" in text
    assert text.index("Question answered by A1") < text.index("Question answered by shown")
    assert "Question answered by A2" not in text  # the parent's later questions are not its past
    notebook = alice.get(f"/sessions/{after_q1['id']}/export", params={"format": "ipynb"}).json()
    code = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code")
    assert code.index("config = {'k': 1}") < code.index("print('config', config)")
