"""The Attack page's report: the question, the data's shape, the attack's result, the verdict band, the warnings and
each ε's dp_accounting event, offline, and no cell value of an uploaded file."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from dpcore.audit import run_audit
from dpcore.datasets import load_csv
from dpcore.decision.report import attack_report_html, attack_report_json

LABELS = ("stayed_48213", "churned_90377")  # class labels are cell values too


@pytest.fixture(scope="module")
def attacked():
    """A customer table of distinctive 7-digit cells, one column's bounds left to be read from the rows (a leak the
    report must name without printing those extremes), attacked by the loss threshold on a private model and on
    its non-private twin."""
    rng = np.random.default_rng(43)
    n = 240
    X = rng.integers(1_000_001, 9_999_998, size=(n, 3))
    score = (X[:, 0] - 5.5e6) / 2.6e6 + rng.normal(0, 0.5, n)
    y = np.where(score > 0, LABELS[1], LABELS[0])
    text = "monthly_spend,visits,tenure_days,churn\n" + "".join(
        f"{a},{b},{c},{lab}\n" for (a, b, c), lab in zip(X, y))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = load_csv(text, label_column="churn", name="customers.csv",
                      bounds="monthly_spend=1000000:10000000, visits=1000000:10000000")
    audits = {"DP-SGD, ε = 1": run_audit("dpsgd", ds, epsilon=1.0, attack="loss", pool_size=160, seed=0,
                                         params={"epochs": 3}),
              "Non-private model": run_audit("logreg", ds, epsilon=1.0, attack="loss", pool_size=160, seed=0)}
    said = [(str(w.message), "leak" in str(w.message)) for w in caught]
    cells = {str(v) for v in X.ravel()} | set(LABELS)
    question = {"model attacked": "DP-SGD", "attack": "Loss threshold", "ε asked": "1"}
    accuracy = {k: getattr(a, "target_accuracy", None) for k, a in audits.items()}
    kw = dict(dataset=ds, question=question, accuracy=accuracy, noise="seeded (seed 0)", warnings=said)
    return attack_report_html(audits, **kw), attack_report_json(audits, **kw), cells, said


def test_no_cell_value_of_the_uploaded_file_appears_in_the_attack_report(attacked):
    html, doc, cells, said = attacked
    assert said and any("tenure_days" in m for m, _ in said)  # the file's own warning is in the report ...
    assert len(cells) > 700
    for text in (html, json.dumps(doc, ensure_ascii=False)):
        leaked = sorted(c for c in cells if c in text)
        assert leaked == [], f"cell values in the report: {leaked[:5]}"


def test_the_attack_report_holds_the_question_the_result_the_band_and_each_events(attacked):
    html, doc, _, _ = attacked
    assert doc["data"]["rows"] == 240 and doc["data"]["classes"] == 2
    assert [c["column"] for c in doc["data"]["columns"]] == ["monthly_spend", "visits", "tenure_days"]
    assert "read from the data" in doc["data"]["columns"][2]["bounds"]  # named, its extremes not printed
    private, twin = doc["models"]
    assert private["epsilon_claimed"] == pytest.approx(1.0) and "DpEvent(" in private["dp_event"]
    assert twin["epsilon_claimed"] == float("inf")
    assert 0.0 <= private["epsilon_proven"] <= private["epsilon_claimed"] + 1e-9
    assert doc["verdict"]["band"] and doc["verdict"]["band"] in html
    risk = html[html.index("Risk at the claimed ε"):html.index("Warnings:")]
    assert risk.count(doc["verdict"]["band"]) == 1 and f"<b>{doc['verdict']['band']}</b>" in risk  # named once
    assert "**" not in risk  # no Markdown left in the HTML
    assert doc["warnings"][0]["leak"]  # leaks first
    assert doc["versions"]["dp-accounting"] and doc["created"]
    for words in ("The question asked", "The attack's result", "Risk at the claimed ε", "Warnings:",
                  "Each ε and its dp_accounting event", "Your data", "How it was computed", "tenure_days",
                  "Loss threshold", "1000000 to 10000000 (declared)"):
        assert words in html


def test_the_attack_report_opens_offline(attacked):
    html = attacked[0]
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html and not re.search(r"(src|href)=\"https?://", html)


def test_with_declared_class_shares_the_report_gives_balanced_accuracy_beside_accuracy_and_names_no_class():
    """Answering by the shares, the attacked model's accuracy on unseen records read 15.5 % (beside a balanced
    accuracy of 0.531 the page showed): the report now gives both."""
    from dpcore.audit.canaries import input_canary_audit

    rng = np.random.default_rng(1)
    n = 1200
    y = rng.random(n) < 0.1
    X = rng.normal(size=(n, 3)) + 1.5 * y[:, None]
    text = "a,b,c,ward\n" + "".join(f"{r[0]:.4f},{r[1]:.4f},{r[2]:.4f},{'seen_7731' if t else 'home_2290'}\n"
                                    for r, t in zip(X, y))
    ds = load_csv(text, label_column="ward", name="ward.csv", bounds="*=-6:6").with_class_shares(
        "home_2290=0.9, seen_7731=0.1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        audits = {"Non-private network": input_canary_audit("non-private", ds, epsilon=1.0, canaries=100, seed=0)}
    kw = dict(dataset=ds, question={"attack": "canaries"}, accuracy={k: a.accuracy for k, a in audits.items()},
              noise="seeded (seed 0)")
    html, doc = attack_report_html(audits, **kw), attack_report_json(audits, **kw)
    (model,) = doc["models"]
    assert model["balanced_accuracy"] == pytest.approx(audits["Non-private network"].balanced_accuracy)
    assert "<th>balanced accuracy</th>" in html and f"{model['balanced_accuracy']:.3f}" in html
    assert "seen_7731" not in html and "home_2290" not in html


def test_a_model_whose_epsilon_is_for_a_record_replaced_is_reported_with_no_claim_and_the_reason_not_as_not_private():
    audits = {"Objective perturbation, ε = 1": run_audit("erm-objective", "breast_cancer", epsilon=1.0, attack="loss",
                                                         seed=0)}
    kw = dict(dataset="breast_cancer", question={"attack": "Loss threshold"}, noise="seeded (seed 0)")
    doc, html = attack_report_json(audits, **kw), attack_report_html(audits, **kw)
    model = doc["models"][0]
    assert model["epsilon_claimed"] == float("inf") and "one record replaced" in model["claim_note"]
    assert "∞ (no claim for this question: see below)" in html and "∞ (no privacy)" not in html
    risk = html[html.index("Risk at the claimed ε"):html.index("Warnings:")]
    assert "No claim to test: the attack asks whether a record was in the training set, and its ε = 1" in risk
