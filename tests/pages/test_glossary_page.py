"""The Glossary page: every term on a page of its own, and a box that finds one."""
from __future__ import annotations

from dpcore.teaching.glossary import GLOSSARY

from .conftest import page


def test_the_glossary_page_lists_every_term_and_finds_one():
    at = page("pages/11_Glossary.py").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert all(f"**{term}**" in text for term in GLOSSARY) and "Judging ε" in text
    term = next(iter(GLOSSARY))
    at.text_input(key="glossary.find").set_value(term.upper()).run()  # any case
    text = " ".join(m.value for m in at.markdown)
    assert f"**{term}**" in text and len([t for t in GLOSSARY if f"**{t}**" in text]) < len(GLOSSARY)
    at.text_input(key="glossary.find").set_value("zzzz-no-such-term").run()
    assert "No term mentions “zzzz-no-such-term”" in " ".join(m.value for m in at.markdown)


def test_the_boxs_own_examples_find_terms_whatever_the_ending_and_sigma_finds_the_symbol():
    # "clipping", the box's first example, found nothing: the text says "clip" and "clipped"
    at = page("pages/11_Glossary.py").run()
    box = at.text_input(key="glossary.find")
    for query, term in (("clipping", "Clip norm (C)"), ("sigma", "Noise multiplier (σ)"), ("membership", None),
                        ("δ", None), ("privacy budget", None),
                        # words the pages show, each now defined
                        ("nominal", "Verdict bands"), ("Poisson", "Poisson sampling"), ("seed", "Seed"),
                        ("secure", "Secure noise"), ("tuning tax", "Tuning tax"), ("DP-ERM", "DP-ERM"),
                        ("mean predictor", "Mean predictor"), ("shuffle", "Poisson sampling"),
                        ("false alarms", "TPR / FPR")):  # the Attack page's words for FPR
        box.set_value(query).run()
        text = " ".join(m.value for m in at.markdown)
        assert "No term mentions" not in text, query
        assert term is None or f"**{term}**" in text


def test_a_search_shows_the_terms_found_before_the_bands_and_deployments():
    # the terms found came after the five bands and ten deployments, below the first screen at 1280×720
    at = page("pages/11_Glossary.py").run()
    at.text_input(key="glossary.find").set_value("clip").run()
    text = next(m.value for m in at.markdown if "**Terms**" in m.value)
    assert text.index("**Clip norm (C)**") < text.index("**Judging ε.**") < text.index("**Published ε**")
    assert "**Seed**" not in text  # only what was found, not every term again
    full = page("pages/11_Glossary.py").run()  # without a search: the bands first, as in every sidebar
    text = next(m.value for m in full.markdown if "**Terms**" in m.value)
    assert text.index("**Judging ε.**") < text.index("**Terms**")
