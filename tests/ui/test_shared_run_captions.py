"""What a page says about a run another visitor started (dpcore.ui.common.shared_call)."""
from streamlit.testing.v1 import AppTest


def _page_following_two_runs():
    from unittest import mock

    import streamlit as st

    from dpcore.ui.common import page_header, shared_call

    class JoinedEveryRun:  # the shared store, as when another visitor asked for the same inputs a moment before
        workers = 1

        def get_or_run(self, key, work, **kwargs):
            return work(lambda event: None), "joined"

    page_header("Two runs", "A page that follows two shared runs, as the Federated page does.")
    with mock.patch("dpcore.runtime.serving.shared_runs", JoinedEveryRun):
        reference = shared_call(("reference",), lambda progress: 1)
        private = shared_call(("private",), lambda progress: 2)
    st.write(f"results {reference} {private}")


def test_a_page_following_two_runs_of_another_visitor_says_so_once():
    at = AppTest.from_function(_page_following_two_runs).run()
    assert not at.exception
    said = [c.value for c in at.caption if "Another visitor asked for exactly these inputs first" in c.value]
    assert len(said) == 1  # the Federated page said it twice, one line under the other
    assert any("results 1 2" in m.value for m in at.markdown)
    at.run()  # the next run of the page says it again (once)
    assert len([c for c in at.caption if "Another visitor" in c.value]) == 1


def _page_pressed_twice():
    from unittest import mock

    import streamlit as st

    from dpcore.ui.common import page_header, shared_call

    class Interrupted(Exception):
        """What a second press of the button does to the script run still following the first press's run."""

    class StoreWithARunInFlight:
        workers = 1

        def get_or_run(self, key, work, **kwargs):
            if not st.session_state.get("test.pressed_again"):
                raise Interrupted  # the first press's script run, stopped while it followed the run it started
            return work(lambda event: None), "joined"  # the second press's run finds that run in flight

    page_header("Run it live", "A page whose button was pressed twice quickly.")
    with mock.patch("dpcore.runtime.serving.shared_runs", StoreWithARunInFlight):
        try:
            st.write(f"result {shared_call(('entry',), lambda progress: 3)}")
        except Interrupted:
            st.session_state["test.pressed_again"] = True


def test_a_button_pressed_twice_does_not_say_another_visitor_started_the_run():
    # Papers, reproduced: "Run it live" clicked twice said "Another visitor asked for exactly these inputs first"
    # to a student alone on the server
    at = AppTest.from_function(_page_pressed_twice).run()
    at.run()
    assert not at.exception and any("result 3" in m.value for m in at.markdown)
    assert not [c for c in at.caption if "Another visitor" in c.value]
    other = AppTest.from_function(_page_following_two_runs).run()  # a second session joining the same run is told
    assert [c for c in other.caption if "Another visitor" in c.value]


def _page_running_on_an_upload():
    from unittest import mock

    import streamlit as st

    from dpcore.ui.common import page_header, shared_call
    from dpcore.ui.uploads import UploadRef

    class Recording:  # the shared store, recording how each run is asked for
        workers = 1

        def get_or_run(self, key, work, **kwargs):
            st.session_state.setdefault("asked", []).append((key, kwargs))
            return work(lambda event: None), "computed"

    page_header("One upload", "A page that runs on a visitor's file and on a registry dataset.")
    with mock.patch("dpcore.runtime.serving.shared_runs", Recording):
        shared_call(("train", UploadRef("ward.csv", "abc")), lambda progress: 1)
        shared_call(("train", "wine"), lambda progress: 2)


def test_a_run_on_a_visitors_file_is_asked_for_as_private_so_the_log_keeps_its_error_message_out():
    at = AppTest.from_function(_page_running_on_an_upload).run()
    assert not at.exception
    (mine, how_mine), (registry, how_registry) = at.session_state["asked"]
    assert mine[1] == "session" and how_mine["private"] and not how_mine["keep"]
    assert registry == ("train", "wine") and not how_registry["private"]
