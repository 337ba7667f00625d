"""The router: every page lives in pages/, their titles and icons in dpcore.ui.navigation.PAGES.

Streamlit's own page list is hidden (``position="hidden"`` here, ``client.showSidebarNavigation = false`` in
.streamlit/config.toml); the app draws its own menu of ``st.page_link``s at the top of every page's sidebar
and a glossary at its foot.
A fresh server runs a deep-linked pages/ file once on its own; its page_header sends it back through here
(dpcore.ui.navigation.route_through_app).
"""
from __future__ import annotations

import streamlit as st

from dpcore.runtime.serving import libraries_loaded

if not libraries_loaded():  # a fresh server: say why its first visitors wait while everything loads, once
    with st.spinner("Starting up: loading the libraries (only on the server's first visit, a few seconds)…"):
        import dpcore.ui.boot  # noqa: F401  (before any other dpcore import: see its docstring)

from dpcore.runtime.serving import settings_problem
from dpcore.ui.links import abandon_view, begin_page, finish_page
from dpcore.ui.navigation import HOME_ALIAS, PAGES, routed, sidebar_menu
from dpcore.ui.present import presentation_mode, presentation_toggle

home = PAGES[0]
# the home page is served at / (reserving the name "home") and, as a page of its own, at the name of its file,
# which the default page would reserve without serving it ("Page not found" there)
home_alias = st.Page(home.path, title=home.title, icon=home.icon, url_path=HOME_ALIAS)
nav = st.navigation(
    [st.Page(home.path, title=home.title, icon=home.icon, default=True, url_path="home")]
    + [st.Page(p.path, title=p.title, icon=p.icon) for p in PAGES[1:]]
    + [home_alias],
    position="hidden",
)
st.set_page_config(page_title=f"{nav.title} · dpcore", layout="wide",
                   initial_sidebar_state="collapsed" if presentation_mode() else "auto")
sidebar_menu(home_link=home_alias if nav.url_path == HOME_ALIAS else None, current=nav.title)  # lit where it is
presentation_toggle()
if problem := settings_problem():  # the operator's environment, before any student's run fails on it
    st.error(f"This server is misconfigured: {problem}. Whoever runs it should fix the setting and restart.")
    st.stop()
begin_page(next(p.keys for p in PAGES if p.title == nav.title))  # a link's inputs, before any widget exists
try:
    with routed():  # the page knows it came through here, with the menu drawn
        nav.run()
except Exception:
    if not abandon_view():  # not a link's doing: Streamlit shows the error as usual
        raise
    st.rerun()  # the link's values made the page fail: draw it again with the defaults and a warning
finish_page()  # the address bar now restores this view; the glossary at the sidebar's foot
