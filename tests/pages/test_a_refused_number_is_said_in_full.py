"""A number box's refusal writes its range as a student reads it: whole bounds of five digits or more in full.

The seed box of every page said "Seed must be a whole number from 0 to 2.14748e+09": scientific notation a class has
not met, and a number (2,147,480,000) below the box's real largest, 2,147,483,647.
"""
from __future__ import annotations

from tests.pages.conftest import page


def test_a_negative_seed_on_the_home_page_names_the_seeds_range_in_full():
    at = page("pages/0_What_epsilon_means.py").run()
    at.number_input(key="home.seed").set_value(-1).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "Seed must be a whole number from 0 to 2,147,483,647; -1 is not. The page uses 0 until it is."]


def test_a_batch_of_a_billion_on_the_train_page_is_refused_in_full_numbers():
    at = page("pages/2_Train_a_network.py").run()
    at.selectbox(key="train.dataset").set_value("iris").run()
    at.number_input(key="train.batch_size.iris").set_value(1e9).run()
    assert not at.exception
    assert any(e.value.startswith("Batch size (expected) must be a whole number from 1 to 1,000,000; 1,000,000,000 "
                                  "is not.") for e in at.error), [e.value for e in at.error]
