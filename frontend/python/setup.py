"""The wheel's platform tag; pyproject.toml holds everything else.

scripts/build-wheel.sh builds pw's wheel from a copy of this directory
whose pw/_bin/ holds pw's native binaries: that wheel runs on this platform
only, whatever the Python, so it is tagged py3-none-<platform> (such as
py3-none-linux_x86_64). Without binaries (the editable install of
scripts/setup.sh) the package is pure Python, py3-none-any."""

import os
import sysconfig

from setuptools import setup

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pw", "_bin")
native = os.path.isdir(BIN) and bool(os.listdir(BIN))

setup(options={"bdist_wheel": {"plat_name": sysconfig.get_platform()}} if native else {})
