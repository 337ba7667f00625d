"""The bridge between dpcore and Streamlit: the only package in dpcore that imports streamlit.

Pages call these helpers and the cached wrappers in the feature modules
(``dpcore.ui.accounting`` ...), never the maths directly.
"""
from .common import (
    SEED_CAPTION,
    applied_epsilon_input,
    close_sidebar_on_phone,
    dataset_picker,
    delta_input,
    epsilon_input,
    noise_mode_input,
    page_header,
    readable_log_ticks,
    remember,
    run_guarded,
    seed_input,
    shared_call,
    show_frame,
    show_plain_table,
    show_table,
    show_warnings,
    verdict_line,
    verdict_text,
)

__all__ = [
    "SEED_CAPTION",
    "applied_epsilon_input",
    "close_sidebar_on_phone",
    "dataset_picker",
    "delta_input",
    "epsilon_input",
    "page_header",
    "readable_log_ticks",
    "remember",
    "run_guarded",
    "shared_call",
    "noise_mode_input",
    "seed_input",
    "show_frame",
    "show_plain_table",
    "show_table",
    "show_warnings",
    "verdict_line",
    "verdict_text",
]
