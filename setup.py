"""Builds the Python package `feedline` with CMake: the extension module python/src/module.cpp on top of the
C++ library, beside the package's Python files in python/feedline/.

The CMake build it uses, first found:
- FEEDLINE_BUILD_DIR, when set: that build folder (configured already, or configured here);
- build/, when `scripts/build.sh` made it and it builds the Python module (only the module's target is built,
  so nothing else of that folder changes);
- build-pip/, configured here without tests or benchmarks.
The module is built for the interpreter running this (sys.executable), which must import torch.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def cmake_build_dir():
    """(folder, whether it is an existing build to take as it is)."""
    if os.environ.get("FEEDLINE_BUILD_DIR"):
        given = pathlib.Path(os.environ["FEEDLINE_BUILD_DIR"])
        return given, (given / "CMakeCache.txt").exists()
    main = ROOT / "build"
    for rules in (main / "build.ninja", main / "Makefile"):
        if rules.exists() and "feedline_python" in rules.read_text(errors="replace"):
            return main, True
    return ROOT / "build-pip", False


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build, existing = cmake_build_dir()
        if not existing:
            generator = ["-G", "Ninja"] if shutil.which("ninja") and not (build / "CMakeCache.txt").exists() else []
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *generator, "-DCMAKE_BUILD_TYPE=Release",
                            "-DFEEDLINE_BUILD_TESTS=OFF", "-DFEEDLINE_BUILD_BENCHMARKS=OFF",
                            "-DFEEDLINE_BUILD_PYTHON=ON", f"-DFEEDLINE_PYTHON={sys.executable}"], check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "feedline_python", "-j", jobs], check=True)
        module = build / "python" / "feedline" / ("_feedline" + sysconfig.get_config_var("EXT_SUFFIX"))
        if not module.exists():
            raise RuntimeError(f"feedline: the CMake build in {build} made no {module.name} for {sys.executable} "
                               "(it was configured for another Python: set FEEDLINE_BUILD_DIR to a new folder)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module, target)


setup(
    packages=["feedline"],
    package_dir={"feedline": "python/feedline"},
    package_data={"feedline": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("feedline._feedline", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip/setuptools"}},
    zip_safe=False,
)
