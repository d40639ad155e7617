"""installer/deb.py on a small stand-in bundle: the package's files, menu entry and computed Depends."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from installer import deb  # noqa: E402 - the repository root goes on sys.path first

pytestmark = pytest.mark.skipif(
    shutil.which("dpkg-deb") is None or shutil.which("readelf") is None,
    reason="needs dpkg-deb and readelf (Debian/Ubuntu with binutils)",
)


def _bundle(tmp_path: Path) -> Path:
    """A folder shaped like PyInstaller's: an executable that links libc and one library it carries."""
    bundle = tmp_path / "bundle" / "workbench"
    (bundle / "_internal").mkdir(parents=True)
    shutil.copy2("/bin/true", bundle / "workbench")
    carried = next(
        Path(p)
        for p in (
            "/lib/x86_64-linux-gnu/libz.so.1",
            "/usr/lib/x86_64-linux-gnu/libz.so.1",
            "/lib/aarch64-linux-gnu/libz.so.1",
        )
        if Path(p).exists()
    )
    shutil.copy2(carried, bundle / "_internal" / carried.name)
    return bundle


def test_depends_names_the_packages_of_what_the_bundle_does_not_carry(tmp_path):
    bundle = _bundle(tmp_path)
    depends = deb.depends(bundle)
    assert "libc6" in depends  # /bin/true and libz need libc.so.6, which the bundle lacks
    assert "zlib1g" not in depends  # libz.so.1 is in the bundle
    assert depends[-1] == deb.EXTRA_DEPENDS[-1]


def test_package_installs_a_command_a_menu_entry_and_icons(tmp_path):
    package = deb.build(_bundle(tmp_path), tmp_path, "9.8.7")
    assert package.name.startswith("workbench_9.8.7_") and package.exists()
    info = subprocess.run(["dpkg-deb", "-f", str(package)], capture_output=True, text=True, check=True).stdout
    fields = dict(line.split(": ", 1) for line in info.splitlines() if ": " in line and not line.startswith(" "))
    assert fields["Package"] == "workbench" and fields["Version"] == "9.8.7"
    assert "libc6" in fields["Depends"] and "fonts-dejavu-core" in fields["Depends"]
    listing = subprocess.run(["dpkg-deb", "-c", str(package)], capture_output=True, text=True, check=True).stdout
    assert "./usr/bin/workbench -> /opt/workbench/workbench" in listing
    assert "./opt/workbench/workbench" in listing
    for size in deb.ICON_SIZES:
        assert f"./usr/share/icons/hicolor/{size}x{size}/apps/workbench.png" in listing
    unpacked = tmp_path / "unpacked"
    subprocess.run(["dpkg-deb", "-x", str(package), str(unpacked)], check=True)
    entry = (unpacked / "usr/share/applications/workbench.desktop").read_text()
    assert "Exec=workbench\n" in entry and "Icon=workbench" in entry
    if shutil.which("desktop-file-validate"):
        result = subprocess.run(
            ["desktop-file-validate", str(unpacked / "usr/share/applications/workbench.desktop")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0 and not result.stdout.strip(), result.stdout
    assert (unpacked / "opt/workbench/workbench").stat().st_mode & 0o755 == 0o755
