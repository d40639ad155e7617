"""The console's charts (Qt Charts): work per hour, open items over time, and how long items take to handle."""

from __future__ import annotations

import bisect
import collections
from typing import Any

from PySide6.QtCharts import QBarCategoryAxis, QBarSeries, QBarSet, QChart, QChartView, QValueAxis
from PySide6.QtCore import QMargins, Qt
from PySide6.QtGui import QBrush, QPainter
from PySide6.QtWidgets import QHBoxLayout, QWidget

from workbench.gui import theme, times

# Handle-time bins in minutes: what a supervisor asks ("most take under ten minutes?").
BINS = (2, 5, 10, 15, 30, 60)
BIN_LABELS = ("0–2", "2–5", "5–10", "10–15", "15–30", "30–60", "≥ 60")  # minutes; no "<": labels are rich text


def merge_open(per_queue: list[list[tuple[Any, int]] | None]) -> list[tuple[Any, int]] | None:
    """Open items per hour summed over the queues that can tell (None when none can)."""
    known = [hours for hours in per_queue if hours is not None]
    if not known:
        return None
    totals: dict[Any, int] = collections.Counter()
    for hours in known:
        for hour, count in hours:
            totals[hour] += count
    return sorted(totals.items())


def merge_hours(per_queue: list[list[Any]]) -> list[tuple[Any, int, int]]:
    """(hour, completed, claimed) summed over queues, in time order."""
    totals: dict[Any, list[int]] = {}
    for hours in per_queue:
        for h in hours:
            total = totals.setdefault(h.hour, [0, 0])
            total[0] += h.completed
            total[1] += h.claimed
    return [(hour, done, claimed) for hour, (done, claimed) in sorted(totals.items())]


def histogram(seconds: list[float]) -> list[int]:
    """How many handle times fall in each of BIN_LABELS."""
    counts = [0] * (len(BINS) + 1)
    for value in seconds:
        counts[bisect.bisect_right(BINS, value / 60)] += 1
    return counts


def hour_labels(hours: list[Any]) -> list[str]:
    """Axis labels: every third hour on a day, each midnight on longer periods (the first bar is
    left unlabelled: its label would stick out of the plot and Qt hides it).

    A category axis needs distinct names, so the unlabelled ones are runs of zero-width spaces."""
    day = len(hours) <= 36
    return [
        (f"{h.hour:02d}h" if day else times.day(h))
        if i > 0 and (h.hour % 3 == 0 if day else h.hour == 0)
        else "\u200b" * (i + 1)
        for i, h in enumerate(hours)
    ]


def _nice_step(top: int) -> int:
    """A whole-number tick step (1, 2, 5, 10, 20, 50 …) giving at most about six ticks."""
    step = 1
    while top / step > 6:
        for factor in (2, 2.5, 2):
            step = int(step * factor)
            if top / step <= 6:
                break
    return step


def _bar_chart(title: str, categories: list[str], sets: list[tuple[str, str, list[int]]], x_title: str = "") -> QChart:
    chart = QChart()
    colours = theme.current()
    # Before the series: a chart theme sets every series' colours.
    chart.setTheme(QChart.ChartTheme.ChartThemeDark if colours.dark else QChart.ChartTheme.ChartThemeLight)
    chart.setTitle(title)
    chart.setAnimationOptions(QChart.AnimationOption.NoAnimation)  # refreshed every few seconds
    chart.setMargins(QMargins(4, 4, 4, 4))
    series = QBarSeries()
    top = 0
    for name, colour, values in sets:
        bar_set = QBarSet(name)
        bar_set.setColor(colours.qcolor(colour))
        bar_set.setBorderColor(colours.qcolor(colour))
        bar_set.append([float(v) for v in values])
        series.append(bar_set)
        top = max([top, *values])
    chart.addSeries(series)
    x = QBarCategoryAxis()
    x.append(categories)
    x.setTruncateLabels(False)
    if x_title:
        x.setTitleText(x_title)
    chart.addAxis(x, Qt.AlignmentFlag.AlignBottom)
    series.attachAxis(x)
    y = QValueAxis()
    y.setLabelFormat("%d")  # counts: whole-number ticks only (nice numbers would give 0.25 steps)
    step = _nice_step(max(top, 1))
    y.setTickType(QValueAxis.TickType.TicksDynamic)
    y.setTickAnchor(0)
    y.setTickInterval(step)
    y.setRange(0, step * -(-max(top, 1) // step))
    chart.addAxis(y, Qt.AlignmentFlag.AlignLeft)
    series.attachAxis(y)
    chart.legend().setVisible(len(sets) > 1)
    chart.legend().setAlignment(Qt.AlignmentFlag.AlignBottom)
    _paint(chart, colours)
    return chart


def _paint(chart: QChart, colours: theme.Colours) -> None:
    """The theme's background and text on a chart (after the chart theme, which sets its own): the bars'
    colours are chosen to stand out against exactly this background (tests/gui/test_theme.py)."""
    chart.setBackgroundBrush(QBrush(colours.qcolor("chart_bg")))
    chart.setPlotAreaBackgroundVisible(False)
    text = colours.qcolor("chart_fg")
    chart.setTitleBrush(QBrush(text))
    chart.legend().setLabelColor(text)
    for axis in chart.axes():
        axis.setLabelsColor(text)
        axis.setTitleBrush(QBrush(text))


class ChartsPanel(QWidget):
    """Two charts side by side; `show_data` replaces them (charts are cheap to rebuild)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        self.throughput_view = QChartView()
        self.throughput_view.setObjectName("throughput_chart")
        self.open_view = QChartView()
        self.open_view.setObjectName("open_items_chart")
        self.handle_view = QChartView()
        self.handle_view.setObjectName("handle_time_chart")
        # Names a screen reader says on reaching a chart; the figures themselves are the Operators tab's.
        self.throughput_view.setAccessibleName(self.tr("Chart: claimed and completed per hour"))
        self.open_view.setAccessibleName(self.tr("Chart: open items"))
        self.handle_view.setAccessibleName(self.tr("Chart: handle time"))
        for view in (self.throughput_view, self.open_view, self.handle_view):
            view.setRenderHint(QPainter.RenderHint.Antialiasing)
            layout.addWidget(view, 1)
        self.hours: list[tuple[Any, int, int]] = []
        self.open: list[tuple[Any, int]] | None = None
        self.bins: list[int] = []
        self._shown: tuple[Any, ...] | None = None
        installed = theme.installed()
        if installed is not None:
            installed.changed.connect(self._redraw)

    def _redraw(self) -> None:
        if self._shown is not None:
            self.show_data(*self._shown)

    def show_data(
        self,
        hours: list[tuple[Any, int, int]],
        handle_seconds: list[float],
        period: str,
        open_items: list[tuple[Any, int]] | None = None,
    ) -> None:
        """`period` as a chart title says it after a dash ("last 7 days")."""
        self._shown = (hours, handle_seconds, period, open_items)  # drawn again in new colours
        self.hours, self.open, self.bins = hours, open_items, histogram(handle_seconds)
        labels = hour_labels([h for h, _d, _c in hours])
        _replace_chart(
            self.throughput_view,
            _bar_chart(
                self.tr("Claimed and completed per hour — {0}").format(period),
                labels,
                [
                    (self.tr("Claimed"), "chart_claimed", [c for _h, _d, c in hours]),
                    (self.tr("Completed"), "chart_completed", [d for _h, d, _c in hours]),
                ],
            ),
        )
        if open_items is None:
            chart = _bar_chart(self.tr("Open items — set the queue's `created` column to see them"), [], [])
        else:
            chart = _bar_chart(
                self.tr("Open items (waiting or in progress) — {0}").format(period),
                hour_labels([h for h, _n in open_items]),
                [(self.tr("Open"), "chart_open", [n for _h, n in open_items])],
            )
        _replace_chart(self.open_view, chart)
        total = len(handle_seconds)
        _replace_chart(
            self.handle_view,
            _bar_chart(
                self.tr("Handle time, claim to complete — %n item(s)", "", total),
                list(BIN_LABELS),
                [(self.tr("Items"), "chart_handled", self.bins)],
                x_title=self.tr("minutes"),
            ),
        )


def _replace_chart(view: QChartView, chart: QChart) -> None:
    old = view.chart()
    view.setChart(chart)
    if old is not None:
        old.deleteLater()  # a chart view does not delete the chart it lets go of
