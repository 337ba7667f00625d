"""A visitor's own table: uploaded once, offered on every page whose task it fits, for that visitor only.

The file's bytes and the choices made about it (label column, task, declared bounds and categories) are kept in this
visitor's ``st.session_state`` (:data:`UPLOAD_KEY`), which Streamlit holds in the server's memory for this session
alone and drops when the session ends. :func:`dpcore.ui.common.dataset_picker` offers it on every page that takes data.

Runs on an upload stay in the session too. A run's key names the data by :func:`data_key`: an :class:`UploadRef`
for an upload, which :func:`dpcore.ui.common.shared_call` recognises (:func:`holds_upload`): such a run is neither
stored by the server's store of finished runs (memory and disk, :mod:`dpcore.runtime.serving`) nor joined by another
session, and a page memoises its result in the session (``remembered``), never in ``st.cache_data`` (shared by every
visitor of the server).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import streamlit as st

#: Session key of the visitor's uploaded file: ``{"name", "data", "digest", "label", "kind", "bounds", "categories",
#: "task"}``.
UPLOAD_KEY = "upload.table"
#: What stands for the session's file in the key of a widget kept per dataset (a knob, ``train.epochs.your_file``;
#: the box of declared bounds, ``train.dataset.bounds.your_file``), where a registry dataset has its name: the page's
#: address carries those widgets' values (a link restores them once the file is there), and a file's name, which
#: may say whose data it is (``ward7_hiv_patients.csv``), never goes into the address. A new file, or the file taken
#: out, empties these widgets (:func:`keep_upload`, :func:`forget_upload`): they were set for another file.
FILE_PART = "your_file"
#: Session key of the knobs' record of each knob widget's last value (:mod:`dpcore.ui.knobs`).
KEPT_KNOBS = "knobs.kept"
#: The last part of the key of each page's box of declared bounds for the session's file.
BOUNDS_BOX = f"bounds.{FILE_PART}"
#: What the pages say wherever an upload is used.
UPLOAD_NOTE = ("stays in this session, for you alone: never written to disk, never shown to another visitor, gone when "
               "the session ends.")


@dataclass(frozen=True)
class UploadRef:
    """Stands for an uploaded table in a run's key: its file name and the digest of its values and bounds
    (:func:`dpcore.sweep.dataset_fingerprint`). A key holding one is this session's alone (:func:`private_key`)."""

    name: str
    digest: str

    def __str__(self) -> str:
        return f"your file {self.name}"


def is_upload(dataset: Any) -> bool:
    """True for a Dataset read from a visitor's file."""
    return getattr(dataset, "source", "") == "upload"


def data_key(dataset) -> "str | UploadRef":
    """What identifies ``dataset`` in a run's key: the registry name, or an :class:`UploadRef` for an upload (two
    uploads with one file name but other values, or other declared bounds, never share a result)."""
    if not is_upload(dataset):
        return dataset if isinstance(dataset, str) else dataset.name
    from ..sweep import dataset_fingerprint

    return UploadRef(dataset.name, dataset_fingerprint(dataset))


def data_arg(dataset):
    """What the core functions are given: the registry name (so a registry run's key stays small and shared), or the
    uploaded Dataset itself."""
    return dataset if is_upload(dataset) else dataset.name


def holds_upload(key: Any) -> bool:
    """True when a run's key (a tuple, possibly nested) names an uploaded table."""
    if isinstance(key, UploadRef) or is_upload(key):
        return True
    if isinstance(key, (tuple, list)):
        return any(holds_upload(k) for k in key)
    return False


def session_id() -> str:
    """This visitor's session id ("" outside a Streamlit run)."""
    try:
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        ctx = get_script_run_ctx()
    except ImportError:  # pragma: no cover - an older Streamlit
        return ""
    return "" if ctx is None else str(ctx.session_id)


def private_key(key: tuple) -> tuple:
    """``key`` made this session's own: no other session asks for it, so none joins the run or reads its result.
    Its kind stays first (the server's log names a run by it)."""
    return (key[0], "session", session_id(), *key[1:]) if key else ("session", session_id())


def stored_upload() -> dict | None:
    """The file this visitor uploaded in this session, with the choices made about it; None if none."""
    return st.session_state.get(UPLOAD_KEY)


def keep_upload(name: str, data: bytes) -> dict:
    """Hold ``data`` as this session's file (replacing any other); the choices about it start afresh."""
    digest = hashlib.sha256(data).hexdigest()
    old = stored_upload()
    if old is not None and old["digest"] == digest and old["name"] == name:
        return old
    entry = {"name": name, "data": bytes(data), "digest": digest, "label": None, "kind": "auto", "bounds": "",
             "categories": "", "task": None}
    if old is not None:  # another file: the bounds and knobs set for the one before do not hold for it
        _forget_file_widgets()
    st.session_state[UPLOAD_KEY] = entry
    return entry


def forget_upload() -> None:
    """Drop this session's file (and with it the pages' offer of it, and the bounds and knobs set for it)."""
    if st.session_state.pop(UPLOAD_KEY, None) is not None:
        _forget_file_widgets()


def widget_part(name: str) -> str:
    """The part of a widget's key naming its dataset ``name``: the name of a registry dataset or image set, or
    :data:`FILE_PART` for a visitor's file (whose name never goes into a key the address carries)."""
    from ..datasets import REGISTRY
    from ..images import IMAGE_SETS

    return name if name in REGISTRY or name in IMAGE_SETS else FILE_PART


def _forget_file_widgets() -> None:
    """Forget what every page's widgets kept for the session's file hold (keys naming :data:`FILE_PART`), and the
    knobs' own record of them: they were set for another file. Called before a page draws them (an uploader's
    callback, or the picker above them)."""
    for key in [k for k in st.session_state.keys() if _names_file(k)]:
        del st.session_state[key]
    kept = st.session_state.get(KEPT_KNOBS)
    if isinstance(kept, dict):
        for key in [k for k in kept if _names_file(k)]:
            del kept[key]


def _names_file(key) -> bool:
    """True for a widget key kept for the session's file: :data:`FILE_PART` is one of its dot-separated parts
    (``train.epochs.your_file``, and ``cluster.k.your_file.rows``, the number of clusters chosen for a file with no
    label, which a new file kept when only keys ending in the word were forgotten)."""
    return isinstance(key, str) and FILE_PART in key.split(".")


def inferred_bounds_note(dataset) -> str | None:
    """What a page says above its results when bounds of ``dataset`` (an upload), or its label's classes, were read
    from its own rows rather than declared: an extra leak that no ε accounts for, so no ε shown on the page is a
    guarantee; None when every bound and the classes were declared (or the data is the registry's)."""
    inferred = tuple(getattr(dataset, "inferred_bounds", ()) or ())
    classes = tuple(getattr(dataset, "inferred_classes", ()) or ())
    if not is_upload(dataset) or not (inferred or classes):
        return None
    from ..datasets.csv_upload import _as_typed, _names

    said = []
    if inferred:
        said.append(f"the bounds of {_names(inferred, at_most=5)} were read from your file's own rows")
    if classes:
        said.append(f"the classes of the label {_names(classes)} were read from its rows (which classes occur)")
    todo = []
    if inferred:
        todo.append("what each column can hold (from what it measures, not from the rows) in the *Declared bounds* "
                    "box")
    if classes:
        todo.append(f"the label's classes in the *Declared categories* box ({_as_typed(classes[0])}=CLASS|CLASS|…, "
                    "from what the label means)")
    return (f"**Not yet a guarantee:** {' and '.join(said)}, an extra leak that no ε accounts for, so no ε shown on "
            f"this page is a guarantee. Declare {', and '.join(todo)}.")


def leaks_bounds(dataset) -> bool:
    """True when ``dataset`` is an upload some of whose bounds were read from its own rows: every private run on it
    leaked besides its noise, so none has a guarantee (:func:`inferred_bounds_note`); the session's total then counts
    it as not private (``leaks_privacy`` of :func:`dpcore.ui.ledger.record_release`)."""
    return inferred_bounds_note(dataset) is not None


def upload_in_view(dataset, *, bounds_note: bool = True) -> None:
    """On a page working on this session's file: fold the page's intro (:func:`dpcore.ui.present.fold_intro`) and
    say in one line whose data it is and that it stays in this session, so the page's chart starts higher; and,
    when its bounds were read from its rows, that the page's ε is not a guarantee (:func:`inferred_bounds_note`),
    in the main area above the results (the loader's own warning is folded in the sidebar, out of view).
    ``bounds_note=False`` on a page whose main area already says the file's leaks (the Attack page's notice)."""
    if not is_upload(dataset):
        return
    from .present import fold_intro

    fold_intro()
    st.caption(f"On your file **{dataset.name}**: it {UPLOAD_NOTE}")
    if bounds_note and (note := inferred_bounds_note(dataset)):
        st.warning(note, icon="⚠️")


def fits(entry: dict | None, task: str | None) -> bool:
    """True when the stored file can serve a page of ``task`` (None: any) as it was last read."""
    return entry is not None and (task is None or entry.get("task") in (None, task))


__all__ = ["BOUNDS_BOX", "FILE_PART", "KEPT_KNOBS", "UPLOAD_KEY", "UPLOAD_NOTE", "UploadRef", "data_arg", "data_key",
           "fits", "forget_upload", "holds_upload", "inferred_bounds_note", "is_upload", "keep_upload", "leaks_bounds",
           "private_key", "session_id", "stored_upload", "upload_in_view", "widget_part"]
