"""setuptools entry for pip: the package soadyn and its two extensions, the cffi one built by
soadyn/_build.py:make_ffibuilder (which says where libsoadyn is looked for) and soadyn._fast by
soadyn/_build.py:fast_extension."""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "soadyn"))
from _build import fast_extension  # noqa: E402

setup(packages=["soadyn"], package_data={"soadyn": []}, cffi_modules=["soadyn/_build.py:make_ffibuilder"],
      ext_modules=[fast_extension()], zip_safe=False)
