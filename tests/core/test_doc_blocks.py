"""Every code block of README.md and docs/*.md that a reader would run is run, as written, against a live
server (uvicorn serving the app on 127.0.0.1) with the demo workspace `seed_demo` makes.

- `sh`/`bash` blocks run in bash, in document order, with `BASE`/`BASE_URL` the live server, `KEY` the demo key
  (`var/demo-api-key` exists, as after `make run`; the examples' `owner@example.com` is an owner of that
  workspace) and the variables earlier blocks exported; the address
  `http://127.0.0.1:8000` of the examples is the live server's.  A `manage.py` command line runs in this process
  (the server's database), its arguments expanded by the same shell.  A line `export NAME=VALUE  # the FIELD
  from …` takes VALUE from the last response that carried FIELD (the id a reader copies from an earlier step;
  an id from another document's flow is the demo data's).
  Every JSON document a command prints must not be an error (`{"error": …}`, or a tool result with `isError`),
  unless the block is marked `<!-- doc-test: expect-error CODE -->`.
- `python` blocks run in a fresh interpreter with the same environment variables.
- A block that cannot run here is marked, on the line before its fence, `<!-- doc-test: skip: REASON -->`;
  JSON, plain and text blocks are responses and shapes, not commands.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.mcpserver.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUNNABLE = {"sh", "bash", "shell", "python", "py"}
EXAMPLE_BASE = "http://127.0.0.1:8000"
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
MARK = re.compile(r"<!--\s*doc-test:\s*(skip|expect-error)\s*:?\s*(.*?)\s*-->")
MANAGE = re.compile(r"^\s*(?:\.venv/bin/python|python3?)\s+manage\.py\s+([a-z_]+)(.*)$")
FROM_EARLIER = re.compile(r"^export (\w+)=(\S+)(\s+#\s*the `?(\w+)`? from .*)$")


@dataclass
class Block:
    doc: str
    line: int
    lang: str
    text: str
    mark: str | None = None
    reason: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(path: Path) -> list[Block]:
    lines = path.read_text().splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(rf"^{indent}```\s*$", lines[j]):
            j += 1
        body = "\n".join(line[len(indent):] if line.startswith(indent) else line for line in lines[i + 1:j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARK.search(lines[k]) if k >= 0 else None
        out.append(Block(path.name, i + 1, lang, body, mark.group(1) if mark else None,
                         mark.group(2) if mark else ""))
        i = j + 1
    return out


def _json_documents(text: str):
    decoder, i = json.JSONDecoder(), 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return
        try:
            doc, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        yield doc
        i = end


def _fields(node, into: dict):
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str | int) and not isinstance(value, bool):
                into[key] = str(value)
            _fields(value, into)
    elif isinstance(node, list):
        for value in node:
            _fields(value, into)


def _error_code(doc) -> str | None:
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("error"), dict):
        return doc["error"].get("code") or "error"
    result = doc.get("result")
    if isinstance(result, dict) and result.get("isError"):
        structured = result.get("structuredContent") or {}
        return (structured.get("error") or {}).get("code") or "tool error"
    return None


class Runner:
    """One reader following one document: a shell whose exported variables carry over between blocks."""

    def __init__(self, workdir: Path, env: dict[str, str], base: str):
        self.workdir, self.env, self.base = workdir, env, base
        self.state = workdir / f"state-{id(self)}.sh"
        self.state.write_text("")
        self.seen: dict[str, str] = {}

    def _bash(self, script: str, **extra: str) -> str:
        state = shlex.quote(str(self.state))
        wrapped = f"set -e -o pipefail\nsource {state}\n{script}\nexport -p > {state}\n"
        proc = subprocess.run(["bash", "-c", wrapped], cwd=self.workdir, env={**self.env, **extra},
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"exit {proc.returncode}\n{script}\nstdout: {proc.stdout}\nstderr: {proc.stderr}"
        return proc.stdout

    def _manage(self, name: str, args: str) -> str:
        """`manage.py NAME ARGS` in this process; ARGS expanded by the reader's shell (variables, quotes)."""
        expanded = self._bash('eval "set -- $DOC_ARGS"; printf "%s\\0" "$@"', DOC_ARGS=args)
        out = io.StringIO()
        call_command(name, *[a for a in expanded.split("\0") if a], stdout=out, stderr=out)
        return out.getvalue()

    def _resolve(self, line: str, block: Block) -> str:
        m = FROM_EARLIER.match(line)
        if not m:
            return line
        name, _, comment, field = m.groups()
        assert field in self.seen, f"{block.where}: no earlier response carried {field!r} for {name}"
        return f"export {name}={shlex.quote(self.seen[field])}{comment}"

    def run(self, block: Block) -> str:
        text = block.text.replace(EXAMPLE_BASE, self.base)
        if block.lang in ("python", "py"):
            proc = subprocess.run([sys.executable, "-c", text], cwd=self.workdir, env=self.env,
                                  capture_output=True, text=True, timeout=120)
            assert proc.returncode == 0, f"{block.where}\n{proc.stdout}\n{proc.stderr}"
            return proc.stdout
        output, pending = [], []
        lines = text.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            manage = MANAGE.match(line)
            if manage:
                if pending:
                    output.append(self._bash("\n".join(pending)))
                    pending = []
                args = re.sub(r"\s+#.*$", "", manage.group(2))
                output.append(self._manage(manage.group(1), args))
            else:
                pending.append(self._resolve(line, block))
            i += 1
        if pending:
            output.append(self._bash("\n".join(pending)))
        return "".join(output)

    def check(self, block: Block, printed: str):
        expected = block.reason.split()[0] if block.mark == "expect-error" else None
        codes = []
        for doc in _json_documents(printed):
            _fields(doc, self.seen)
            codes.append(_error_code(doc))
        if expected:
            assert expected in codes, f"{block.where}: expected error {expected}, got {codes}\n{printed}"
        else:
            assert not any(codes), f"{block.where}: error {codes}\n{printed}"


def test_every_runnable_block_is_run_or_says_why_not():
    unmarked_placeholders = []  # "…" stands for something the reader fills in: such a block cannot run
    for path in DOCS:
        for block in blocks(path):
            if block.lang not in RUNNABLE:
                continue
            if block.mark == "skip":
                assert block.reason, f"{block.where}: a skip marker needs a reason"
                continue
            for line in block.text.splitlines():
                code = line.split("#", 1)[0] if block.lang not in ("python", "py") else line
                if "…" in code:
                    unmarked_placeholders.append(f"{block.where}: {line.strip()}")
    assert unmarked_placeholders == []


def _blocks_not_run_here():
    return [b for path in DOCS for b in blocks(path) if b.lang in RUNNABLE and b.mark == "skip"]


@pytest.mark.parametrize("block", _blocks_not_run_here(), ids=lambda b: b.where)
def test_a_block_that_cannot_run_here_is_reported_with_its_reason(block):
    pytest.skip(f"{block.where} not run: {block.reason}")


@pytest.fixture
def doc_env(settings, transactional_db, tmp_path):
    settings.VERIFIER_NAMESERVERS = ["127.0.0.1:9"]  # no DNS here: verify_email answers at once (free)
    settings.VERIFIER_TIMEOUT_SECONDS = 1
    from accounts.models import Membership
    from accounts.services import user_get_or_create
    from campaigns.models import Campaign
    from console.management.commands.seed_demo import demo_workspace

    call_command("seed_demo", "--quiet")
    key = (Path(settings.DATA_DIR) / "demo-api-key").read_text().strip()
    workspace = demo_workspace()
    Membership.objects.create(user=user_get_or_create(email="owner@example.com"), workspace=workspace, role="owner")
    campaign = Campaign.objects.filter(workspace=workspace).order_by("created_at").first()
    (tmp_path / "var").mkdir(exist_ok=True)
    (tmp_path / "var" / "demo-api-key").write_text(key)
    with LiveServer() as live:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "PYTEST"))}
        env.update(BASE=live.base, BASE_URL=live.base, KEY=key, PYTHONPATH=str(ROOT))
        yield tmp_path, env, live.base, {"campaign_id": str(campaign.pk)}


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_the_blocks_of_each_document_run(path, doc_env):
    workdir, env, base, demo_ids = doc_env
    runner = Runner(workdir, env, base)
    runner.seen.update(demo_ids)  # an id a document takes from another flow: the demo data's
    ran = 0
    for block in blocks(path):
        if block.lang not in RUNNABLE or block.mark == "skip":
            continue
        runner.check(block, runner.run(block))
        ran += 1
    if path.name in ("README.md", "mcp.md", "leads.md", "llm.md", "campaigns.md"):
        assert ran, f"{path.name}: no block ran"


def test_the_requests_seed_demo_suggests_work_as_printed(transactional_db, settings):
    """`make run` prints seed_demo's output: every "POST /v1/<verb> with {json}" in it is a valid request."""
    from tests.conftest import Api

    out = io.StringIO()
    call_command("seed_demo", stdout=out)
    text = out.getvalue()
    key = (Path(settings.DATA_DIR) / "demo-api-key").read_text().strip()
    api, decoder, tried = Api(key), json.JSONDecoder(), []
    for m in re.finditer(r"POST (/v1/\w+) with ", text):
        body, _ = decoder.raw_decode(text, m.end())
        resp = api.post(m.group(1), body)
        assert resp.status_code == 200, (m.group(1), body, resp.json())
        tried.append(m.group(1))
    assert {"/v1/find_leads", "/v1/find_intent"} <= set(tried)


def _server_tools(settings) -> set[str]:
    from mcpserver.tools import list_tools

    settings.MCP_INCLUDE_TEST_VERBS = False
    return {tool.name for tool in list_tools()}


def test_the_readme_names_exactly_the_tools_the_server_lists(settings):
    text = (ROOT / "README.md").read_text()
    sentence = text[text.index("Tools: `"):text.index(". They are generated from")]
    assert set(re.findall(r"`(\w+)`", sentence)) == _server_tools(settings)


def test_the_mcp_page_maps_every_tool_to_its_route(settings):
    text = (ROOT / "docs" / "mcp.md").read_text()
    table = text[text.index("| tool | REST route |"):text.index("A tool call runs through")]
    first_column = " ".join(row.split("|")[1] for row in table.splitlines()[2:] if row.startswith("|"))
    assert set(re.findall(r"`(\w+)`", first_column)) == _server_tools(settings)
