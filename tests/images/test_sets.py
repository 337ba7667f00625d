"""Offline image sets and the safe upload decoder."""
from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from dpcore.exceptions import DatasetError, DPValueError
from dpcore.images import image_set_names, load_image_set, load_uploaded_image


@pytest.mark.parametrize("name,shape,rng_", [
    ("digits", (8, 8), (0.0, 16.0)),
    ("mnist5k", (28, 28), (0.0, 255.0)),
    ("faces", (25, 25), (0.0, 1.0)),
])
def test_labelled_sets(name, shape, rng_):
    s = load_image_set(name, n_images=5)
    assert s.images.shape == (5,) + shape and s.images.dtype == np.float64
    assert s.pixel_range == rng_
    assert s.images.min() >= rng_[0] and s.images.max() <= rng_[1]
    assert s.labels is not None and s.labels.shape == (5,)
    assert not s.images.flags.writeable
    # rows cycle through the classes, so a few rows show different classes
    assert len(set(s.labels.tolist())) == min(5, s.n_classes)
    assert s.upscale * shape[0] >= 100  # visible after nearest-neighbour enlargement


def test_photos_rgb_and_grey():
    rgb = load_image_set("photos", colour="rgb", max_side=120)
    assert rgb.images.shape == (2, 80, 120, 3) and rgb.is_rgb and rgb.labels is None
    grey = load_image_set("photos", n_images=1, colour="grey", max_side=64)
    assert grey.images.shape == (1, 43, 64)
    assert 0 <= grey.images.min() and grey.images.max() <= 255
    assert image_set_names(labelled=False) == ["photos"]


def test_unknown_set():
    with pytest.raises(DPValueError, match="unknown image set 'cifar'"):
        load_image_set("cifar")


def _png(arr: np.ndarray, mode: str) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr.astype(np.uint8), mode=mode).save(buf, format="PNG")
    return buf.getvalue()


def test_upload_png_grey_and_rgb_round_trip():
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 256, size=(20, 30, 3))
    data = _png(arr, "RGB")
    s = load_uploaded_image(data, colour="rgb", name="x.png")
    assert s.images.shape == (1, 20, 30, 3) and s.images.dtype == np.float64
    assert np.array_equal(s.images[0], arr)  # lossless, values 0..255
    g = load_uploaded_image(data, colour="grey")
    assert g.images.shape == (1, 20, 30) and g.pixel_range == (0.0, 255.0)
    assert s.upscale > 1  # a tiny upload is enlarged for display


def test_upload_jpeg_and_transparency_and_resize():
    buf = io.BytesIO()
    Image.new("RGB", (600, 300), (200, 10, 10)).save(buf, format="JPEG")
    s = load_uploaded_image(buf.getvalue(), colour="rgb", max_side=100)
    assert s.images.shape == (1, 50, 100, 3)
    rgba = np.zeros((10, 10, 4), dtype=np.uint8)  # fully transparent -> white, not black
    t = load_uploaded_image(_png(rgba, "RGBA"), colour="grey")
    assert np.all(t.images == 255)


def test_non_image_upload_is_a_clear_error():
    with pytest.raises(DatasetError, match="not a PNG or JPEG image"):
        load_uploaded_image(b"name,age\nada,36\n")
    with pytest.raises(DatasetError, match="not a PNG or JPEG image"):
        buf = io.BytesIO()
        Image.new("L", (4, 4)).save(buf, format="GIF")
        load_uploaded_image(buf.getvalue())
    with pytest.raises(DatasetError, match="empty"):
        load_uploaded_image(b"")
    # right signature, corrupt body
    with pytest.raises(DatasetError, match="could not be decoded"):
        load_uploaded_image(b"\x89PNG\r\n\x1a\n" + b"\x00" * 100)
    with pytest.raises(TypeError, match="bytes"):
        load_uploaded_image("picture.png")


def test_over_large_upload_is_a_clear_error():
    data = _png(np.zeros((64, 64), dtype=np.uint8), "L")
    with pytest.raises(DatasetError, match=r"larger than the limit of 0\.0 MB"):
        load_uploaded_image(data, max_bytes=10)
    # too many pixels: refused from the header, before decoding
    with pytest.raises(DatasetError, match=r"64 x 64 = 4,096 pixels, more than the limit of 1,000"):
        load_uploaded_image(data, max_pixels=1000)


def test_decompression_bomb_is_refused_before_decoding():
    # 5000 x 5000 zeros compress to a few kB: small in bytes, huge in pixels
    data = _png(np.zeros((5000, 5000), dtype=np.uint8), "L")
    assert len(data) < 100_000
    with pytest.raises(DatasetError, match="pixels, more than the limit"):
        load_uploaded_image(data)


def test_sixteen_bit_png_is_rescaled_not_clipped():
    a = (np.arange(64 * 64).reshape(64, 64) * 16).astype(np.uint16)  # 0 .. 65520
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="PNG")
    s = load_uploaded_image(buf.getvalue(), colour="grey")
    np.testing.assert_allclose(s.images[0], np.rint(a / 257.0))
    assert 0.2 < np.mean(s.images[0] < 128) < 0.8  # not a white sheet
