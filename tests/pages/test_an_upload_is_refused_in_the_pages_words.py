"""A file the page cannot use is refused in the page's words: the boxes to use, not load_csv's keywords nor flags.

A student's 10,000-row file with a text column read, on the Train page, "Declare the values 'note' can hold as
categories (categories= in load_csv, --categories on the command line, 'Declared categories' on the pages) ... To
leave a column out: drop= (--drop on the command line, 'Columns to leave out' on the pages)", twice, and a row
identifier's warning "leave it out (drop=, --drop on the command line, Columns to leave out on the pages)".
"""
from __future__ import annotations

from tests.pages.conftest import page


def _upload(text: str):
    at = page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("upload").run()
    at.get("file_uploader")[0].set_value(("marks.csv", text.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    return at


def test_a_text_column_is_refused_naming_the_pages_boxes_only():
    rows = "".join(f"{i % 7},{(3 * i) % 11},{'fine' if i % 3 else 'needs follow-up'},{i % 2}\n" for i in range(200))
    at = _upload("age,hours,note,label\n" + rows)
    said = [e.value for e in at.error]
    assert said and all("load_csv" not in s and "command line" not in s for s in said), said
    assert any("(the 'Declared categories' box)" in s and "To leave a column out: the 'Columns to leave out' box."
               in s for s in said), said


def test_a_row_identifiers_warning_names_the_box_to_leave_it_out():
    rows = "".join(f"{1000 + i},{i % 7},{(3 * i) % 11},{i % 2}\n" for i in range(200))
    at = _upload("id,age,hours,label\n" + rows)
    said = [w.value for w in at.warning]
    assert any("look" in s and "like a row identifier" in s for s in said), said
    assert all("command line" not in s for s in said), said
    assert any("leave it out (the 'Columns to leave out' box)" in s for s in said), said
