"""Every setting's default is written once, in config/settings.py: the code reads `settings.X`, never
`getattr(settings, "X", default)` with a second default that could disagree with the first, and every `settings.X`
the code reads is defined there (or by Django itself)."""

from __future__ import annotations

import ast
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
APPS = ["accounts", "api", "billing", "campaigns", "config", "console", "core", "deliverability", "leads", "llmproxy",
        "mcpserver", "replies", "sending", "webhooks"]


def _sources():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path, ast.parse(path.read_text(), str(path))


def _is_settings(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "settings"


def test_no_setting_is_read_with_a_second_default():
    found = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
                    and len(node.args) >= 3 and _is_settings(node.args[0])):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def test_every_setting_the_code_reads_is_defined():
    missing = set()
    for path, tree in _sources():
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _is_settings(node.value) and node.attr.isupper()
                    and not hasattr(settings, node.attr)):
                missing.add(f"{path.relative_to(ROOT)}: {node.attr}")
    assert sorted(missing) == []
