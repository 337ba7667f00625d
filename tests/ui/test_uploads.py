"""What marks a run as one visitor's upload (dpcore/ui/uploads.py): the key that names it, and nothing else."""
from __future__ import annotations

from dpcore.datasets import load_csv, load_dataset
from dpcore.ui.uploads import UploadRef, data_arg, data_key, holds_upload, is_upload


def _upload(values: str = "1,2,0\n3,4,1\n5,6,0\n7,8,1\n", bounds: str = "*=0:10"):
    return load_csv("a,b,y\n" + values, label_column="y", name="mine.csv", bounds=bounds)


def test_an_upload_is_named_by_its_digest_and_a_registry_dataset_by_its_name():
    ds = _upload()
    key = data_key(ds)
    assert isinstance(key, UploadRef) and key.name == "mine.csv" and key == data_key(_upload())
    assert data_key(_upload(values="1,2,0\n3,4,1\n5,6,0\n7,9,1\n")) != key  # one cell changed
    assert data_key(_upload(bounds="*=0:20")) != key  # other declared bounds
    assert "1,2" not in repr(key) and "mine.csv" in str(key)
    assert data_key(load_dataset("iris")) == "iris" and data_arg(load_dataset("iris")) == "iris"
    assert data_arg(ds) is ds and is_upload(ds) and not is_upload(load_dataset("iris"))


def test_a_key_holds_an_upload_wherever_it_names_one():
    ds = _upload()
    assert holds_upload(("audit", "dpsgd", data_key(ds), 1.0))
    assert holds_upload(("classical_sweep", ds, ("erm-output",)))
    assert holds_upload(("sweep", (("nested", data_key(ds)),)))
    assert not holds_upload(("audit", "dpsgd", "iris", 1.0, ("mine.csv",)))
