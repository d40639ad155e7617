"""The item's source beside the form: a scanned PDF (paged, zoomed), an image, or the raw source text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QBuffer, QByteArray, QPointF, Qt, Slot
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from workbench.gui import dialogs

if TYPE_CHECKING:
    from PySide6.QtPdf import QPdfDocument
    from PySide6.QtPdfWidgets import QPdfView

    from workbench.services import sources

ZOOM_STEP = 1.25
ZOOM_RANGE = (0.1, 8.0)


class SourcePane(QWidget):
    """Shows a services.sources.Source; the window reads it off the GUI thread and hands it over."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("source_pane")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.addWidget(dialogs.heading(self.tr("Source"), "source_heading"))
        self.name = QLabel()
        self.name.setObjectName("source_name")
        self.name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        top.addWidget(self.name, 1)
        self.previous_button = self._tool("source_previous", "‹", self.tr("Previous page"), self._previous)
        self.page_label = QLabel()
        self.page_label.setObjectName("source_page")
        self.next_button = self._tool("source_next", "›", self.tr("Next page"), self._next)
        self.zoom_out_button = self._tool("source_zoom_out", "−", self.tr("Zoom out"), self._zoom_out)
        self.zoom_in_button = self._tool("source_zoom_in", "+", self.tr("Zoom in"), self._zoom_in)
        self.fit_button = self._tool("source_fit", self.tr("Fit"), self.tr("Fit to the pane's width"), self._fit)
        for widget in (
            self.previous_button,
            self.page_label,
            self.next_button,
            self.zoom_out_button,
            self.zoom_in_button,
            self.fit_button,
        ):
            top.addWidget(widget)
        layout.addLayout(top)

        self.stack = QStackedWidget()
        self.message = QLabel()
        self.message.setObjectName("source_message")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        # The PDF document and its view are made for the first PDF shown: Qt's PDF modules are not
        # loaded for a window's first screen, nor for queues without scans (issue 52).
        self.document: QPdfDocument | None = None
        self.pdf: QPdfView | None = None
        self.image = QLabel()
        self.image.setObjectName("source_image")
        self.image.setAccessibleName(self.tr("Source image"))
        self.image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.image_area = QScrollArea()
        self.image_area.setWidget(self.image)
        self.image_area.setAlignment(Qt.AlignmentFlag.AlignHCenter)
        self.text = QPlainTextEdit()
        self.text.setObjectName("source_text")
        self.text.setReadOnly(True)
        self.text.setAccessibleName(self.tr("Source text"))
        for page in (self.message, self.image_area, self.text):
            self.stack.addWidget(page)
        layout.addWidget(self.stack, 1)
        self._buffer: QBuffer | None = None
        self._picture = QImage()
        self._zoom = 0.0  # 0: fit to width
        self.clear()

    def _pdf_view(self) -> tuple[QPdfDocument, QPdfView]:
        """The document and its view, made (and Qt's PDF modules loaded) when the first PDF is shown."""
        if self.document is None or self.pdf is None:
            from PySide6.QtPdf import QPdfDocument
            from PySide6.QtPdfWidgets import QPdfView

            self.document = QPdfDocument(self)
            self.pdf = QPdfView()
            self.pdf.setObjectName("source_pdf")
            self.pdf.setAccessibleName(self.tr("Source document"))
            self.pdf.setDocument(self.document)
            self.pdf.setPageMode(QPdfView.PageMode.MultiPage)
            self.pdf.pageNavigator().currentPageChanged.connect(self._show_page)
            self.stack.insertWidget(1, self.pdf)
        return self.document, self.pdf

    def _tool(self, name: str, text: str, tip: str, slot: object) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setAccessibleName(tip)
        button.clicked.connect(slot)
        return button

    # -- what is shown ----------------------------------------------------------------------

    def clear(self) -> None:
        self._say(self.tr("No item is open."))

    def show_loading(self) -> None:
        self._say(self.tr("Loading the source…"), keep_name=True)

    def show_source(self, source: sources.Source) -> None:
        self.name.setText(source.name)
        self.name.setToolTip(source.name)
        self._zoom = 0.0
        if source.kind == "pdf":
            self._show_pdf(source.data)
        elif source.kind == "image":
            self._show_image(source)
        elif source.kind == "text":
            self.text.setPlainText(source.text)
            self._show(self.text, paged=False, zooms=False)
        elif source.kind == "none":
            self._say(self.tr("This item names no source."))
        else:
            self._say(self.tr("The source cannot be shown: {0}").format(source.problem))

    def _say(self, text: str, *, keep_name: bool = False) -> None:
        if self.document is not None:
            self.document.close()
        self.message.setText(text)
        self._show(self.message, paged=False, zooms=False)
        if not keep_name:
            self.name.clear()

    def _show_pdf(self, data: bytes) -> None:
        document, pdf = self._pdf_view()
        document.close()
        # The document reads from the buffer while it is open: keep both alive until the next item.
        self._buffer = QBuffer(self)
        self._buffer.setData(QByteArray(data))
        self._buffer.open(QBuffer.OpenModeFlag.ReadOnly)
        document.load(self._buffer)
        if document.status() != document.Status.Ready or document.pageCount() == 0:
            self._say(self.tr("The source cannot be shown: it is not a PDF this program can read."))
            return
        pdf.setZoomMode(pdf.ZoomMode.FitToWidth)
        self._show(pdf, paged=True, zooms=True)
        pdf.pageNavigator().jump(0, QPointF(), 0)
        self._show_page(0)

    def _show_image(self, source: sources.Source) -> None:
        picture = QImage.fromData(source.data)
        if picture.isNull():
            self._say(self.tr("The source cannot be shown: it is not an image this program can read."))
            return
        self._picture = picture
        self._show(self.image_area, paged=False, zooms=True)
        self._scale_image()

    def _show(self, widget: QWidget, *, paged: bool, zooms: bool) -> None:
        self.stack.setCurrentWidget(widget)
        for button in (self.previous_button, self.next_button, self.page_label):
            button.setVisible(paged)
        for button in (self.zoom_out_button, self.zoom_in_button, self.fit_button):
            button.setVisible(zooms)

    @property
    def showing(self) -> str:
        """What the pane shows now: "pdf", "image", "text" or "message" (for tests and the window)."""
        current = self.stack.currentWidget()
        if current is not None and current is self.pdf:
            return "pdf"
        names: dict[QWidget | None, str] = {self.image_area: "image", self.text: "text"}
        return names.get(current, "message")

    # -- paging and zoom --------------------------------------------------------------------

    @Slot(int)
    def _show_page(self, page: int) -> None:
        count, _ = self._pages()
        self.page_label.setText(self.tr("Page {0} of {1}").format(page + 1, count))
        self.previous_button.setEnabled(page > 0)
        self.next_button.setEnabled(page + 1 < count)

    def _pages(self) -> tuple[int, QPdfView]:
        """The shown PDF's page count and its view (paging and zoom are offered only while one is shown)."""
        document, pdf = self._pdf_view()
        return document.pageCount(), pdf

    def _jump(self, step: int) -> None:
        count, pdf = self._pages()
        navigator = pdf.pageNavigator()
        page = max(0, min(count - 1, navigator.currentPage() + step))
        navigator.jump(page, QPointF(), navigator.currentZoom())

    @Slot()
    def _previous(self) -> None:
        self._jump(-1)

    @Slot()
    def _next(self) -> None:
        self._jump(1)

    def _factor(self) -> float:
        if self.showing == "pdf":
            return float(self._pages()[1].zoomFactor())
        if self._zoom:
            return self._zoom
        width = max(1, self._picture.width())
        return (self.image_area.viewport().width() - 4) / width

    def _set_zoom(self, factor: float) -> None:
        factor = max(ZOOM_RANGE[0], min(ZOOM_RANGE[1], factor))
        if self.showing == "pdf":
            pdf = self._pages()[1]
            pdf.setZoomMode(pdf.ZoomMode.Custom)
            pdf.setZoomFactor(factor)
        else:
            self._zoom = factor
            self._scale_image()

    @Slot()
    def _zoom_in(self) -> None:
        self._set_zoom(self._factor() * ZOOM_STEP)

    @Slot()
    def _zoom_out(self) -> None:
        self._set_zoom(self._factor() / ZOOM_STEP)

    @Slot()
    def _fit(self) -> None:
        if self.showing == "pdf":
            pdf = self._pages()[1]
            pdf.setZoomMode(pdf.ZoomMode.FitToWidth)
        else:
            self._zoom = 0.0
            self._scale_image()

    def _scale_image(self) -> None:
        if self._picture.isNull():
            return
        width = max(16, round(self._picture.width() * self._factor()))
        scaled = self._picture.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
        self.image.setPixmap(QPixmap.fromImage(scaled))
        self.image.resize(scaled.size())

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        if self.showing == "image" and not self._zoom:
            self._scale_image()
