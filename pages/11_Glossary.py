"""Glossary: every term the pages use, how to judge an ε, and the ε of published deployments, on a page of its own
(the same text as the folded glossary at the foot of every sidebar)."""
from __future__ import annotations

import dpcore.ui.boot  # noqa: F401  (first: every library loaded once, before this page imports any)

import streamlit as st

from dpcore.ui import page_header
from dpcore.ui.navigation import glossary_markdown

page_header(
    "Glossary",
    "The words these pages use, how to judge an ε, and the ε that published deployments chose. The same text "
    "sits folded at the foot of every page's sidebar.",
)
find = st.text_input("Find a term", "", key="glossary.find", placeholder="e.g. clipping, δ, membership")
st.markdown(glossary_markdown(find))
