"""A picture uploaded on the Noisy images page is that visitor's alone: decoded and noised in the session, not in
``st.cache_data``, which the server keeps for every visitor after the session has ended. Another visitor who
uploads the very same picture gets it noised anew, never the first visitor's release."""
from __future__ import annotations

import io
import pathlib

import numpy as np
from PIL import Image
from streamlit.testing.v1 import AppTest

import dpcore.ui.images as images_ui

PAGE = str(pathlib.Path(__file__).resolve().parents[2] / "pages" / "6_Noisy_images.py")


def _png() -> bytes:
    rng = np.random.default_rng(3)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 256, (24, 32), dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _visitor_uploads(picture: bytes) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["images.set.name"] = "upload"
    at.session_state["images.kinds"] = ["laplace-pixel"]
    at.run()
    at.get("file_uploader")[0].set_value(("my_face.png", picture, "image/png")).run()
    assert not at.exception and not at.error
    return at


def test_two_visitors_uploading_the_same_picture_each_decode_and_noise_it_in_their_own_session(monkeypatch):
    decoded, noised = [], []
    load, grid = images_ui.load_uploaded_image, images_ui.noisy_grid
    monkeypatch.setattr(images_ui, "load_uploaded_image", lambda *a, **kw: decoded.append(1) or load(*a, **kw))
    monkeypatch.setattr(images_ui, "noisy_grid", lambda *a, **kw: noised.append(1) or grid(*a, **kw))
    picture = _png()
    mine = _visitor_uploads(picture)
    first = (len(decoded), len(noised))
    assert first[0] >= 1 and first[1] >= 1 and mine.get("image")
    theirs = _visitor_uploads(picture)  # the very same bytes, in another session
    assert (len(decoded), len(noised)) == (2 * first[0], 2 * first[1])  # computed again, not served from a store
    assert theirs.get("image")
