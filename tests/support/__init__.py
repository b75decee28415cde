"""Helpers shared by tests of several folders: `from support.backbones import tiny_backbone`.

pytest's default "prepend" import mode puts tests/ (the folder of tests/conftest.py; the test
folders have no __init__.py) on sys.path before any test module is imported, so `support` is
importable from every test folder, also when one test file runs alone.
"""
