"""Build the one-folder app bundle with PyInstaller, and on Debian/Ubuntu a .deb from it.

    python installer/build.py             # dist/workbench/ (and dist/workbench.app on macOS)
    python installer/build.py --package   # and this system's installer, from that bundle:
        Linux:   dist/workbench_VERSION_ARCH.deb      (dpkg-deb; installer/deb.py)
        Windows: dist/workbench-VERSION-setup.exe     (Inno Setup's iscc; installer/windows/workbench.iss)
        macOS:   dist/workbench-VERSION.dmg           (ad-hoc signed; installer/macos/README.md)

Needs the project installed with its drivers and PyInstaller: pip install -e '.[all,installer]'.
Prints the bundle's size and its largest parts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "installer" / "workbench.spec"
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="where the bundle goes (default: dist/)")
    parser.add_argument(
        "--package",
        "--deb",
        action="store_true",
        help="also build this system's installer (.deb, Inno Setup .exe or .dmg)",
    )
    parser.add_argument("--no-build", action="store_true", help="package the bundle already in --dist")
    args = parser.parse_args(argv)
    dist = args.dist.resolve()
    bundle = dist / "workbench"
    if not args.no_build:
        build_bundle(dist)
        shrink_icu(bundle)
    if not bundle.is_dir():
        raise SystemExit(f"build.py: no bundle in {bundle}; build it first (without --no-build)")
    report_size(bundle)
    if args.package:
        started = time.monotonic()
        package = build_package(bundle, dist, version())
        print(f"package: {package} ({package.stat().st_size / 1e6:.1f} MB, {time.monotonic() - started:.0f} s)")
    return 0


def build_package(bundle: Path, dist: Path, number: str) -> Path:
    if sys.platform == "win32":
        iscc = shutil.which("iscc") or r"C:\Program Files (x86)\Inno Setup 6\ISCC.exe"
        if not Path(iscc).exists():
            raise SystemExit("build.py --package: Inno Setup's iscc was not found (choco install innosetup)")
        subprocess.run(
            [iscc, f"/DAppVersion={number}", str(ROOT / "installer" / "windows" / "workbench.iss")], check=True
        )
        return dist / f"workbench-{number}-setup.exe"
    if sys.platform == "darwin":
        app = dist / "workbench.app"
        # Ad-hoc signature: Apple Silicon refuses unsigned code. Distribution needs a Developer ID
        # signature and notarization instead (installer/macos/README.md).
        subprocess.run(["codesign", "--force", "--deep", "--sign", "-", str(app)], check=True)
        image = dist / f"workbench-{number}.dmg"
        subprocess.run(
            [
                "hdiutil",
                "create",
                "-volname",
                "workbench",
                "-srcfolder",
                str(app),
                "-ov",
                "-format",
                "UDZO",
                str(image),
            ],
            check=True,
        )
        return image
    from installer import deb

    return deb.build(bundle, dist, number)


def version() -> str:
    from workbench import __version__

    return __version__


def build_bundle(dist: Path) -> None:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        raise SystemExit("build.py: PyInstaller is not installed; run: pip install -e '.[all,installer]'") from None
    work = ROOT / "build" / "pyinstaller"
    started = time.monotonic()
    command = [
        sys.executable,
        "-m",
        "PyInstaller",
        "--noconfirm",
        "--log-level",
        "WARN",
        "--distpath",
        str(dist),
        "--workpath",
        str(work),
        str(SPEC),
    ]
    print("build.py:", " ".join(command), flush=True)
    subprocess.run(command, check=True, cwd=ROOT)
    print(f"bundle built in {time.monotonic() - started:.0f} s", flush=True)


def shrink_icu(bundle: Path) -> None:
    """Linux: Qt's ICU data down to what an English UI uses (installer/icu_data.py)."""
    from installer import icu_data

    for library in bundle.glob("_internal/PySide6/Qt/lib/libicudata.so.*"):
        sizes = icu_data.trim(library)
        if sizes is None:
            print("ICU data kept whole: no C compiler (cc) to rebuild it with", flush=True)
        else:
            print(f"ICU data: {sizes[0] / 1e6:.1f} MB -> {sizes[1] / 1e6:.1f} MB", flush=True)


def report_size(bundle: Path, top: int = 8) -> int:
    """Print the bundle's size and its largest parts; returns the size in bytes."""
    sizes: dict[str, int] = {}
    total = files = 0
    for path in bundle.rglob("*"):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            total += size
            files += 1
            part = path.relative_to(bundle).parts
            # Group by the first two levels below _internal (e.g. PySide6/Qt), else by file.
            key = "/".join(part[:3] if part[0] == "_internal" and len(part) > 3 else part)
            sizes[key] = sizes.get(key, 0) + size
    print(f"bundle: {bundle} — {total / 1e6:.1f} MB unpacked in {files} files (aim: under 120 MB)")
    for key, size in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {size / 1e6:7.1f} MB  {key}")
    return total


if __name__ == "__main__":
    os.chdir(ROOT)
    raise SystemExit(main())
