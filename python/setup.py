"""setuptools entry for pip: the package soadyn and its cffi extension, built by
soadyn/_build.py:make_ffibuilder (which says where libsoadyn is looked for)."""
from setuptools import setup

setup(packages=["soadyn"], package_data={"soadyn": []}, cffi_modules=["soadyn/_build.py:make_ffibuilder"],
      zip_safe=False)
