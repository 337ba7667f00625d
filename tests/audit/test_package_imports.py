"""The audit package loads a module only when one of its names is used."""
from __future__ import annotations

import subprocess
import sys


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_home_pages_floating_point_attack_loads_without_torch():
    # a fresh server's first visitor waits for these imports; torch alone took about 1.3 s
    assert "torch" not in _modules_after("import dpcore.ui.explain, dpcore.ui.accounting")


def test_every_public_name_of_the_audit_package_still_resolves():
    import dpcore.audit as audit

    for name in audit.__all__:
        assert getattr(audit, name) is not None
    # the audits that train load torch when they train, not when they are imported ('audit --help' is quick)
    assert "torch" not in _modules_after("from dpcore.audit import run_audit")
