"""The expiry warning: comes at `warn_before` as configured (at most the whole lock) and counts down."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from tests.gui.conftest import FAST
from tests.gui.test_operator import _age_lock, _claim

LOCK = 15 * 60  # the demo's cases queue


def test_warn_before_longer_than_a_quarter_of_the_lock_is_honoured(
    qtbot: Any, open_window: Any, demo_config: Any
) -> None:
    # 10 minutes of a 15-minute lock: this used to be cut to 3m45s without a word.
    window = open_window(demo_config, settings=dataclasses.replace(FAST, warn_before=600.0))
    claim = _claim(qtbot, window)
    _age_lock(window, "cases", claim.lock.key, LOCK - 500)  # 8m20s left: inside the 10 minutes
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000) as signal:
        window.session.check_now()
    assert 490 < signal.args[0] <= 500
    assert window.warning_banner.isVisible() and window.timer_label.property("state") == "soon"


def test_warn_before_longer_than_the_lock_warns_at_once(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config, settings=dataclasses.replace(FAST, warn_before=3600.0))
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000):
        _claim(qtbot, window)
    assert window.session.settings.warn_at(LOCK) == LOCK


def _seconds_in(text: str) -> int:
    match = re.search(r"runs out in (?:(\d+)m)?(\d+)s", text)
    assert match is not None, text
    return int(match.group(1) or 0) * 60 + int(match.group(2))


def test_the_banner_counts_down(qtbot: Any, open_window: Any, demo_config: Any) -> None:
    window = open_window(demo_config)
    claim = _claim(qtbot, window)
    _age_lock(window, "cases", claim.lock.key, LOCK - 90)
    with qtbot.waitSignal(window.session.expiry_warning, timeout=5000):
        window.session.check_now()
    first = _seconds_in(window.warning_banner.label.text())
    qtbot.waitUntil(lambda: _seconds_in(window.warning_banner.label.text()) <= first - 2, timeout=5000)
    later = _seconds_in(window.warning_banner.label.text())
    assert first - 4 <= later <= first - 2 and 80 <= first <= 90
