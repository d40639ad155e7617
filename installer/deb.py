"""Turn the PyInstaller bundle into a .deb: /opt/workbench, a `workbench` command, a menu entry and icons.

The package depends on the Debian packages that hold the system libraries the bundle links to but
does not carry (OpenGL/EGL, libc …): found with readelf and `dpkg -S` on the build machine, as
dpkg-shlibdeps would, so the list follows whatever PyInstaller left out. No maintainer scripts:
the desktop-file and icon-cache triggers of Debian's own packages pick the new files up.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICONS = ROOT / "resources" / "icons"
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
NAME = "workbench"
# Not linked, but needed at run time: Qt draws no text without a font.
EXTRA_DEPENDS = ["fonts-dejavu-core | fonts-liberation2 | fonts-noto-core"]
# Libraries only the Wayland platform plugin links, which a build machine without a desktop may lack:
# their Debian packages by name, since `dpkg -S` can only name what is installed.
KNOWN_PACKAGES = {
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}
# What the bundle can use when present: the ODBC drivers for MariaDB and PostgreSQL, and a password store.
SUGGESTS = ["odbc-mariadb", "odbc-postgresql", "gnome-keyring | kwalletmanager"]
DESKTOP_ENTRY = """\
[Desktop Entry]
Type=Application
Name=workbench
GenericName=Work queue
Comment=Work a queue of records in a shared database table without stepping on each other
Exec=workbench
Icon=workbench
Terminal=false
Categories=Office;Database;
Keywords=queue;lock;helpdesk;database;
StartupWMClass=workbench
Actions=Supervisor;

[Desktop Action Supervisor]
Name=Supervisor console
Exec=workbench --supervisor
"""


def build(bundle: Path, out_dir: Path, version: str) -> Path:
    """Build DIR/workbench_VERSION_ARCH.deb from the bundle folder; returns its path."""
    if shutil.which("dpkg-deb") is None:
        raise SystemExit("build.py --deb: dpkg-deb is not installed (a Debian or Ubuntu machine is needed)")
    arch = subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True, text=True).stdout.strip()
    staging = ROOT / "build" / "deb"
    shutil.rmtree(staging, ignore_errors=True)
    tree = staging / f"{NAME}_{version}_{arch}"
    opt = tree / "opt" / NAME
    shutil.copytree(bundle, opt, symlinks=True)
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "bin" / NAME).symlink_to(f"/opt/{NAME}/{NAME}")
    applications = tree / "usr" / "share" / "applications"
    applications.mkdir(parents=True)
    (applications / f"{NAME}.desktop").write_text(DESKTOP_ENTRY, encoding="utf-8")
    for size in ICON_SIZES:
        target = tree / "usr" / "share" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{NAME}.png"
        target.parent.mkdir(parents=True)
        shutil.copy2(ICONS / f"workbench-{size}.png", target)
    scalable = tree / "usr" / "share" / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy2(ICONS / "workbench.svg", scalable / f"{NAME}.svg")
    doc = tree / "usr" / "share" / "doc" / NAME
    doc.mkdir(parents=True)
    shutil.copy2(ROOT / "LICENSE", doc / "copyright")
    control = tree / "DEBIAN"
    control.mkdir()
    (control / "control").write_text(control_text(version, arch, depends(opt), installed_kb(tree)), encoding="utf-8")
    for path in tree.rglob("*"):  # dpkg wants 0755 directories and no group/other write bits
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o022 | (0o755 if path.is_dir() else 0))
    package = out_dir / f"{NAME}_{version}_{arch}.deb"
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zxz", "-z3", "--build", str(tree), str(package)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return package


def control_text(version: str, arch: str, depends_on: list[str], size_kb: int) -> str:
    return (
        f"Package: {NAME}\nVersion: {version}\nArchitecture: {arch}\nSection: utils\nPriority: optional\n"
        f"Maintainer: workbench developers <workbench@example.org>\nInstalled-Size: {size_kb}\n"
        f"Depends: {', '.join(depends_on)}\nSuggests: {', '.join(SUGGESTS)}\n"
        "Description: work a queue of records in a shared database table\n"
        " workbench hands each operator one record at a time, locked under their name in the\n"
        " database (SQLite, PostgreSQL, SQL Server, MariaDB/MySQL), with an edit form, a fenced\n"
        " Complete, lock expiry on the database clock, a resume panel and a supervisor console.\n"
    )


def installed_kb(tree: Path) -> int:
    return sum(p.stat().st_size for p in tree.rglob("*") if p.is_file() and not p.is_symlink()) // 1024 + 1


def depends(bundle: Path) -> list[str]:
    """The Debian packages holding the libraries the bundle's ELF files need and do not carry."""
    carried = {p.name for p in bundle.rglob("*.so*")}
    needed: set[str] = set()
    for path in bundle.rglob("*"):
        if path.is_file() and not path.is_symlink() and _is_elf(path):
            needed.update(_needed(path))
    system = sorted(needed - carried)
    locations = _ldconfig()
    packages: set[str] = set()
    missing = []
    for library in system:
        owner = _owner(locations.get(library)) or KNOWN_PACKAGES.get(library)
        if owner:
            packages.add(owner)
        else:
            missing.append(library)
    if missing:
        raise SystemExit(
            f"build.py --deb: no installed Debian package holds {', '.join(missing)}; "
            "install the libraries the bundle was built against"
        )
    return sorted(packages) + EXTRA_DEPENDS


def _is_elf(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"\x7fELF"


def _needed(path: Path) -> list[str]:
    result = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True, check=False)
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", result.stdout)


def _ldconfig() -> dict[str, str]:
    """{soname: path} of the machine's shared libraries (first of each, as the loader picks)."""
    found: dict[str, str] = {}
    output = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    for line in output.splitlines()[1:]:
        match = re.match(r"\s*(\S+) \([^)]*\) => (\S+)", line)
        # Skip the 32-bit copies a multilib machine also lists.
        if match and not re.search(r"/(lib32|libx32)/|i386|i686", match.group(2)):
            found.setdefault(match.group(1), match.group(2))
    return found


def _owner(path: str | None) -> str | None:
    """The package that installed `path` (tried as given, resolved, and across the /usr merge)."""
    if path is None:
        return None
    candidates = {path, os.path.realpath(path)}
    candidates |= {c.removeprefix("/usr") for c in list(candidates)} | {"/usr" + c for c in list(candidates)}
    for candidate in candidates:
        result = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True, check=False)
        if result.returncode == 0:
            return result.stdout.split(":", 1)[0].strip()
    return None
