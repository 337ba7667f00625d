"""The Noisy images page renders a grid for a small setting, and its controls change what it shows."""
from __future__ import annotations

import pathlib

from streamlit.testing.v1 import AppTest

from dpcore.images import IMAGE_MECHANISMS

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages" / "6_Noisy_images.py")


def _app(*, opening: bool = False) -> AppTest:
    """The page on the 8x8 digits with every mechanism (quick, and every column kind), or as it opens."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    if not opening:
        at.session_state["images.set.name"] = "digits"
        at.session_state["images.kinds"] = list(IMAGE_MECHANISMS)
    at.run()
    assert not at.exception, at.exception
    return at


def test_renders_a_grid_and_reacts_to_epsilon():
    at = _app()
    at.slider(key="images.set.n").set_value(2).run()
    assert not at.exception and not at.error
    # 2 rows x (original + 5 mechanisms) in the grid, then the 2 images of the label view
    assert len(at.get("image")) == 2 * 6 + 2
    assert _rows_that_wrap(at) >= 1 + 2 + 1  # the headings, each grid row and the label view wrap, not stack
    units = at.dataframe[0].value
    assert len(units) == 5 and units["PSNR (dB, mean)"].notna().all()  # one column per mechanism
    # who counts as a neighbour: a list that wraps under the table, not a sentence cut off in a cell
    assert not any("neighbour" in str(c) for c in units.columns)
    assert any(m.value.startswith("**Privacy unit**") and m.value.count("\n- **") == 5 for m in at.markdown)
    curve = at.dataframe[1].value
    assert "kind" not in curve and curve["Mechanism"].nunique() == 5 and curve["ε"].min() < curve["ε"].max()
    before = [m.value for m in at.metric][:5]
    at.number_input(key="images.eps").set_value(50.0).run()
    after = [m.value for m in at.metric][:5]
    assert not at.exception and after != before
    assert float(after[0].split()[0]) > float(before[0].split()[0])  # more epsilon, higher PSNR


def _rows_that_wrap(at: AppTest) -> int:
    """Blocks that lay their pictures out left to right and wrap on a narrow screen: on a phone Streamlit's columns
    stack instead, parting a picture from its noisy versions."""
    from streamlit.proto.Block_pb2 import Block
    from streamlit.testing.v1.element_tree import Column

    across = Block.FlexContainer.Direction.Value("HORIZONTAL")

    def walk(node):
        proto = getattr(node, "proto", None)
        flex = proto.flex_container if isinstance(proto, Block) and proto.HasField("flex_container") else None
        cells = getattr(node, "children", {}).values()
        columns = any(isinstance(c, Column) for c in cells)
        here = int(flex is not None and flex.wrap and flex.direction == across and not columns)
        return here + sum(walk(c) for c in getattr(node, "children", {}).values())
    return walk(at.main)


def test_epsilon_columns_bad_cell_and_train_button():
    at = _app()
    at.slider(key="images.set.n").set_value(1).run()
    at.radio(key="images.mode").set_value("epsilons").run()
    at.multiselect(key="images.eps_list").set_value([0.1, 10.0]).run()
    assert not at.exception
    assert len(at.dataframe[0].value) == 2
    at.number_input(key="images.cell.digits").set_value(9).run()  # larger than the 8x8 digit
    assert not at.exception
    assert any("larger than the image" in e.value for e in at.error)
    at.number_input(key="images.cell.digits").set_value(2).run()
    at.radio(key="images.train_budget").set_value("pixel").run()
    at.button(key="images.train_button").click().run()
    assert not at.exception
    train = at.table[-1].value  # plain, its headers wrapping: a grid of it ran past a 1280 px page
    assert len(train) >= 2 and 0.0 <= train["Test accuracy"].iloc[1] <= 1.0
    # eps = 1 per pixel of an 8x8 digit is reported as the per-image 64, and said so
    assert train["ε per training record (image)"].iloc[1] == "64"
    assert list(train["Labels protected"])[:2] == ["no", "no"]
    assert any("only ε = 64-DP as a whole" in w.value for w in at.warning)
    assert any("Not like for like" in c.value for c in at.caption)
    assert any("ε = 64 per image" in m.label for m in at.metric)


def test_the_sidebar_says_what_an_epsilon_on_pixels_leaves_the_whole_image_with():
    from dpcore.ui.common import format_number

    at = _app()
    text = " ".join(m.value for m in at.sidebar.markdown)
    # digits, 8 x 8 at the default ε 10: each mechanism's own whole-image ε, as in the table under the grid
    units = at.dataframe[0].value.set_index("Column")["ε for the whole image"]
    assert "protects **pixels, not the image**" in text
    for column, whole in units.items():
        said = f"{column.split(',')[0]} **ε {format_number(whole)}**"
        assert (said in text) == (whole > 10), column
    assert units["Gaussian / pixel, ε=10"] < 640 == units["Laplace / pixel, ε=10"]  # not h·w·ε for the Gaussian
    at.multiselect(key="images.kinds").set_value(["laplace-image", "gaussian-image"]).run()
    assert "pixels, not the image" not in " ".join(m.value for m in at.sidebar.markdown)
    assert any(m.value.startswith("**Picture quality, PSNR**") for m in at.markdown)  # what the dB above are


def test_delta_0_leaves_out_the_gaussian_mechanisms_with_a_note_instead_of_failing():
    at = _app()
    at.slider(key="images.set.n").set_value(1).run()
    at.number_input(key="images.delta").set_value(0.0).run()
    assert not at.exception and not at.error
    assert any("Gaussian noise cannot give" in i.value and "are left out" in i.value for i in at.info)
    assert len(at.dataframe[0].value) == 3  # the two Laplace columns and DP-Pix
    assert at.dataframe[1].value["Mechanism"].nunique() == 3
    at.radio(key="images.mode").set_value("epsilons").run()  # DP-Pix against ε: its curve still drawn
    assert not at.exception and not at.error and len(at.dataframe[1].value) > 0
    at.selectbox(key="images.kind").set_value("gaussian-image").run()
    assert not at.exception and not at.error
    assert any("Gaussian, (ε, δ) per image is left out" in i.value for i in at.info)


def test_the_page_opens_on_photographs_a_room_reads_protecting_a_pixel_the_picture_and_dp_pix_cells():
    from dpcore.ui.images import CELL_PX

    at = _app(opening=True)
    assert not at.exception and not at.error
    assert at.selectbox(key="images.set.name").value == "photos"
    units = at.dataframe[0].value
    names = [c.split(",")[0].split(" b=")[0] for c in units["Column"]]
    assert names == ["Laplace / pixel", "Laplace / image", "DP-Pix"]
    assert "Noise per value (standard deviation)" in units.columns  # not the abbreviation "std"
    widths = [img.proto.width for img in at.get("imgs")] or [CELL_PX]
    # every picture at least ~150 px wide, and the original with its three versions (and gaps) within the 784 px a
    # 1280 px screen leaves beside the sidebar
    assert min(widths) >= 150 and 4 * CELL_PX + 3 * 8 <= 784


def test_the_label_dp_section_the_introduction_promises_is_on_the_page_for_every_image_set():
    # on the opening photographs (no labels) the section was left out while the introduction said "Below, the
    # labels get the noise instead (label DP)"
    at = _app(opening=True)
    title = "Noise on the labels instead (label DP)"
    assert title in [h.value for h in at.header]
    assert any("no labels to protect" in i.value and "Digits" in i.value for i in at.info)
    at = _app()  # digits, labelled: the section itself
    assert title in [h.value for h in at.header] and not any("no labels to protect" in i.value for i in at.info)


def test_training_at_delta_0_does_not_speak_of_a_dp_sgd_it_did_not_train():
    at = _app()
    at.number_input(key="images.delta").set_value(0.0).run()
    at.button(key="images.train_button").click().run()
    assert not at.exception
    assert any("DP-SGD was not trained" in w.value and "Set δ above 0" in w.value for w in at.warning)
    said = " ".join(c.value for c in at.caption)
    assert "Input noise protects the images only" in said and "DP-SGD's ε covers" not in said


def test_the_training_races_verdict_names_the_delta_dp_sgd_is_stated_at():
    # DP-SGD races the noisy-input classifier at the same ε: its guarantee is (ε, δ) at the sidebar's δ, and the
    # verdict under "ε (requested)" gave the pure-ε odds bound and posterior (Dwork & Roth 2014, Definition 2.4)
    at = _app()
    said = [m.value for m in at.markdown if m.value.startswith("●") and "odds about anyone" in m.value]
    assert said and all("up to an additive δ = 1e-05" in v for v in said), said
