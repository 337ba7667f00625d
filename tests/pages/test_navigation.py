"""The router (app.py): every page file is listed once in PAGES, and every page shows the app's own menu."""
from __future__ import annotations

import ast
import json

import tomllib

from dpcore.ui.navigation import PAGES

from .conftest import ROOT


def _menu(at) -> list[tuple[str, str]]:
    return [(link.proto.label, link.proto.page) for link in at.sidebar.get("page_link")]


def _url_path(path: str) -> str:
    """The URL Streamlit derives from a page file's name: ``pages/2_Train_a_network.py`` -> ``Train_a_network``."""
    return path.rsplit("/", 1)[-1].removesuffix(".py").split("_", 1)[1]


def test_pages_lists_every_page_file_once_with_distinct_titles_and_urls():
    assert sorted(p.path for p in PAGES) == sorted(f"pages/{f.name}" for f in (ROOT / "pages").glob("*.py"))
    assert PAGES[0].path == "pages/0_What_epsilon_means.py"  # the home page, served at /
    assert len({p.title for p in PAGES}) == len({_url_path(p.path) for p in PAGES}) == len(PAGES)
    assert all(p.icon.startswith(":material/") and p.blurb for p in PAGES)


def test_app_py_only_routes():
    tree = ast.parse((ROOT / "app.py").read_text())
    calls = {node.func.attr for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
    assert {"navigation", "set_page_config", "run"} <= calls
    assert not calls & {"title", "markdown", "metric", "plotly_chart", "slider", "radio"}  # no page content


def test_streamlits_own_page_list_is_switched_off():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showSidebarNavigation"] is False


def test_the_server_neither_watches_module_sources_nor_collects_garbage_after_every_script_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    assert config["runner"]["postScriptGC"] is False


def test_the_server_sends_every_message_whole_so_quick_slider_moves_cannot_desynchronise_the_browsers_cache():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["global"]["minCachedMessageSize"] >= 200 * 2**20  # larger than any message the server may send


def test_home_shows_the_menu_and_links_to_every_other_page(app_page):
    at = app_page("app.py", timeout=120).run()
    assert not at.exception
    assert _menu(at) == [(p.title, "" if i == 0 else _url_path(p.path)) for i, p in enumerate(PAGES)]
    links = [link.proto.label for link in at.main.get("page_link")]
    assert links[:-1] == [p.title for p in PAGES[1:]]  # the grid of cards, then the lesson's next stop
    assert links[-1] == "Next stop of the lesson: Train a network"


def test_a_page_opened_through_the_router_shows_the_same_menu(app_page):
    # AppTest, like a fresh server asked for a deep link, first runs a pages/ file without app.py; the page
    # must come back through the router (and so show the menu) rather than render bare
    at = app_page("app.py", timeout=120).run()
    at.switch_page("pages/1_Accountant.py").run()
    assert not at.exception
    assert at.title[0].value == "Privacy accountant"
    assert [label for label, _ in _menu(at)] == [p.title for p in PAGES]
    at.switch_page("pages/0_What_epsilon_means.py").run()
    assert not at.exception and at.title[0].value == "What does ε mean?" and len(_menu(at)) == len(PAGES)


def test_the_home_pages_next_stop_link_carries_the_epsilon_on_screen_and_the_lessons_dataset_and_seed(app_page):
    from urllib.parse import parse_qs

    from dpcore.teaching.lesson import DATASET, SEED

    at = app_page("app.py", timeout=120).run()
    at.slider(key="home.eps").set_value(2.0).run()
    assert not at.exception
    link = next(link.proto for link in at.main.get("page_link") if link.proto.label.startswith("Next stop"))
    assert link.page == _url_path("pages/2_Train_a_network.py")
    query = {k: json.loads(v[0]) for k, v in parse_qs(link.query_string).items()}
    assert query == {"train.dataset": DATASET, "train.epsilon": 2.0, "train.seed": SEED}


def test_the_menu_is_folded_and_a_pages_epsilon_is_the_first_box_of_its_sidebar(app_page):
    # open, the twelve entries pushed the ε box below a 720 px projector's edge (758 px on the home page, 1,450 on
    # the Train page)
    at = app_page("app.py", timeout=120).run()
    at.switch_page("pages/2_Train_a_network.py").run()
    assert not at.exception
    menu = next(iter(at.sidebar.children.values()))  # the sidebar's first element
    assert type(menu).__name__ == "Expander" and menu.label == "Pages · Train a network"
    assert len(menu.get("page_link")) == len(PAGES)
    assert at.sidebar.get("number_input")[0].key == "train.epsilon"  # above the dataset, learner and knobs
