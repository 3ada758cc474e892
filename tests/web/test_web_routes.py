"""Route tests of ``orlbuild serve`` with Starlette's TestClient (issue 34;
docs/judging-in-the-browser.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orlbuild.services import rounds
from tests.stores import store_engine
from tests.web.rounds_data import built_store
from tests.web.web_clients import logged_in

pytest.importorskip("fastapi")

_PAIR = re.compile(r'data-key="([0-9a-f]+)" data-left="([^"]+)" data-right="([^"]+)"')


@pytest.fixture
def engine(migrated_db_url: str, tmp_path: Path):  # type: ignore[no-untyped-def]
    built_store(migrated_db_url, tmp_path)
    with store_engine(migrated_db_url) as engine:
        rounds.open_round(engine, "b", budget=4, per_pair=1)
        yield engine


def _shown(html: str) -> tuple[str, str, str]:
    match = _PAIR.search(html)
    assert match is not None, html
    return match.group(1), match.group(2), match.group(3)


def test_judge_shows_a_pair_and_htmx_answers_return_the_next_fragment(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "ann") as ann:
        page = ann.client.get("/judge")
        assert page.status_code == 200 and "<html" in page.text
        assert "/static/htmx.min.js" in page.text
        key, left, right = _shown(page.text)
        answer = ann.post(
            "/judge/answer", {"key": key, "choice": "right"}, headers={"HX-Request": "true"}
        )
        assert answer.status_code == 200
        assert answer.text.lstrip().startswith('<section id="pair"')  # a fragment, no page
        assert "<html" not in answer.text
        assert "you judged 1;" in answer.text
        next_key = _shown(answer.text)[0]
        assert next_key != key
        # a double click: the same answer again counts once
        again = ann.post("/judge/answer", {"key": key, "choice": "right"})
        assert again.status_code == 303
        (mine,) = rounds.my_judgments(engine, ann_record(engine, "ann"))
        assert (mine.outcome, mine.item_a if mine.a_left else mine.item_b) == ("right", left)
        undone = ann.post("/judge/undo", headers={"HX-Request": "true"})
        assert _shown(undone.text)[:3] == (key, left, right)
        assert "taken back" in undone.text
        assert rounds.my_judgments(engine, ann_record(engine, "ann")) == []


def ann_record(engine, name: str):  # type: ignore[no-untyped-def]
    from orlbuild.services.web_users import find_web_user  # type: ignore[attr-defined]

    return find_web_user(engine, name)


def test_skip_needs_a_reason_and_me_lists_and_corrects(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "ann") as ann:
        key, _, _ = _shown(ann.client.get("/judge").text)
        refused = ann.post("/judge/answer", {"key": key, "choice": "skip"})
        assert refused.status_code == 400 and "reason" in refused.text
        ann.post("/judge/answer", {"key": key, "choice": "skip", "reason": "unreadable"})
        me = ann.client.get("/me")
        assert "skip: unreadable" in me.text and "Correct" in me.text
        assert ann.post("/me/correct", {"key": key, "choice": "tie"}).status_code == 303
        (mine,) = rounds.my_judgments(engine, ann_record(engine, "ann"))
        assert (mine.outcome, mine.reason) == ("tie", None)


def test_a_lead_opens_and_closes_a_round_from_the_page(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "lea", "lead") as lea:
        page = lea.client.get("/rounds")
        assert page.status_code == 200 and "Open a round" in page.text
        assert lea.post("/rounds/open", {"build": "b", "budget": "3"}).status_code == 303
        key, _, _ = _shown(lea.client.get("/judge").text)
        lea.post("/judge/answer", {"key": key, "choice": "left"})
        assert lea.post("/rounds/1/close").status_code == 303
        assert lea.post("/rounds/2/close").status_code == 303
        records = rounds.all_rounds(engine)
        assert [r.status for r in records] == ["closed", "closed"]
        assert records[1].created_by == "lea" and records[1].closed_by == "lea"
        bad = lea.post("/rounds/open", {"build": "nope", "budget": "3"})
        assert bad.status_code == 400 and "nope" in bad.text


def test_an_auditor_sees_the_rounds_without_the_lead_forms(engine) -> None:  # type: ignore[no-untyped-def]
    with logged_in(engine, "aud", "auditor") as aud:
        page = aud.client.get("/rounds")
        assert page.status_code == 200 and "Open a round" not in page.text
        assert aud.post("/rounds/1/close").status_code == 403
